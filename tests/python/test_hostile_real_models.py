"""Hostile edits of the real models (../shared/models) and single-op models
the CPU refuses, through the real runtime with and without the delegate
(issue 20). Each case must give the CPU's answer with most of the model
still on the GPU (one node, or the few nodes that depend on it, declined
with a reason), or be refused by the runtime as the CPU refuses it: no
model the CPU refuses runs on the GPU, no whole-model failure because of one
declinable node, and every node left on the CPU is named in a warning."""

from __future__ import annotations

import re
import struct

import flatbuffers
import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema

from gles_testing import ModelBuilder  # puts tools/ on the path
import model_catalog  # noqa: E402
from isolation import run_isolated
from model_check import parse_results
from model_surgery import Surgery

# Real models run at the tolerance of tests/python/test_models.py, on random
# inputs in the range they expect; fp16 storage through a whole real model
# is judged by relative L2 of the raw outputs (test_models.py judges fp16 by
# scores, masks and boxes instead).
REAL_TOLERANCE = 1e-4
REAL_FP16_TOLERANCE = 0.1


def real(model: bytes, input_range, **extra) -> dict:
    return {"model": model, "tolerance": REAL_TOLERANCE, "input_range": input_range,
            "fp16_tolerance": REAL_FP16_TOLERANCE, **extra}


