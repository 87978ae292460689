"""Graph inputs that carry a buffer (issue 20; the long fuzz, seed 2, cases
2503 and 5314). TFLite maps such an input read-only, like a constant, yet the
application still sets it (set_tensor writes into that buffer) and TFLite's
builtin CPU kernels re-read it on every invoke. The delegate finds the graph's
inputs in the model itself (delegate/graph/model_inputs.h): an elementwise
operand is then uploaded on every invoke, any other reader that would fold it
(a bias, a filter) is declined with the reason. Every model runs on the CPU and
through the delegate with two different sets of inputs, the buffered ones
included, so a value folded once cannot pass."""

import numpy as np
import pytest

from gles_testing import ModelBuilder, assert_close, interpreter, make_delegate, stats
from tflite_runtimes import schema

FP16 = {"precision_loss_allowed": "true"}
REASON = "is a graph input that carries a buffer"


def give_buffer(b: ModelBuilder, index: int, value: float) -> None:
    """Tensor `index` (a graph input) gets a buffer of constant data."""
    tensor = b._tensors[index]
    b._buffers.append(schema.BufferT())
    b._buffers[-1].data = np.frombuffer(
        np.full(tensor.shape, value, np.float32).tobytes(), np.uint8)
    tensor.buffer = len(b._buffers) - 1


def run(model: bytes, delegate=None, seeds=(1, 2)):
    """Outputs of one interpreter for each seed's inputs (every graph input
    set, the buffered ones too). Each interpreter gets its own copy of the
    model: set_tensor writes into the buffer of a buffered input."""
    interp = interpreter(bytes(bytearray(model)), delegate)
    interp.allocate_tensors()
    results = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for detail in interp.get_input_details():
            interp.set_tensor(detail["index"],
                              rng.uniform(-2, 2, detail["shape"]).astype(np.float32))
        interp.invoke()
        results.append([interp.get_tensor(d["index"]).copy()
                        for d in interp.get_output_details()])
    return results


def check(model: bytes, delegated: int, options=None, fp16=False):
    cpu = run(model)
    delegate = make_delegate(options)
    gpu = run(model, delegate)
    s = stats(delegate)
    assert s["nodes_delegated"] == delegated, s
    for gpu_outputs, cpu_outputs in zip(gpu, cpu):
        assert_close(gpu_outputs, cpu_outputs, fp16=fp16)
    # The two invokes saw different buffered values: a fold would repeat one.
    assert not np.allclose(cpu[0][0], cpu[1][0])


def sub_with_buffered_broadcast_operand() -> bytes:
    """Case 2503 (seed 2): SUB whose broadcast operand [4] is a graph input
    with a buffer, as the fuzzer built it."""
    b = ModelBuilder()
    x = b.add_input([1, 2, 8, 4])
    y = b.add_input([4])
    o = b.add_tensor([1, 2, 8, 4])
    b.add_op("SUB", [x, y], [o], {"fused_activation_function": "RELU"})
    give_buffer(b, y, 0.25)
    return b.build()


def conv_with_buffered(which: str) -> bytes:
    """Case 5314 (seed 2): CONV_2D whose bias is a graph input with a buffer,
    as the fuzzer built it (or its filter)."""
    rng = np.random.default_rng(7)
    b = ModelBuilder()
    x = b.add_input([1, 10, 4, 3])
    if which == "filter":
        w = b.add_input([4, 3, 3, 3])
        bias = b.add_const(rng.uniform(-1, 1, [4]).astype(np.float32))
    else:
        w = b.add_const(rng.uniform(-1, 1, [4, 3, 3, 3]).astype(np.float32))
        bias = b.add_input([4])
    o = b.add_tensor([1, 10, 2, 4])
    b.add_op("CONV_2D", [x, w, bias], [o],
             {"padding": "SAME", "stride_w": 2, "stride_h": 1,
              "fused_activation_function": "RELU_N1_TO_1"})
    give_buffer(b, w if which == "filter" else bias, 0.125)
    return b.build()


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_elementwise_broadcast_operand_is_uploaded_on_every_invoke(precision):
    fp16 = precision == "fp16"
    check(sub_with_buffered_broadcast_operand(), delegated=1,
          options=FP16 if fp16 else None, fp16=fp16)


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("which", ["bias", "filter"])
def test_conv_folding_a_buffered_graph_input_is_declined_with_the_reason(which, precision,
                                                                         capfd):
    fp16 = precision == "fp16"
    check(conv_with_buffered(which), delegated=0, options=FP16 if fp16 else None)
    log = capfd.readouterr().err
    position = {"bias": 2, "filter": 1}[which]
    assert f"input {position} (tensor " in log and REASON in log, log


