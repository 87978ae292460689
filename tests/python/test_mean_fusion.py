"""Mean-into-GEMM fusion (delegate/passes/dw_fusion.h, FuseMeanIntoGemm): a
classifier head's global average (AVERAGE_POOL_2D over the whole map, or
MEAN over H and W) runs inside the split-K GEMM that reads it (gemm.comp
MEAN_PROLOGUE). Forced on llvmpipe (TFLITE_GLES_SHARED_MEMORY_GEMM=1,
TFLITE_GLES_FUSE_MEAN=1; it is on by default only where gemm.comp runs):
answers match the CPU's with and without it, one dispatch goes per fused
mean, and none where the mean's result has a second reader."""

import numpy as np
import pytest

from gles_testing import assert_close, assert_fully_delegated, random_inputs, run_switch_off_and_on
from test_fusion import Chain


def head(c, x, pool, classes, as_conv):
    """Global average of x (AVERAGE_POOL_2D or MEAN), then the logits: a
    1x1 convolution on the pooled map or a FULLY_CONNECTED on it."""
    n, h, w, ch = c.shapes[x]
    pooled = c.b.add_tensor([n, 1, 1, ch])
    c.shapes[pooled] = [n, 1, 1, ch]
    if pool == "AVERAGE_POOL_2D":
        c.b.add_op("AVERAGE_POOL_2D", [x], [pooled], {
            "padding": "VALID", "filter_height": h, "filter_width": w,
            "stride_h": 1, "stride_w": 1, "fused_activation_function": "NONE"})
    else:
        c.b.add_op("MEAN", [x, c.b.add_const(np.array([1, 2], np.int32))], [pooled],
                   {"keep_dims": True})
    if as_conv:
        return c.conv(pooled, classes)
    flat = c.b.add_tensor([n, ch])
    c.shapes[flat] = [n, ch]
    c.b.add_op("RESHAPE", [pooled, c.b.add_const(np.array([n, ch], np.int32))], [flat])
    return c.fully_connected(flat, classes)


def run(monkeypatch, model, inputs, fp16=False):
    """(CPU outputs, (outputs, stats) unfused, (outputs, stats) fused)."""
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    return run_switch_off_and_on(monkeypatch, "TFLITE_GLES_FUSE_MEAN", model, inputs,
                                 {"precision_loss_allowed": fp16})


@pytest.mark.parametrize("pool,as_conv,shape,classes", [
    ("AVERAGE_POOL_2D", True, [1, 7, 7, 64], 37),
    ("AVERAGE_POOL_2D", False, [2, 5, 6, 30], 9),
    ("MEAN", True, [2, 4, 3, 20], 11),
    ("MEAN", False, [1, 9, 7, 12], 101),
    ("MEAN", False, [1, 2, 3, 8], 5)])  # 6 pixels: fewer than the shader's 8 sums
@pytest.mark.parametrize("fp16", [False, True])
def test_classifier_head_fuses_its_mean(monkeypatch, pool, as_conv, shape, classes, fp16):
    c = Chain(shape, seed=shape[-1] + classes)
    x = c.conv(c.x, shape[-1], activation="RELU6")
    model = c.build([head(c, x, pool, classes, as_conv)])
    inputs = random_inputs(c.input_shapes, seed=6)
    cpu, (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, model, inputs, fp16)
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)


def test_mean_with_a_second_reader_stays(monkeypatch):
    c = Chain([1, 6, 6, 16], seed=3)
    n, h, w, ch = 1, 6, 6, 16
    pooled = c.b.add_tensor([n, 1, 1, ch])
    c.shapes[pooled] = [n, 1, 1, ch]
    c.b.add_op("MEAN", [c.x, c.b.add_const(np.array([1, 2], np.int32))], [pooled],
               {"keep_dims": True})
    logits = c.conv(pooled, 10)
    model = c.build([logits, c.unary("RELU", pooled)])
    inputs = random_inputs(c.input_shapes, seed=2)
    cpu, (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, model, inputs)
    assert_close(fused, cpu)
    assert fused_stats["dispatches"] == plain_stats["dispatches"]


def test_mean_over_a_large_map_stays(monkeypatch):
    """Every workgroup of the fused GEMM walks the whole map again, so maps
    over 64 pixels (squeeze-and-excitation blocks) keep their own mean."""
    c = Chain([1, 9, 8, 16], seed=5)
    x = c.conv(c.x, 16)
    model = c.build([head(c, x, "MEAN", 10, True)])
    inputs = random_inputs(c.input_shapes, seed=1)
    cpu, (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, model, inputs)
    assert_close(fused, cpu)
    assert fused_stats["dispatches"] == plain_stats["dispatches"]