def transpose_conv_reference(model: bytes) -> bytes:
    """selfie_segmentation as LiteRT's CPU runs it (model_catalog says why)."""
    parsed = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(model, 0))
    model_catalog._replace_transpose_conv_bias(parsed)
    builder = flatbuffers.Builder(len(model) + 4096)
    builder.Finish(parsed.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def palm_input_with_a_buffer():
    """Finding 1: the graph input carries constant data (0.25 everywhere);
    the application still sets it, and the CPU reads what it sets."""
    s = Surgery("palm_detection_full.tflite")
    index = int(s.graph.inputs[0])
    s.give_buffer(index, np.full(list(s.graph.tensors[index].shape), 0.25, np.float32))
    return real(s.build(), (0.0, 1.0))


def face_dequantize_output_declared_short():
    """Finding 2a: a DEQUANTIZE output (a conv bias) declared [3] while its
    input holds 36 values; TFLite resizes it to [36] at Prepare."""
    s = Surgery("face_detection_short_range.tflite")
    s.set_shape(s.tensor_index("conv2d_4/Bias_dequantize"), [3])
    return real(s.build(), (-1.0, 1.0))


def face_constant_longer_than_its_shape():
    """A float16 weight constant whose buffer holds more values than its
    shape: TFLite accepts it (a buffer at least as long as the shape) and
    reads the first values."""
    s = Surgery("face_detection_short_range.tflite")
    dequantize = s.operators("DEQUANTIZE")[3]
    source = int(s.graph.operators[dequantize].inputs[0])
    data = s.buffer_data(source)
    s.give_buffer(source, np.frombuffer(data + data[:64], np.uint8))
    return real(s.build(), (-1.0, 1.0))


def selfie_with_one_declinable_node():
    """Finding 2b: one node in the middle declined (its declared output
    channels are wrong); Convolution2DTransposeBias, which the CPU has no
    kernel for, must stay on the GPU with the DEQUANTIZEs of its weights."""
    s = Surgery("selfie_segmentation.tflite")
    output = int(s.graph.operators[150].outputs[0])
    shape = list(s.graph.tensors[output].shape)
    s.set_shape(output, shape[:-1] + [shape[-1] + 1])
    model = s.build()
    # The mask's probabilities (tiny on random inputs, where relative L2
    # means little) by their largest difference: 1e-4 fp32, 2e-2 fp16.
    return real(model, (0.0, 1.0), cpu_model=transpose_conv_reference(model),
                absolute=True, fp16_tolerance=2e-2, fp16_absolute=True)


def palm_prelu_output_float16():
    """A PRELU inside palm detection whose output is declared float16."""
    s = Surgery("palm_detection_full.tflite")
    prelu = s.operators("PRELU")[5]
    s.set_type(int(s.graph.operators[prelu].outputs[0]), schema.TensorType.FLOAT16)
    return real(s.build(), (0.0, 1.0))


def conv(bias_index=None, inputs=3):
    rng = np.random.default_rng(3)
    b = ModelBuilder()
    x = b.add_input([1, 6, 6, 3])
    w = b.add_const(rng.uniform(-1, 1, [4, 3, 3, 3]).astype(np.float32))
    bias = b.add_const(rng.uniform(-1, 1, [4]).astype(np.float32))
    o = b.add_tensor([1, 6, 6, 4])
    operands = [x, w, bias if bias_index is None else bias_index][:inputs]
    b.add_op("CONV_2D", operands, [o], {"padding": "SAME", "stride_w": 1, "stride_h": 1})
    return b.build()


def depthwise(multiplier, in_channels=4, out_channels=8):
    rng = np.random.default_rng(4)
    b = ModelBuilder()
    x = b.add_input([1, 5, 5, in_channels])
    w = b.add_const(rng.uniform(-1, 1, [1, 3, 3, out_channels]).astype(np.float32))
    bias = b.add_const(rng.uniform(-1, 1, [out_channels]).astype(np.float32))
    o = b.add_tensor([1, 5, 5, out_channels])
    b.add_op("DEPTHWISE_CONV_2D", [x, w, bias], [o],
             {"padding": "SAME", "stride_w": 1, "stride_h": 1, "depth_multiplier": multiplier})
    return b.build()


def prelu_output_float16():
    b = ModelBuilder()
    x = b.add_input([1, 4, 4, 3])
    alpha = b.add_const(np.array([0.1, 0.2, 0.3], np.float32))
    o = b.add_tensor([1, 4, 4, 3], np.float16)
    b.add_op("PRELU", [x, alpha], [o])
    return b.build()


def max_unpooling(padding):
    b = ModelBuilder()
    x = b.add_input([1, 3, 4, 2])
    indices = b.add_input([1, 3, 4, 2])
    o = b.add_tensor([1, 6, 8, 2])
    b.add_op("CUSTOM", [x, indices], [o], custom_code="MaxUnpooling2D",
             custom_options=struct.pack("<6i4i", padding, 2, 2, 2, 2, 0, 0, 0, 0, 0))
    return b.build()


AGREE = {"agree"}
REJECTED = {"rejected"}
DECLINED_OR_REJECTED = {"declined", "rejected"}

# name -> (factory, acceptable outcomes, least nodes delegated)
CASES = {
    "palm_input_with_a_buffer": (palm_input_with_a_buffer, AGREE, 250),
    "face_dequantize_output_declared_short": (face_dequantize_output_declared_short, AGREE, 120),
    "face_constant_longer_than_its_shape": (face_constant_longer_than_its_shape, AGREE, 150),
    "selfie_with_one_declinable_node": (selfie_with_one_declinable_node, AGREE, 150),
    "palm_prelu_output_float16": (palm_prelu_output_float16, AGREE | REJECTED, 0),
    "conv_bias_index_minus_one": (lambda: conv(bias_index=-1), REJECTED, 0),
    "conv_without_bias": (lambda: conv(inputs=2), DECLINED_OR_REJECTED | AGREE, 0),
    "depthwise_multiplier_disagrees_with_shapes": (lambda: depthwise(3), DECLINED_OR_REJECTED, 0),
    "depthwise_multiplier_zero": (lambda: depthwise(0), DECLINED_OR_REJECTED | AGREE, 0),
    "prelu_output_float16": (prelu_output_float16, DECLINED_OR_REJECTED, 0),
    # LiteRT has no CPU kernel for MediaPipe's MaxUnpooling2D: a model that
    # only loads because the delegate claims the op. Padding 9 is no
    # TfLitePadding value: the delegate must decline it, so the runtime
    # refuses the model as it does without the delegate.
    "max_unpooling_padding_9": (lambda: max_unpooling(9), REJECTED, 0),
}

CHILD = """
from test_hostile_real_models import CASES
from model_check import run_cases_and_print
run_cases_and_print([(name, factory) for name, (factory, _, _) in CASES.items()],
                    fp16={fp16})
"""


@pytest.fixture(scope="module", params=[False, True], ids=["fp32", "fp16"])
def results(request):
    result = run_isolated(CHILD.format(fp16=request.param), timeout=600)
    parsed, crashed_in = parse_results(result.stdout)
    assert crashed_in is None, f"the child died in case {crashed_in}:\n{result.stderr[-3000:]}"
    assert result.returncode == 0, result.stderr[-3000:]
    counts = {}
    for record in parsed.values():
        counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    print(f"\nhostile real models ({'fp16' if request.param else 'fp32'}): {len(parsed)} cases, outcomes {counts}")
    return parsed


def named_cpu_nodes(warnings: str) -> list[int]:
    """Node indices the delegate's WARNING lines name as staying on the CPU."""
    nodes = []
    for match in re.finditer(r"nodes? ((?:\d+(?:, )?)+)", warnings):
        nodes += [int(n) for n in match.group(1).split(", ") if n]
    return nodes


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_real_model_answers_as_the_cpu_or_is_refused_as_the_cpu_refuses(name, results):
    assert name in results, f"case {name} did not report"
    record = results[name]
    _, acceptable, least_delegated = CASES[name]
    assert record["outcome"] in acceptable, record
    if record["outcome"] == "agree":
        assert record["delegated"] >= least_delegated, record
        # Every node left on the CPU is named once, with its reason.
        named = named_cpu_nodes(record["warnings"])
        assert len(named) == len(set(named)), record["warnings"]
        assert len(named) == record["total"] - record["delegated"], \
            (record["total"], record["delegated"], record["warnings"])


MOBILENET_INT8_CHILD = """
import numpy as np
from ai_edge_litert import schema_py_generated as schema
from gles_testing import interpreter, make_delegate, stats
from model_surgery import Surgery
s = Surgery("mobilenet_v1_0.25_224.tflite")
s.set_type(int(s.graph.outputs[0]), schema.TensorType.INT8)
delegate = make_delegate({"log_level": "warning"})
interp = interpreter(s.build(), delegate)
interp.allocate_tensors()
print("delegated", stats(delegate)["nodes_delegated"], flush=True)
detail = interp.get_input_details()[0]
interp.set_tensor(detail["index"], np.full(detail["shape"], 0.5, np.float32))
interp.invoke()
print("invoked", flush=True)
"""

SOFTMAX_INT8_CHILD = """
import numpy as np
from gles_testing import ModelBuilder, interpreter
b = ModelBuilder()
x = b.add_input([1, 1001])
o = b.add_tensor([1, 1001], np.int8)
b.add_op("SOFTMAX", [x], [o], {"beta": 1.0})
interp = interpreter(b.build())
interp.allocate_tensors()
interp.set_tensor(0, np.full([1, 1001], 0.5, np.float32))
interp.invoke()
"""


def test_mobilenet_with_an_int8_output_is_the_runtimes_bug_not_ours():
    """Finding 5: MobileNet's output declared INT8. The delegate declines
    the SOFTMAX (its output type) and runs the rest; TFLite's CPU SOFTMAX
    then writes 1001 floats into the 1001-byte output, which may crash the
    process. The crash is TFLite's: its kernel alone, on the CPU alone, is
    seen writing past the end of the tensor by valgrind's memcheck."""
    import subprocess
    import sys

    import heap_check
    from isolation import HERE, REPO

    env = dict(__import__("os").environ)
    env["PYTHONPATH"] = f"{HERE}:{REPO / 'tools'}"
    run = subprocess.run([sys.executable, "-c", MOBILENET_INT8_CHILD], env=env, cwd=str(REPO),
                         text=True, capture_output=True, timeout=300)
    assert "SOFTMAX v1 cannot be handled by this delegate" in run.stderr, run.stderr[-3000:]
    # An int8 tensor runs in the float view only with quantization params.
    assert "output 0: a int8 tensor without quantization params" in run.stderr, \
        run.stderr[-3000:]
    assert "delegated 30" in run.stdout, (run.stdout, run.stderr[-3000:])
    if run.returncode == 0:
        return  # the overflow landed somewhere harmless this time
    assert heap_check.available(), "valgrind is needed to attribute the crash"
    checked = heap_check.memcheck(["-c", SOFTMAX_INT8_CHILD], env=env, cwd=str(REPO))
    assert any("Softmax" in error for error in checked["runtime_errors"]), checked
