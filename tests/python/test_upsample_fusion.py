"""A nearest-neighbour upsampling by 2 or 4 (or a resize to the same size) in
the gather of the convolution that alone reads it (delegate/passes/
upsample_fusion.h, conv2d.comp / conv2d_window.comp GATHER_UPSAMPLE), as style
transfer's decoder does it:
RESIZE_NEAREST_NEIGHBOR -> MIRROR_PAD -> CONV_2D. The real LiteRT CPU kernels
against the delegate with the fold off and on, on random data: mirror and
zero padding, padded lanes, the split sum, stride 2, batch 2, the
shared-memory window path, and a conditional instance norm before the resize
that then folds into the convolution as well. The fold saves exactly the
resize's dispatch (and the norm's apply where that follows), and none for a
factor of 3 or a resized map that is read again.
"""

import numpy as np
import pytest

from gles_testing import assert_close, assert_fully_delegated, random_inputs, run_switch_off_and_on
from test_fusion import Chain
from test_norm_prologue import mirror_pad_then_conv
from test_norm_stats import conditional_norm

SWITCH = "TFLITE_GLES_X_FUSE_UPSAMPLE"


def upsample_conv_model(shape, factor, out_c, kernel, pad, stride=1, norm=False,
                        second_reader=False, seed=0, mode="REFLECT"):
    """conv 1x1 -> [conditional norm] -> RESIZE_NEAREST x factor -> [MIRROR_PAD (`mode`)] -> conv."""
    c = Chain(shape, seed=seed)
    x = c.conv(c.x, shape[-1])
    if norm:
        x, _ = conditional_norm(c, x, c.extra_input([1, 1, 1, 12]), "RELU")
    n, h, w, ch = c.shapes[x]
    big = [n, h * factor, w * factor, ch]
    resized = c.b.add_tensor(big)
    c.shapes[resized] = big
    c.b.add_op("RESIZE_NEAREST_NEIGHBOR",
               [x, c.b.add_const(np.array(big[1:3], np.int32))], [resized],
               {"align_corners": False, "half_pixel_centers": False})
    out = mirror_pad_then_conv(c, resized, out_c, kernel, pad, stride, "RELU", mode)
    return c.build([out, resized] if second_reader else [out]), c.input_shapes


# (input, factor, output channels, kernel, mirror pad, stride, K_SPLIT,
#  window path, conditional norm before the resize)
CASES = [
    ([1, 6, 5, 8], 2, 8, 3, 1, 1, False, False, False),
    ([2, 5, 7, 13], 2, 6, 3, 0, 2, True, False, False),
    ([1, 5, 4, 8], 4, 3, 9, 4, 1, False, True, False),
    ([1, 9, 8, 8], 1, 3, 9, 4, 1, False, True, True),
    ([1, 7, 6, 8], 2, 8, 3, 1, 1, True, False, True),
]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("shape,factor,out_c,kernel,pad,stride,ksplit,window,norm", CASES)
def test_upsample_in_the_convolution_gather(monkeypatch, shape, factor, out_c, kernel, pad,
                                            stride, ksplit, window, norm, fp16):
    monkeypatch.setenv("TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_NORM_PROLOGUE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_KSPLIT", "1" if ksplit else "0")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_CONV", "1" if window else "0")
    # The factor-1 case keeps its resize a dispatch (not the identity view
    # every device now makes of it), so that the gather's factor 1 is tested.
    monkeypatch.setenv("TFLITE_GLES_X_RESIZE_VIEW", "0")
    model, shapes = upsample_conv_model(shape, factor, out_c, kernel, pad, stride, norm,
                                        seed=shape[-1])
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, random_inputs(shapes, seed=4),
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    saved = plain_stats["dispatches"] - fused_stats["dispatches"]
    assert saved == (2 if norm else 1), (plain_stats, fused_stats)


@pytest.mark.parametrize("case", ["factor_3", "second_reader"])
def test_upsample_that_must_stay(monkeypatch, case):
    model, shapes = upsample_conv_model([1, 5, 6, 8], 3 if case == "factor_3" else 2, 4, 3, 1,
                                        second_reader=case == "second_reader", seed=2)
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, random_inputs(shapes, seed=5))
    assert_close(fused, cpu)
    assert plain_stats["dispatches"] == fused_stats["dispatches"]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("pad", [1, 0])
def test_upsample_and_norm_folded_into_shared_memory_tiles(monkeypatch, pad, fp16):
    """conv2d.comp's SMEM_TILE path (NVIDIA's default on maps of >= 16384
    pixels, forced here) stages its tile through the same remaps as the
    gather: the resize's source pixel and the norm's apply, at mirror and zero
    padding (style transfer's decoder layer @256 takes both)."""
    monkeypatch.setenv("TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_NORM_PROLOGUE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_KSPLIT", "0")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_CONV", "0")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_TILE", "1")
    model, shapes = upsample_conv_model([1, 64, 65, 8], 2, 8, 3, pad, norm=True, seed=8)
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, random_inputs(shapes, seed=6),
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == 2, (plain_stats, fused_stats)
