"""docs/ops.md is generated from the kernel registry: the ops_table tool
prints every registered op with what its kernels declare, and
tools/gen_ops_doc.py renders it."""

import json
import subprocess
import sys

from gles_testing import REPO

OPS_TABLE = REPO / "build" / "ops_table"

ELEMENTWISE_OPS = {
    "ADD": 5, "SUB": 5, "MUL": 7, "DIV": 2, "MAXIMUM": 4, "MINIMUM": 4,
    "SQUARED_DIFFERENCE": 2, "POW": 1, "PRELU": 1, "LOGICAL_AND": 1, "RELU": 3,
    "RELU6": 3, "RELU_N1_TO_1": 1, "RELU_0_TO_1": 1, "LOGISTIC": 3, "TANH": 3,
    "EXP": 2, "SQRT": 1, "RSQRT": 2, "ABS": 5, "NEG": 1, "SQUARE": 1,
    "LEAKY_RELU": 2, "ELU": 1, "HARD_SWISH": 1, "DEQUANTIZE": 6,
}


def test_ops_table_lists_the_elementwise_ops_with_their_descriptions():
    lines = subprocess.run([str(OPS_TABLE)], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    table = {entry["op"]: entry["kernels"] for entry in map(json.loads, lines)}
    for op, max_version in ELEMENTWISE_OPS.items():
        assert op in table, f"{op} is not registered"
        kernel = table[op][0]
        assert kernel["max_version"] == max_version, (op, kernel)
        assert kernel["summary"] and kernel["declines"], (op, kernel)


def test_gen_ops_doc_renders_every_registered_op():
    text = subprocess.run([sys.executable, str(REPO / "tools" / "gen_ops_doc.py"),
                           "--stdout", "--ops-table", str(OPS_TABLE)],
                          check=True, capture_output=True, text=True).stdout
    ops = [json.loads(line)["op"] for line in subprocess.run(
        [str(OPS_TABLE)], check=True, capture_output=True, text=True).stdout.splitlines()]
    assert text.startswith("# Supported ops")
    for op in ops:
        assert f"| `{op}` |" in text, op


def test_every_kernel_is_described_with_its_versions():
    """No row of docs/ops.md says `?` or `(not described)`: every kernel
    states what it runs, what it declines and its newest version."""
    lines = subprocess.run([str(OPS_TABLE)], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    for entry in map(json.loads, lines):
        for kernel in entry["kernels"]:
            assert kernel["max_version"] > 0, (entry["op"], kernel["name"])
            assert kernel["summary"] and kernel["declines"], (entry["op"], kernel["name"])
    text = (REPO / "docs" / "ops.md").read_text()
    assert "(not described)" not in text and "| ? |" not in text


# The quantized forms the float view runs (issue 15): op -> the newest
# version, as TFLite's op_version.cc numbers the uint8/int8/hybrid forms.
QUANTIZED_OPS = {
    "ADD": 2, "SUB": 2, "MUL": 3, "CONV_2D": 5, "DEPTHWISE_CONV_2D": 6,
    "FULLY_CONNECTED": 12, "AVERAGE_POOL_2D": 2, "MAX_POOL_2D": 2, "CONCATENATION": 2,
    "RESHAPE": 1, "PAD": 2, "SOFTMAX": 2, "LOGISTIC": 2, "RELU": 2, "RELU6": 2,
    "MAXIMUM": 2, "MINIMUM": 2, "RESIZE_BILINEAR": 3, "STRIDED_SLICE": 2,
    "TRANSPOSE_CONV": 4, "PRELU": 1, "MEAN": 2, "HARD_SWISH": 1, "QUANTIZE": 2,
    "DEQUANTIZE": 5,
}


def test_ops_doc_shows_the_quantized_versions():
    lines = subprocess.run([str(OPS_TABLE)], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    table = {entry["op"]: entry for entry in map(json.loads, lines)}
    for op, newest in QUANTIZED_OPS.items():
        assert op in table, f"{op} is not registered"
        assert table[op]["quantized_max_version"] >= newest, (op, table[op])
    text = (REPO / "docs" / "ops.md").read_text()
    assert "| `CONV_2D` | 1-6 | 1-5 |" in text
    assert "| `LSTM` | 1-4 | no |" in text


def test_ops_doc_is_up_to_date():
    result = subprocess.run([sys.executable, str(REPO / "tools" / "gen_ops_doc.py"), "--check",
                             "--ops-table", str(OPS_TABLE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
