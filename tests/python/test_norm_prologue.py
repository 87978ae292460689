"""An instance norm's apply step in the next convolution's gather
(delegate/passes/norm_prologue.h, conv2d.comp / conv2d_window.comp
PROLOGUE_IN): style transfer's conditional norm (x * s + shift, ReLU) whose
result only a convolution reads, through a MIRROR_PAD folded into it or with
zero padding of its own. The real LiteRT CPU kernels against the delegate
with the fold off and on, on random data: padded lanes (13 channels), the
split sum (K_SPLIT), stride 2, the shared-memory window path (a 9x9 8 -> 3
layer) and zero padding; the fold saves exactly the apply's dispatch,
and none where the normalized map is read again. Also the residual ADD after
a norm as the apply's second epilogue operand (elementwise.comp EPILOGUE_IN2).
"""

import numpy as np
import pytest

from gles_testing import assert_close, assert_fully_delegated, random_inputs, run_switch_off_and_on
from test_fusion import Chain
from test_norm_stats import conditional_norm

SWITCH = "TFLITE_GLES_X_NORM_PROLOGUE"


def mirror_pad_then_conv(c, x, out_c, kernel, pad, stride, activation, mode="REFLECT"):
    """[MIRROR_PAD by `pad`, `mode`] -> CONV_2D (VALID after the pad, SAME
    without) on the Chain's tensor x; returns the convolution's output.
    Style transfer's layers read their input this way (test_upsample_fusion
    uses it too)."""
    n, h, w, ch = c.shapes[x]
    if pad:
        padded_shape = [n, h + 2 * pad, w + 2 * pad, ch]
        padded = c.b.add_tensor(padded_shape)
        c.shapes[padded] = padded_shape
        paddings = np.array([[0, 0], [pad, pad], [pad, pad], [0, 0]], np.int32)
        c.b.add_op("MIRROR_PAD", [x, c.b.add_const(paddings)], [padded], {"mode": mode})
        out_h = (padded_shape[1] - kernel) // stride + 1
        out_w = (padded_shape[2] - kernel) // stride + 1
        conv_in, padding = padded, "VALID"
    else:
        out_h, out_w, conv_in, padding = -(-h // stride), -(-w // stride), x, "SAME"
    out = c.b.add_tensor([n, out_h, out_w, out_c])
    c.b.add_op("CONV_2D", [conv_in, c.const([out_c, kernel, kernel, ch]),
                           c.const([out_c], -1, 1)], [out],
               {"padding": padding, "stride_h": stride, "stride_w": stride,
                "dilation_h_factor": 1, "dilation_w_factor": 1,
                "fused_activation_function": activation})
    return out


def norm_conv_model(shape, out_c, kernel, stride=1, pad=1, second_reader=False, seed=0):
    """conv 3x3 -> conditional norm (ReLU) -> [MIRROR_PAD] -> conv."""
    c = Chain(shape, seed=seed)
    style = c.extra_input([1, 1, 1, 12])
    x = c.conv(c.x, shape[-1], kernel=3)
    y, _ = conditional_norm(c, x, style, "RELU")
    out = mirror_pad_then_conv(c, y, out_c, kernel, pad, stride, "NONE")
    return c.build([out, y] if second_reader else [out]), c.input_shapes


# (input, output channels, kernel, stride, mirror pad, K_SPLIT, window path)
CASES = [
    ([1, 12, 10, 8], 8, 3, 1, 1, False, False),
    ([1, 14, 12, 13], 6, 3, 2, 1, True, False),
    ([1, 18, 17, 8], 3, 9, 1, 4, False, True),
    ([1, 9, 11, 5], 4, 3, 1, 0, False, False),
]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("shape,out_c,kernel,stride,pad,ksplit,window", CASES)
def test_norm_apply_in_the_convolution_gather(monkeypatch, shape, out_c, kernel, stride, pad,
                                               ksplit, window, fp16):
    monkeypatch.setenv("TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_KSPLIT", "1" if ksplit else "0")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_CONV", "1" if window else "0")
    model, shapes = norm_conv_model(shape, out_c, kernel, stride, pad, seed=shape[-1])
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, random_inputs(shapes, seed=4),
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == 1, (plain_stats, fused_stats)


def test_normalized_map_read_again_keeps_the_apply(monkeypatch):
    monkeypatch.setenv("TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS", "1")
    model, shapes = norm_conv_model([1, 10, 9, 8], 4, 3, second_reader=True, seed=3)
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, random_inputs(shapes, seed=5))
    assert_close(fused, cpu)
    assert plain_stats["dispatches"] == fused_stats["dispatches"]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("skip_first", [False, True])
def test_residual_add_as_the_applys_second_epilogue_operand(monkeypatch, skip_first, fp16):
    """Style transfer's residual block end: the norm apply (x * s, + shift in
    its epilogue) then ADD of the block's input, which folds in as a second
    tensor operand (elementwise.comp EPILOGUE_IN2) where the device allows
    it (TFLITE_GLES_X_EPILOGUE_IN2): one dispatch fewer, same results; either
    operand order of the ADD, padded lanes (13 channels)."""
    monkeypatch.setenv("TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS", "1")
    shape = [1, 11, 9, 13]
    c = Chain(shape, seed=13)
    style = c.extra_input([1, 1, 1, 12])
    y, _ = conditional_norm(c, c.conv(c.x, shape[-1], kernel=3), style)
    out = c.binary("ADD", c.x, y) if skip_first else c.binary("ADD", y, c.x)
    model = c.build([out])
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_EPILOGUE_IN2", model, random_inputs(c.input_shapes, seed=6),
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == 1, (plain_stats, fused_stats)


def test_second_epilogue_operand_once(monkeypatch):
    """(x + a) * b * d, all same-shape inputs (test_fusion.py's chain):
    without the second operand only the MUL by b folds into the ADD, with it
    the MUL by d too."""
    monkeypatch.setenv("TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS", "1")
    shape = [2, 5, 6, 7]
    c = Chain(shape, seed=17)
    s = c.binary("ADD", c.x, c.extra_input(shape))
    for _ in range(2):
        s = c.binary("MUL", s, c.extra_input(shape))
    model = c.build([s])
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_EPILOGUE_IN2", model, random_inputs(c.input_shapes, seed=7))
    assert_close(plain, cpu)
    assert_close(fused, cpu)
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == 1, (plain_stats, fused_stats)
