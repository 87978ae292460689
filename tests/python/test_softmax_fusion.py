"""Softmax-into-GEMM fusion (delegate/passes/dw_fusion.h, FuseSoftmaxIntoGemm): a
SOFTMAX reading only the logits of a split-K GEMM (FULLY_CONNECTED, or the
1x1 convolution of a classifier head) runs in that GEMM's last workgroup to
finish (gemm.comp SOFTMAX_EPILOGUE). Forced on llvmpipe
(TFLITE_GLES_SHARED_MEMORY_GEMM=1, TFLITE_GLES_FUSE_SOFTMAX=1; it is on by
default only where gemm.comp runs). Each model is invoked twice in one
interpreter with fresh inputs (the arrival counter must be back at zero for
the second run), and both runs match the CPU kernels; one dispatch goes per
fused softmax, none where the fusion does not apply."""

import numpy as np
import pytest

import gles_testing as gt
from test_fusion import Chain
from test_mean_fusion import head


def softmax(c, x, beta):
    out = c.b.add_tensor(c.shapes[x])
    c.shapes[out] = c.shapes[x]
    c.b.add_op("SOFTMAX", [x], [out], {"beta": beta})
    return out


def run_twice(monkeypatch, c, model, fused, fp16=False):
    """Dispatch count of the delegate; asserts both invokes against the CPU."""
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_FUSE_SOFTMAX", "1" if fused else "0")
    monkeypatch.delenv("TFLITE_GLES_GEMM_TILE", raising=False)
    delegate = gt.make_delegate({"precision_loss_allowed": fp16})
    interp = gt.interpreter(model, delegate)
    for seed in (11, 12):
        inputs = gt.random_inputs(c.input_shapes, seed=seed)
        cpu = gt.invoke(gt.interpreter(model), inputs)
        gpu = gt.invoke(interp, inputs)
        gt.assert_close(gpu, cpu, fp16)
    stats = gt.stats(delegate)
    gt.assert_fully_delegated(stats)
    del interp
    return stats["dispatches"]


def assert_fuses(monkeypatch, c, model, saved=1, fp16=False):
    plain = run_twice(monkeypatch, c, model, False, fp16)
    fused = run_twice(monkeypatch, c, model, True, fp16)
    assert fused == plain - saved, (fused, plain)


@pytest.mark.parametrize("rows,depth,classes,beta", [
    (1, 40, 1001, 1.0),  # 251 slices over 80 invocations: several each
    (2, 64, 37, 0.4),
    (4, 20, 9, 2.5),
    (3, 256, 130, -0.7),
    (3, 4, 50, 1.0),  # one depth step: K not split (K_PARTS 1)
    (4, 8, 21, 0.9)])  # two K parts for four rows: two rows per invocation
@pytest.mark.parametrize("fp16", [False, True])
def test_fully_connected_softmax_fuses(monkeypatch, rows, depth, classes, beta, fp16):
    c = Chain([rows, depth], seed=rows * 7 + classes)
    model = c.build([softmax(c, c.fully_connected(c.x, classes), beta)])
    assert_fuses(monkeypatch, c, model, fp16=fp16)


@pytest.mark.parametrize("fp16", [False, True])
def test_classifier_head_fuses_mean_and_softmax(monkeypatch, fp16):
    """MobileNet's head: conv -> global mean -> 1x1 conv -> RESHAPE ->
    SOFTMAX; mean and softmax both fold into the logits GEMM."""
    c = Chain([1, 7, 7, 48], seed=5)
    x = c.conv(c.x, 64, activation="RELU6")
    logits = head(c, x, "AVERAGE_POOL_2D", 101, as_conv=True)
    flat = c.b.add_tensor([1, 101])
    c.shapes[flat] = [1, 101]
    c.b.add_op("RESHAPE", [logits, c.b.add_const(np.array([1, 101], np.int32))], [flat])
    model = c.build([softmax(c, flat, 1.0)])
    monkeypatch.setenv("TFLITE_GLES_FUSE_MEAN", "0")
    no_mean = run_twice(monkeypatch, c, model, True, fp16)
    monkeypatch.setenv("TFLITE_GLES_FUSE_MEAN", "1")
    assert_fuses(monkeypatch, c, model, fp16=fp16)
    assert run_twice(monkeypatch, c, model, True, fp16) == no_mean - 1


def test_pixels_of_a_small_map_fuse(monkeypatch):
    """A 1x1 convolution on a 2x2 map (4 rows: split-K), softmax per pixel."""
    c = Chain([1, 2, 2, 24], seed=9)
    model = c.build([softmax(c, c.conv(c.x, 50), 1.3)])
    assert_fuses(monkeypatch, c, model)


def test_softmax_output_feeding_another_node(monkeypatch):
    c = Chain([2, 32], seed=4)
    probabilities = softmax(c, c.fully_connected(c.x, 19), 1.0)
    model = c.build([c.fully_connected(probabilities, 5)])
    assert_fuses(monkeypatch, c, model)


def test_logits_with_a_second_reader_stay(monkeypatch):
    c = Chain([1, 48], seed=8)
    logits = c.fully_connected(c.x, 30)
    model = c.build([softmax(c, logits, 1.0), c.unary("RELU", logits)])
    assert_fuses(monkeypatch, c, model, saved=0)


def test_logits_as_a_model_output_stay(monkeypatch):
    c = Chain([1, 48], seed=10)
    logits = c.fully_connected(c.x, 30)
    model = c.build([softmax(c, logits, 1.0), logits])
    assert_fuses(monkeypatch, c, model, saved=0)


def test_softmax_over_part_of_the_logits_stays(monkeypatch):
    """The logits reshaped to [1, 3, 8]: the softmax's last axis is 8 of the
    GEMM's 24 outputs, not a whole row."""
    c = Chain([1, 40], seed=12)
    logits = c.fully_connected(c.x, 24)
    grouped = c.b.add_tensor([1, 3, 8])
    c.shapes[grouped] = [1, 3, 8]
    c.b.add_op("RESHAPE", [logits, c.b.add_const(np.array([1, 3, 8], np.int32))], [grouped])
    model = c.build([softmax(c, grouped, 1.0)])
    assert_fuses(monkeypatch, c, model, saved=0)
