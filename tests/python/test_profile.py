"""TfLiteGlesDelegateGetProfile: the per-dispatch profile of the last invoke,
read through the C API from a delegate in the real LiteRT interpreter."""

import ctypes
import math

import numpy as np
import pytest

import gles_testing as gt
from gles_testing import ModelBuilder, assert_close, invoke, random_inputs

SHAPE = [1, 9, 11, 6]  # 6 channels: two slices, the second half padded


@pytest.fixture(autouse=True)
def with_layout_conversions(monkeypatch):
    """These tensors are small enough to cross directly, without the layout
    conversion dispatches that the expectations here list."""
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_TRANSFERS", "0")


def chain_model():
    """MUL then ADD(RELU6) then LOGISTIC: three kernels, two inputs."""
    b = ModelBuilder()
    x = b.add_input(SHAPE)
    y = b.add_input(SHAPE)
    t = b.add_tensor(SHAPE)
    u = b.add_tensor(SHAPE)
    o = b.add_tensor(SHAPE)
    b.add_op("MUL", [x, y], [t], {"fused_activation_function": "NONE"})
    b.add_op("ADD", [t, x], [u], {"fused_activation_function": "RELU6"})
    b.add_op("LOGISTIC", [u], [o])
    return b.build()


@pytest.fixture(autouse=True)
def one_dispatch_per_op(monkeypatch):
    """The entries are checked op by op: the chain's elementwise ops stay in
    their own dispatches (delegate/passes/fusion.h would fold ADD and LOGISTIC into
    the MUL)."""
    monkeypatch.setenv("TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS", "0")


def run(options, invokes=2):
    model = chain_model()
    inputs = random_inputs([SHAPE, SHAPE], seed=5)
    delegate = gt.make_delegate(options)
    interp = gt.interpreter(model, delegate)
    for _ in range(invokes):
        gpu = invoke(interp, inputs)
    cpu = invoke(gt.interpreter(model), inputs)
    return delegate, interp, gpu, cpu


@pytest.mark.parametrize("fp16", [False, True])
def test_profile_lists_every_dispatch_of_the_last_invoke_in_order(fp16):
    delegate, interp, gpu, cpu = run({"enable_profiling": "true",
                                      "precision_loss_allowed": fp16})
    assert_close(gpu, cpu, fp16)  # profiling must not change results
    stats = gt.stats(delegate)
    entries = gt.profile(delegate)
    # Two upload conversions, three kernels, one readback conversion.
    assert len(entries) == stats["dispatches"] == 6, entries
    assert [e["shader"] for e in entries] == (
        ["layout_convert"] * 2 + ["elementwise"] * 3 + ["layout_convert"])
    assert [e["label"].split()[0] for e in entries[2:5]] == ["MUL", "ADD", "LOGISTIC"]
    # Each kernel's label ends with its node's index in the graph ("MUL v1 @0"):
    # that index must name a node of the same op in the model.
    ops = {op["index"]: op["op_name"] for op in interp._get_ops_details()}
    for e in entries[2:5]:
        node = int(e["label"].rsplit("@", 1)[1])
        assert ops[node] == e["label"].split()[0], (e["label"], ops)
    elements = int(np.prod(SHAPE))
    assert [e["flops"] for e in entries] == [0, 0, elements, elements, elements, 0]
    for e in entries:
        assert math.isfinite(e["ms"]) and 0 < e["ms"] < 10_000, e
        assert e["partition"] == 0
    if "llvmpipe" in stats["renderer"]:
        # llvmpipe's timer queries answer 1 ns: the delegate must not use them.
        assert not any(e["gpu_timer"] for e in entries)


def test_profile_is_empty_without_enable_profiling():
    delegate, interp, gpu, cpu = run({})
    assert_close(gpu, cpu)
    assert gt.profile(delegate) == []


def test_profile_copies_at_most_capacity_and_returns_the_full_count():
    delegate, interp, _, _ = run({"enable_profiling": "true"}, invokes=1)
    lib = gt.library()
    entries = (gt.DispatchProfile * 3)()
    entries[2].milliseconds = -7.0  # must stay untouched
    count = lib.TfLiteGlesDelegateGetProfile(
        delegate._get_native_delegate_pointer(), entries, 2)
    assert count == 6
    assert entries[0].shader == b"layout_convert" and entries[1].milliseconds > 0
    assert entries[2].milliseconds == -7.0


def test_profile_refuses_a_null_delegate_and_a_negative_capacity():
    lib = gt.library()
    assert lib.TfLiteGlesDelegateGetProfile(None, None, 0) == -1
    delegate, interp, _, _ = run({"enable_profiling": "true"}, invokes=1)
    pointer = delegate._get_native_delegate_pointer()
    assert lib.TfLiteGlesDelegateGetProfile(pointer, None, -1) == -1
    assert lib.TfLiteGlesDelegateGetProfile(pointer, None, 4) == -1
    assert lib.TfLiteGlesDelegateGetProfile(pointer, ctypes.cast(None, ctypes.POINTER(
        gt.DispatchProfile)), 0) == 6