def test_the_rest_of_the_model_stays_on_the_gpu(capfd):
    """SUB of a buffered broadcast operand, ADD of a true constant, CONV_2D of
    a buffered bias: the first two on the GPU (the constant still folded),
    the convolution on the CPU."""
    rng = np.random.default_rng(3)
    b = ModelBuilder()
    x = b.add_input([1, 4, 4, 4])
    y = b.add_input([4])
    c = b.add_const(rng.uniform(-1, 1, [4]).astype(np.float32))
    w = b.add_const(rng.uniform(-1, 1, [4, 1, 1, 4]).astype(np.float32))
    bias = b.add_input([4])
    t1, t2, o = (b.add_tensor([1, 4, 4, 4]) for _ in range(3))
    b.add_op("SUB", [x, y], [t1], {"fused_activation_function": "NONE"})
    b.add_op("ADD", [t1, c], [t2], {"fused_activation_function": "NONE"})
    b.add_op("CONV_2D", [t2, w, bias], [o], {"padding": "VALID", "stride_w": 1,
                                             "stride_h": 1})
    give_buffer(b, y, 0.25)
    give_buffer(b, bias, 0.5)
    check(b.build(), delegated=2)
    log = capfd.readouterr().err
    assert "CONV_2D v1" in log and f"input 2 (tensor {bias}) {REASON}" in log, log


def test_a_constant_that_is_no_graph_input_is_still_folded():
    """The same SUB with its operand a plain constant: delegated, and what the
    GPU folded is what the CPU computes with."""
    rng = np.random.default_rng(4)
    b = ModelBuilder()
    x = b.add_input([1, 3, 5, 4])
    y = b.add_const(rng.uniform(-1, 1, [4]).astype(np.float32))
    o = b.add_tensor([1, 3, 5, 4])
    b.add_op("SUB", [x, y], [o], {"fused_activation_function": "NONE"})
    model = b.build()
    cpu = run(model)
    delegate = make_delegate()
    gpu = run(model, delegate)
    assert stats(delegate)["nodes_delegated"] == 1
    for gpu_outputs, cpu_outputs in zip(gpu, cpu):
        assert_close(gpu_outputs, cpu_outputs)


def test_a_buffered_operand_after_a_convolution_is_not_fused_as_a_constant():
    """CONV_2D, then ADD and MUL of buffered graph inputs [4]: the
    elementwise ops that fusion folds into a convolution as constants must
    read these on every invoke."""
    rng = np.random.default_rng(5)
    b = ModelBuilder()
    x = b.add_input([1, 5, 5, 3])
    w = b.add_const(rng.uniform(-1, 1, [4, 3, 3, 3]).astype(np.float32))
    bias = b.add_const(rng.uniform(-1, 1, [4]).astype(np.float32))
    shift = b.add_input([4])
    scale = b.add_input([4])
    t1, t2, o = (b.add_tensor([1, 5, 5, 4]) for _ in range(3))
    b.add_op("CONV_2D", [x, w, bias], [t1], {"padding": "SAME", "stride_w": 1, "stride_h": 1})
    b.add_op("ADD", [t1, shift], [t2], {"fused_activation_function": "NONE"})
    b.add_op("MUL", [t2, scale], [o], {"fused_activation_function": "RELU"})
    give_buffer(b, shift, 0.25)
    give_buffer(b, scale, 2.0)
    check(b.build(), delegated=3)
