"""Upload fusion (delegate/passes/upload_fusion.h): a convolution whose input is an
image of <= 4 channels reads the BHWC upload staging buffer itself, and the
conversion dispatch before it goes. Forced with TFLITE_GLES_FUSE_UPLOAD=1
(it is chosen for real GPUs, not llvmpipe); the answers must match the CPU's
with and without it, it must save exactly one dispatch per fused input, and
none where the input has another reader."""

import numpy as np
import pytest

from gles_testing import assert_close, assert_fully_delegated, random_inputs, run_switch_off_and_on
from test_fusion import Chain


def run(monkeypatch, model, inputs, fp16=False):
    """(CPU outputs, (outputs, stats) unfused, (outputs, stats) fused)."""
    # These inputs are small enough to cross directly (no staging buffer to
    # read, no conversion to fuse): staged, as images above 64 KiB are. With
    # fp16 the staging holds halves (TFLITE_GLES_X_HALF_UPLOAD).
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")
    # Fused even where the input could be aliased instead (test_alias_io.py).
    monkeypatch.setenv("TFLITE_GLES_X_ALIAS_UNFUSE", "0")
    return run_switch_off_and_on(monkeypatch, "TFLITE_GLES_FUSE_UPLOAD", model, inputs,
                                 {"precision_loss_allowed": fp16})


@pytest.mark.parametrize("shape,kernel,stride", [([1, 17, 15, 3], 3, 2), ([2, 9, 11, 1], 3, 1),
                                                 ([1, 8, 7, 4], 5, 2), ([1, 10, 9, 2], 1, 1)])
@pytest.mark.parametrize("fp16", [False, True])
def test_image_conv_reads_the_staging_buffer(monkeypatch, shape, kernel, stride, fp16):
    c = Chain(shape, seed=sum(shape) + kernel)
    y = c.conv(c.x, 12, kernel=kernel, stride=stride, activation="RELU6")
    model = c.build([c.depthwise(y, activation="RELU")])
    inputs = random_inputs(c.input_shapes, seed=3)
    cpu, (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, model, inputs, fp16)
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    # A 1x1 convolution runs the GEMM path, which keeps its conversion.
    saved = 1 if kernel > 1 else 0
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - saved, (fused_stats, plain_stats)


def test_input_with_a_second_reader_keeps_its_conversion(monkeypatch):
    c = Chain([1, 9, 9, 3], seed=8)
    y = c.conv(c.x, 8, kernel=3, stride=2)
    z = c.conv(c.x, 8, kernel=3, stride=2, activation="RELU")
    model = c.build([c.binary("ADD", y, z)])
    inputs = random_inputs(c.input_shapes, seed=4)
    cpu, (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, model, inputs)
    assert_close(fused, cpu)
    assert fused_stats["dispatches"] == plain_stats["dispatches"]
