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
