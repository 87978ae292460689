"""Hostile and odd models through the real runtime, with and without the
delegate: every case must be declined with a reason (and run on the CPU),
rejected exactly as TFLite rejects it without the delegate, or delegated and
right. All cases run in one child process (a crash names the case, a hang
times out); each case's outcome is then checked here."""

import os
import subprocess
import sys

import numpy as np
import pytest

from gles_testing import ModelBuilder
from hostile_quant import ABORT_TFLITE, REFUSED_BY_TFLITE, RUN_BY_TFLITE
from isolation import HERE, REPO, run_isolated
from model_check import parse_results

SHAPE = [1, 4, 5, 3]


def unary(op, in_shape, dtype=np.float32, version=1, out_shape=None):
    b = ModelBuilder()
    x = b.add_input(in_shape, dtype)
    o = b.add_tensor(out_shape or in_shape, dtype)
    b.add_op(op, [x], [o], version=version)
    return b


def binary(op, shape_a, shape_b, dtype=np.float32, options=None, version=1, const_b=None):
    b = ModelBuilder()
    x = b.add_input(shape_a, dtype)
    y = b.add_const(const_b) if const_b is not None else b.add_input(shape_b, dtype)
    try:
        out = list(np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
    except ValueError:  # incompatible on purpose; TFLite must refuse it
        out = list(shape_a)
    o = b.add_tensor(out, dtype)
    b.add_op(op, [x, y], [o], options or {"fused_activation_function": "NONE"},
             version=version)
    return b


def dynamic_signature():
    b = unary("RELU", SHAPE)
    b._tensors[0].shapeSignature = [1, -1, -1, 3]
    b._tensors[1].shapeSignature = [1, -1, -1, 3]
    return b.build()


def graph_input_is_also_output():
    b = ModelBuilder()
    x = b.add_input(SHAPE)
    o = b.add_tensor(SHAPE)
    b.add_op("RELU", [x], [o])
    b.set_outputs([o, x])
    return b.build()


def same_tensor_twice():
    b = ModelBuilder()
    x = b.add_input(SHAPE)
    o = b.add_tensor(SHAPE)
    b.add_op("MUL", [x, x], [o], {"fused_activation_function": "NONE"})
    return b.build()


def give_data(b, index, value):
    """Gives tensor `index` a buffer of constant data: TFLite maps it
    read-only, whatever else the model says it is."""
    from ai_edge_litert import schema_py_generated as schema
    tensor = b._tensors[index]
    b._buffers.append(schema.BufferT())
    b._buffers[-1].data = np.frombuffer(
        np.full(tensor.shape, value, np.float32).tobytes(), np.uint8)
    tensor.buffer = len(b._buffers) - 1


def graph_input_with_constant_data(op):
    """A graph input that carries a buffer: the application still sets it
    and TFLite's CPU kernels read what it sets."""
    b = binary(op, SHAPE, SHAPE) if op in ("ADD", "MUL") else unary(op, SHAPE)
    give_data(b, 0, 0.25)
    return b.build()


def conv_input_with_constant_data():
    b = ModelBuilder()
    x = b.add_input([1, 6, 6, 3])
    w = b.add_const(np.random.default_rng(5).uniform(-1, 1, [4, 3, 3, 3]).astype(np.float32))
    bias = b.add_const(np.zeros(4, np.float32))
    o = b.add_tensor([1, 6, 6, 4])
    r = b.add_tensor([1, 6, 6, 4])
    b.add_op("CONV_2D", [x, w, bias], [o], {"padding": "SAME", "stride_w": 1, "stride_h": 1})
    b.add_op("RELU", [o], [r])
    give_data(b, x, 0.25)
    return b.build()


def graph_output_with_constant_data():
    b = unary("RELU", SHAPE)
    give_data(b, 1, 0.5)
    return b.build()


def variable_operand(write=False):
    """A variable tensor (state, zero until an op assigns it) read by ADD, or
    written by RELU as the graph output."""
    b = ModelBuilder()
    x = b.add_input(SHAPE)
    state = b.add_tensor(SHAPE)
    b._tensors[state].isVariable = True
    if write:
        b.add_op("RELU", [x], [state])
        b.set_outputs([state])
    else:
        o = b.add_tensor(SHAPE)
        b.add_op("ADD", [x, state], [o], {"fused_activation_function": "NONE"})
        b.set_outputs([o])
    return b.build()


def op_writes_its_own_input():
    b = ModelBuilder()
    x = b.add_input(SHAPE)
    b.add_op("RELU", [x], [x])
    b.set_outputs([x])
    return b.build()


def constant_without_data():
    """A 'constant' operand whose buffer is empty: TFLite treats it as a
    tensor nobody writes."""
    b = ModelBuilder()
    x = b.add_input(SHAPE)
    c = b._new_tensor([3], np.float32, "empty_const", "const", buffer=0)
    o = b.add_tensor(SHAPE)
    b.add_op("ADD", [x, c], [o], {"fused_activation_function": "NONE"})
    return b.build()


def constant_with_short_data():
    b = binary("ADD", SHAPE, [3], const_b=np.array([1.5, -2.5, 0.5], np.float32))
    b._tensors[1].shape = [7]  # declares 7 values, holds 3
    return b.build()


def missing_builtin_options():
    b = binary("ADD", SHAPE, SHAPE)
    b._operators[0].builtinOptions = None
    b._operators[0].builtinOptionsType = 0
    return b.build()


def input_index_out_of_range():
    b = binary("ADD", SHAPE, SHAPE)
    b._operators[0].inputs = [0, 57]
    return b.build()


def conv(stride=1, dilation=1, padding="SAME", in_shape=(1, 6, 6, 3), filter_shape=(4, 3, 3, 3)):
    rng = np.random.default_rng(1)
    b = ModelBuilder()
    x = b.add_input(list(in_shape))
    w = b.add_const(rng.uniform(-1, 1, filter_shape).astype(np.float32))
    bias = b.add_const(rng.uniform(-1, 1, filter_shape[0]).astype(np.float32))
    o = b.add_tensor([1, 6, 6, filter_shape[0]])
    b.add_op("CONV_2D", [x, w, bias], [o],
             {"padding": padding, "stride_w": stride, "stride_h": stride,
              "dilation_w_factor": dilation, "dilation_h_factor": dilation})
    return b.build()


def depthwise_dilated(dilation):
    rng = np.random.default_rng(2)
    b = ModelBuilder()
    x = b.add_input([1, 9, 1, 13])
    w = b.add_const(rng.uniform(-1, 1, [1, 5, 5, 13]).astype(np.float32))
    bias = b.add_const(rng.uniform(-1, 1, [13]).astype(np.float32))
    o = b.add_tensor([1, 9, 1, 13])
    b.add_op("DEPTHWISE_CONV_2D", [x, w, bias], [o],
             {"padding": "SAME", "stride_w": 1, "stride_h": 1, "depth_multiplier": 1,
              "dilation_w_factor": dilation, "dilation_h_factor": 1})
    return b.build()


def declared_output(op_builder, shape):
    """A model whose declared output shape is not what the op computes."""
    b = op_builder()
    b._tensors[len(b._tensors) - 1].shape = shape
    return b.build()


def pool(op, stride=1, size=2):
    b = ModelBuilder()
    x = b.add_input([1, 6, 6, 3])
    o = b.add_tensor([1, 3, 3, 3])
    b.add_op(op, [x], [o], {"padding": "VALID", "stride_w": stride, "stride_h": stride,
                            "filter_width": size, "filter_height": size})
    return b.build()


def concatenation(axis):
    b = ModelBuilder()
    x = b.add_input(SHAPE)
    y = b.add_input(SHAPE)
    o = b.add_tensor([1, 4, 5, 6])
    b.add_op("CONCATENATION", [x, y], [o], {"axis": axis})
    return b.build()


def _softmax_builder(beta, width=10):
    b = ModelBuilder()
    x = b.add_input([1, width])
    o = b.add_tensor([1, width])
    b.add_op("SOFTMAX", [x], [o], {"beta": beta})
    return b


def softmax(beta):
    return _softmax_builder(beta).build()


def reshape_to(new_shape):
    b = ModelBuilder()
    x = b.add_input(SHAPE)
    s = b.add_const(np.array(new_shape, np.int32))
    o = b.add_tensor([abs(d) for d in new_shape])
    b.add_op("RESHAPE", [x, s], [o])
    return b.build()


# Found by the long fuzz (seed 2) on the merged library; each failed before
# its fix.
def relu_after(b, declared_shape=None):
    """The model's last op writes an intermediate that a RELU reads (with a
    declared shape of the intermediate, if given)."""
    middle = len(b._tensors) - 1
    if declared_shape is not None:  # declared on both: the RELU itself is sound
        b._tensors[middle].shape = list(declared_shape)
    out = b.add_tensor(list(b._tensors[middle].shape))
    b.add_op("RELU", [middle], [out])
    b.set_outputs([out])
    return b.build()


def scalar_mul_input_with_constant_data():
    """Case 14229: MUL of two one-element graph inputs, one carrying a buffer."""
    b = binary("MUL", [1, 1, 1, 1], [1, 1, 1, 1])
    give_data(b, 0, 0.25)
    return b.build()


def transpose_conv(stride):
    rng = np.random.default_rng(4)
    b = ModelBuilder()
    shape = b.add_const(np.array([1, 1, 1, 3], np.int32))
    w = b.add_const(rng.uniform(-1, 1, [3, 1, 1, 2]).astype(np.float32))
    x = b.add_input([1, 1, 1, 2])
    o = b.add_tensor([1, 1, 1, 3])
    b.add_op("TRANSPOSE_CONV", [shape, w, x], [o],
             {"padding": "VALID", "stride_w": stride, "stride_h": stride})
    return b.build()


def mediapipe_transpose_conv(mutate):
    """MediaPipe's Convolution2DTransposeBias as the fuzzer builds it, with the
    CPU stand-in (TRANSPOSE_CONV) as reference."""
    import fuzz_models
    spec = fuzz_models.transpose_conv_bias(np.random.default_rng(3))
    mutate(spec)
    model = spec.build()
    return {"model": model, "cpu_model": fuzz_models.cpu_model(spec, model)}


def strided_slice_with_computed_strides():
    """Seed 3, case 614: STRIDED_SLICE whose strides are a graph input (TFLite
    sizes its output at invoke), read by a RELU."""
    b = ModelBuilder()
    x = b.add_input([1, 2, 5, 8])
    begin = b.add_const(np.array([0, 0, -1, 1], np.int32))
    end = b.add_const(np.array([1, 9, 0, 9], np.int32))
    strides = b.add_input([4], np.int32)
    o = b.add_tensor([1, 1, 5, 7])
    b.add_op("STRIDED_SLICE", [x, begin, end, strides], [o],
             {"begin_mask": 0, "end_mask": 6, "shrink_axis_mask": 0})
    return relu_after(b)


def _input_with_data_and_tail(spec):  # case 5471
    spec.tail = True
    spec.data_on.append(("input", 0))


def _stride_int32_max(spec):  # case 4728
    # One input row: any stride_h then fits the declared output height, so
    # only the stride's range can decline it.
    padding, stride_w, _ = np.frombuffer(spec.custom_options, np.int32).tolist()
    spec.inputs[0].shape[1] = 1
    spec.output_shapes[0][1] = 1 if padding == 1 else spec.inputs[1].shape[1]
    spec.custom_options = np.array([padding, stride_w, (1 << 31) - 1], np.int32).tobytes()


OK_OR_DECLINED = {"agree", "declined"}
DECLINED = {"declined"}
DECLINED_OR_REJECTED = {"declined", "rejected"}
REJECTED = {"rejected"}
ANY_ACCEPTABLE = {"agree", "declined", "rejected"}

# name -> (model factory, acceptable outcomes)
CASES = {
    "rank5_add": (lambda: binary("ADD", [1, 2, 2, 2, 3], [1, 2, 2, 2, 3]).build(), DECLINED),
    "rank6_mul": (lambda: binary("MUL", [1, 1, 2, 2, 2, 3], [1, 1, 2, 2, 2, 3]).build(),
                  DECLINED_OR_REJECTED),
    "rank0_relu": (lambda: unary("RELU", []).build(), OK_OR_DECLINED),
    "rank0_add": (lambda: binary("ADD", [], []).build(), OK_OR_DECLINED),
    "rank1_logistic": (lambda: unary("LOGISTIC", [7]).build(), OK_OR_DECLINED),
    "zero_batch_relu": (lambda: unary("RELU", [0, 4, 5, 3]).build(), DECLINED),
    "zero_channels_add": (lambda: binary("ADD", [1, 4, 5, 0], [1, 4, 5, 0]).build(),
                          DECLINED_OR_REJECTED),
    "int32_add": (lambda: binary("ADD", SHAPE, SHAPE, np.int32).build(), DECLINED),
    "int32_mul": (lambda: binary("MUL", SHAPE, SHAPE, np.int32).build(), DECLINED),
    "int64_sub": (lambda: binary("SUB", SHAPE, SHAPE, np.int64).build(), DECLINED_OR_REJECTED),
    "float16_relu": (lambda: unary("RELU", SHAPE, np.float16).build(), DECLINED_OR_REJECTED),
    "int8_relu_without_quantization": (lambda: unary("RELU", SHAPE, np.int8).build(),
                                       DECLINED_OR_REJECTED),
    "dynamic_shape_signature": (dynamic_signature, DECLINED),
    "graph_input_is_also_output": (graph_input_is_also_output, OK_OR_DECLINED),
    "same_tensor_twice": (same_tensor_twice, OK_OR_DECLINED),
    "op_writes_its_own_input": (op_writes_its_own_input, ANY_ACCEPTABLE),
    # A graph input that carries constant data: whatever the application
    # sets must be what the GPU computes on, or the node is declined.
    "graph_input_with_constant_data_relu": (
        lambda: graph_input_with_constant_data("RELU"), ANY_ACCEPTABLE),
    "graph_input_with_constant_data_add": (
        lambda: graph_input_with_constant_data("ADD"), ANY_ACCEPTABLE),
    "graph_input_with_constant_data_conv": (conv_input_with_constant_data, OK_OR_DECLINED),
    "graph_output_with_constant_data": (graph_output_with_constant_data, DECLINED_OR_REJECTED),
    "variable_tensor_read": (lambda: variable_operand(write=False), ANY_ACCEPTABLE),
    "variable_tensor_written": (lambda: variable_operand(write=True), ANY_ACCEPTABLE),
    "constant_without_data": (constant_without_data, ANY_ACCEPTABLE),
    "constant_with_short_data": (constant_with_short_data, DECLINED_OR_REJECTED),
    "missing_builtin_options": (missing_builtin_options, ANY_ACCEPTABLE),
    "input_index_out_of_range": (input_index_out_of_range, REJECTED),
    "broadcast_mismatch": (lambda: binary("ADD", [1, 2, 3, 4], [1, 2, 3, 5]).build(),
                           REJECTED),
    "fused_activation_out_of_range": (
        # TFLite's parser maps an unknown activation to none, on both paths.
        lambda: binary("ADD", SHAPE, SHAPE, options={"fused_activation_function": 99}).build(),
        ANY_ACCEPTABLE),
    "fused_activation_sign_bit": (
        lambda: binary("MUL", SHAPE, SHAPE, options={"fused_activation_function": 5}).build(),
        ANY_ACCEPTABLE),
    "add_version_next": (lambda: binary("ADD", SHAPE, SHAPE, version=6).build(),
                         DECLINED_OR_REJECTED),
    "relu_version_99": (lambda: unary("RELU", SHAPE, version=99).build(), REJECTED),
    "mul_version_0": (lambda: binary("MUL", SHAPE, SHAPE, version=0).build(), ANY_ACCEPTABLE),
    "conv_stride_0": (lambda: conv(stride=0), DECLINED_OR_REJECTED),
    "conv_dilation_0": (lambda: conv(dilation=0), DECLINED_OR_REJECTED),
    "conv_stride_huge": (lambda: conv(stride=1 << 30), ANY_ACCEPTABLE),
    "conv_filter_larger_than_input": (
        lambda: conv(padding="VALID", filter_shape=(4, 9, 9, 3)), DECLINED_OR_REJECTED),
    "conv_channel_mismatch": (lambda: conv(filter_shape=(4, 3, 3, 5)), REJECTED),
    # The CPU kernel refuses dilation > INT16_MAX; the delegate must too.
    "depthwise_dilation_65536": (lambda: depthwise_dilated(65536), DECLINED_OR_REJECTED),
    "depthwise_dilation_int32_max": (lambda: depthwise_dilated((1 << 31) - 1),
                                     DECLINED_OR_REJECTED),
    # Declared output shapes reach the delegate unprepared (it allows
    # dynamic tensors): they must be checked, never trusted.
    "add_declared_output_larger_than_broadcast": (
        lambda: declared_output(lambda: binary("ADD", SHAPE, SHAPE), [2] + SHAPE[1:]),
        ANY_ACCEPTABLE),
    "relu_declared_output_smaller": (
        lambda: declared_output(lambda: unary("RELU", SHAPE), [1, 2, 5, 3]), ANY_ACCEPTABLE),
    "max_pool_stride_0": (lambda: pool("MAX_POOL_2D", stride=0), DECLINED_OR_REJECTED),
    "average_pool_size_0": (lambda: pool("AVERAGE_POOL_2D", size=0), ANY_ACCEPTABLE),
    "concatenation_axis_out_of_range": (lambda: concatenation(7), DECLINED_OR_REJECTED),
    "concatenation_axis_negative": (lambda: concatenation(-1), OK_OR_DECLINED),
    "concatenation_axis_very_negative": (lambda: concatenation(-9), DECLINED_OR_REJECTED),
    "softmax_beta_zero": (lambda: softmax(0.0), OK_OR_DECLINED),
    "softmax_beta_nan": (lambda: softmax(float("nan")), ANY_ACCEPTABLE),
    "reshape_to_wrong_count": (lambda: reshape_to([1, 7, 7]), DECLINED_OR_REJECTED),
    "reshape_with_two_wildcards": (lambda: reshape_to([1, -1, -1]), DECLINED_OR_REJECTED),
    # Fuzz seed 2: 9826 (a declined node's wrong declaration read on the
    # GPU), 5537 (NaN through a RELU), 14229, 4728 and the builtin form of
    # it, 5471 (an op without a CPU kernel whose input carries a buffer).
    "mul_declared_output_read_by_relu": (
        lambda: relu_after(binary("MUL", [1, 5, 2, 13], [1, 5, 2, 13]), [1, 7, 2, 13]),
        ANY_ACCEPTABLE),
    # Seed 4, case 1560 (under gles31-minimum, and natively): both inputs
    # splat over channels (declined for that first), output declared wider.
    "mul_channel_splats_declared_output_read_by_relu": (
        lambda: relu_after(binary("MUL", [1, 4, 1, 1], [1], const_b=np.array([1.5], np.float32),
                                  options={"fused_activation_function": "RELU6"}),
                           [1, 4, 1, 2]),
        ANY_ACCEPTABLE),
    "softmax_beta_inf_read_by_relu": (
        lambda: relu_after(_softmax_builder(float("inf"), 11)),
        ANY_ACCEPTABLE),
    "graph_input_with_constant_data_scalar_mul": (scalar_mul_input_with_constant_data,
                                                  ANY_ACCEPTABLE),
    "transpose_conv_stride_over_int16_max": (lambda: transpose_conv(40000),
                                             DECLINED_OR_REJECTED),
    "mediapipe_transpose_conv_stride_int32_max": (
        lambda: mediapipe_transpose_conv(_stride_int32_max), DECLINED_OR_REJECTED),
    "strided_slice_computed_strides_read_by_relu": (strided_slice_with_computed_strides,
                                                    ANY_ACCEPTABLE),
    "mediapipe_transpose_conv_input_with_data": (
        lambda: mediapipe_transpose_conv(_input_with_data_and_tail), {"agree"}),
}

CHILD = """
from test_hostile_models import CASES
from model_check import run_cases_and_print
run_cases_and_print([(name, factory) for name, (factory, _) in CASES.items()],
                    fp16={fp16})
"""


@pytest.fixture(scope="module", params=[False, True], ids=["fp32", "fp16"])
def results(request):
    result = run_isolated(CHILD.format(fp16=request.param), timeout=240)
    parsed, crashed_in = parse_results(result.stdout)
    assert crashed_in is None, f"the child died in case {crashed_in}:\n{result.stderr[-3000:]}"
    assert result.returncode == 0, result.stderr[-3000:]
    counts = {}
    for record in parsed.values():
        counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    print(f"\nhostile models ({'fp16' if request.param else 'fp32'}): {len(parsed)} cases, outcomes {counts}")
    return parsed


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_model_is_declined_rejected_or_right(name, results, cases=CASES):
    assert name in results, f"case {name} did not report"
    record = results[name]
    assert record["outcome"] in cases[name][1], record
    if record["outcome"] == "declined" and record["delegated"] == 0:
        # Declined on the support check: the warning names the op and why
        # (no warning when the runtime itself had nothing to delegate).
        assert "cannot be handled by this delegate" in record["detail"] or \
            record["detail"] == "", record


# Quantized tensors with missing, inconsistent or out-of-range parameters
# (hostile_quant.py). Quantized outputs are compared within
# model_check.QUANTIZED_STEPS steps (the delegate computes through float).
QUANT_CASES = {**{name: (factory, DECLINED_OR_REJECTED)
                  for name, factory in REFUSED_BY_TFLITE.items()},
               **{name: (factory, ANY_ACCEPTABLE) for name, factory in RUN_BY_TFLITE.items()}}

QUANT_CHILD = """
from test_hostile_models import QUANT_CASES
from model_check import run_cases_and_print
run_cases_and_print([(name, factory) for name, (factory, _) in QUANT_CASES.items()])
"""


@pytest.fixture(scope="module")
def quant_results():
    result = run_isolated(QUANT_CHILD, timeout=240)
    parsed, crashed_in = parse_results(result.stdout)
    assert crashed_in is None, f"the child died in case {crashed_in}:\n{result.stderr[-3000:]}"
    assert result.returncode == 0, result.stderr[-3000:]
    return parsed


@pytest.mark.parametrize("name", list(QUANT_CASES))
def test_hostile_quantization_is_declined_rejected_or_right(name, quant_results):
    test_hostile_model_is_declined_rejected_or_right(name, quant_results, QUANT_CASES)


ABORT_CHILD = """
import json, sys
import numpy as np
from hostile_quant import ABORT_TFLITE
from gles_testing import interpreter, make_delegate, stats
model = ABORT_TFLITE[sys.argv[1]]()
delegate = make_delegate({"log_level": "warning"}) if sys.argv[2] == "gpu" else None
try:
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
except Exception as error:
    print("REFUSED", json.dumps(str(error)[:600]), flush=True)
    sys.exit(0)
for detail in interp.get_input_details():
    interp.set_tensor(detail["index"], np.full(detail["shape"], 40, detail["dtype"]))
interp.invoke()
print("RAN", json.dumps(stats(delegate) if delegate else {}), flush=True)
"""


def run_abort_child(name: str, where: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(REPO / "tools"),
                                         env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", ABORT_CHILD, name, where], env=env,
                          cwd=str(REPO), text=True, capture_output=True, timeout=120)


@pytest.mark.parametrize("name", list(ABORT_TFLITE))
def test_quantization_tflite_aborts_on_is_declined_or_refused_by_the_delegate(name):
    """TFLite's own kernel aborts on these parameters; the delegate must say
    so first: decline the node with a reason (the abort that follows is
    TFLite's, as it is without the delegate), or refuse the model."""
    cpu = run_abort_child(name, "cpu")
    assert cpu.returncode < 0, f"TFLite's CPU path no longer aborts: {cpu.stdout}{cpu.stderr}"
    gpu = run_abort_child(name, "gpu")
    if gpu.returncode >= 0:
        assert gpu.returncode == 0 and gpu.stdout.startswith("REFUSED"), (
            f"the delegate ran a node TFLite aborts on (parameters it must refuse):\n"
            f"{gpu.stdout[-2000:]}\n{gpu.stderr[-2000:]}")
        return
    # Died like the CPU path: only after the delegate declined the node.
    declined = [line for line in gpu.stderr.splitlines()
                if "cannot be handled by this delegate" in line and "ADD" in line]
    assert declined, (f"the delegate run died by signal {-gpu.returncode} without the "
                      f"delegate declining the node first:\n{gpu.stderr[-3000:]}")
