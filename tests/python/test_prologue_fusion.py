"""Prologue fusions for squeeze-and-excitation blocks (delegate/passes/
prologue_fusion.h): the block's x * scale (or the decoder's x * scale + y)
runs in the loads of the 1x1 convolution's GEMM that reads it (gemm.comp
PROLOGUE_IN), and the block's two fully connected layers on the pooled map
run as one split-K GEMM (FC_PROLOGUE). Forced on llvmpipe
(TFLITE_GLES_SHARED_MEMORY_GEMM=1; both are on by default only where
gemm.comp runs): answers match TFLite's CPU kernels with each switch off and
on, one dispatch goes per fusion, and none where the step must stay."""

import numpy as np
import pytest

from gles_testing import assert_close, assert_fully_delegated, random_inputs, run_switch_off_and_on
from test_fusion import Chain


def mean(c, x):
    n, _, _, ch = c.shapes[x]
    pooled = c.b.add_tensor([n, 1, 1, ch])
    c.shapes[pooled] = [n, 1, 1, ch]
    c.b.add_op("MEAN", [x, c.b.add_const(np.array([1, 2], np.int32))], [pooled],
               {"keep_dims": True})
    return pooled


def excitation(c, x, squeeze):
    """The block's scale: mean, 1x1 conv + RELU, 1x1 conv, LOGISTIC."""
    hidden = c.conv(mean(c, x), squeeze, activation="RELU")
    return c.unary("LOGISTIC", c.conv(hidden, c.shapes[x][-1]))


def run(monkeypatch, switch, model, inputs, fp16=False):
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_FUSE_CHAIN_MEAN", "1")  # off by default
    return run_switch_off_and_on(monkeypatch, switch, model, inputs,
                                 {"precision_loss_allowed": fp16})


# Maps of more than 64 pixels keep their own mean (FuseMeanIntoGemm takes
# smaller ones into the first layer, which then has a prologue already).
SWITCHES = ["TFLITE_GLES_X_FUSE_EW_PROLOGUE", "TFLITE_GLES_X_FUSE_FC_CHAIN"]


@pytest.mark.parametrize("shape,squeeze,out_c,decoder", [
    ([1, 9, 8, 20], 5, 12, False),    # channels not a multiple of 4
    ([1, 9, 9, 32], 8, 16, True),     # the decoder's x * scale + y
    ([1, 10, 7, 96], 24, 32, False),  # hidden 24: more slices than one FC part
    ([1, 48, 48, 16], 4, 8, False)])  # a map too large for the chain's mean
@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("switch", SWITCHES)
def test_squeeze_excitation_block(monkeypatch, shape, squeeze, out_c, decoder, fp16, switch):
    c = Chain(shape, seed=shape[-1] + squeeze)
    x = c.conv(c.x, shape[-1], activation="RELU")
    scaled = c.binary("MUL", x, excitation(c, x, squeeze))
    if decoder:
        scaled = c.binary("ADD", scaled, c.conv(c.x, shape[-1]))
    model = c.build([c.conv(scaled, out_c, activation="RELU")])
    inputs = random_inputs(c.input_shapes, seed=4)
    cpu, (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, switch, model,
                                                          inputs, fp16)
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    # The chain also takes the mean where the map has at most 8192 vec4s.
    folded = 1 if switch == SWITCHES[0] or shape[1] * shape[2] * shape[3] > 8192 * 4 else 2
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - folded, (
        fused_stats, plain_stats)


@pytest.mark.parametrize("op,vector_first", [("SUB", True), ("ADD", False), ("MUL", True)])
def test_per_channel_constant_step_batch_two(monkeypatch, op, vector_first):
    """A constant per-channel operand on either side, two batches, and a
    chained ADD of a second model input (PROLOGUE_IN2)."""
    c = Chain([2, 5, 7, 12], seed=9)
    vector = c.const([1, 1, 1, 12], -1, 1)
    x = c.x  # not a convolution's output, which would take the step itself
    step = c.b.add_tensor(c.shapes[x])  # Chain.binary would take the first shape
    c.shapes[step] = c.shapes[x]
    c.b.add_op(op, [vector, x] if vector_first else [x, vector], [step],
               {"fused_activation_function": "NONE"})
    y = c.binary("ADD", step, c.extra_input([2, 5, 7, 12]))
    model = c.build([c.conv(y, 8)])
    inputs = random_inputs(c.input_shapes, seed=3)
    cpu, (plain, plain_stats), (fused, fused_stats) = run(
        monkeypatch, SWITCHES[0], model, inputs)
    assert_close(plain, cpu)
    assert_close(fused, cpu)
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)


def test_steps_that_must_stay(monkeypatch):
    """A scaled map with a second reader, a per-channel DIV (0 / 0 in the
    padded lanes) and a hidden layer read twice keep their dispatches."""
    c = Chain([1, 9, 9, 10], seed=11)
    x = c.conv(c.x, 10, activation="RELU")
    scaled = c.binary("MUL", x, excitation(c, x, 4))
    divided = c.binary("DIV", x, c.const([1, 1, 1, 10], 1, 2))
    hidden = c.conv(mean(c, x), 6, activation="RELU")
    model = c.build([c.conv(scaled, 8), c.unary("RELU", scaled), c.conv(divided, 4),
                     c.conv(hidden, 10), c.unary("RELU", hidden)])
    inputs = random_inputs(c.input_shapes, seed=2)
    for switch in SWITCHES:
        cpu, (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, switch, model, inputs)
        assert_close(fused, cpu)
        # Only the excitation's own two layers (one reader each) chain, with
        # its mean.
        expected = plain_stats["dispatches"] - 2 * (switch == SWITCHES[1])
        assert fused_stats["dispatches"] == expected, (switch, fused_stats, plain_stats)


@pytest.mark.parametrize("in_shape,out_hw,half_pixel,fp16", [
    ([1, 5, 6, 20], [10, 12], True, False),   # selfie's decoder: 2x, half-pixel
    ([2, 4, 3, 8], [7, 9], False, True)])     # odd scales, two batches
def test_bilinear_resize_runs_in_the_gemm(monkeypatch, in_shape, out_hw, half_pixel, fp16):
    c = Chain(in_shape, seed=7)
    x = c.conv(c.x, in_shape[-1], activation="RELU")
    shape = [in_shape[0], *out_hw, in_shape[-1]]
    resized = c.b.add_tensor(shape)
    c.shapes[resized] = shape
    c.b.add_op("RESIZE_BILINEAR", [x, c.b.add_const(np.array(out_hw, np.int32))], [resized],
               {"align_corners": False, "half_pixel_centers": half_pixel})
    model = c.build([c.conv(resized, 12)])
    inputs = random_inputs(c.input_shapes, seed=5)
    cpu, (plain, plain_stats), (fused, fused_stats) = run(
        monkeypatch, "TFLITE_GLES_X_FUSE_RESIZE_PROLOGUE", model, inputs, fp16)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)
