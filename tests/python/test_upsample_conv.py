"""A 3x3 convolution over a nearest upsample by 2 as four 2x2 convolutions over
the upsample's source (delegate/passes/upsample_conv.h, shaders/conv2d_up2.comp),
as style transfer's decoder reads its maps: RESIZE_NEAREST_NEIGHBOR x2 ->
MIRROR_PAD 1 (REFLECT or SYMMETRIC) or SAME zero padding -> CONV_2D 3x3, with
an instance norm's apply before the resize folded into the staging. The real
LiteRT CPU kernels against the delegate with the pass off and on, on random
data: padded input and output lanes, 1-8 input slices, partial tiles, one to
three output-slice groups, every block form (a parity per z or all four per
invocation) and the literal weights."""

import numpy as np
import pytest

from gles_testing import (assert_close, assert_fully_delegated, interpreter, invoke, random_inputs,
                          run_gpu, run_switch_off_and_on)
from test_fusion import Chain
from test_upsample_fusion import upsample_conv_model

SWITCH = "TFLITE_GLES_X_CONV_UP2"


def up2_model(shape, out_c, pad_mode, norm, seed):
    """conv 1x1 -> [conditional norm] -> RESIZE_NEAREST x2 -> [MIRROR_PAD 1, `pad_mode`] ->
    conv 3x3 (SAME with zero padding for "ZERO"), test_upsample_fusion's model."""
    zero = pad_mode == "ZERO"
    return upsample_conv_model(shape, 2, out_c, 3, 0 if zero else 1, 1, norm, seed=seed,
                               mode="REFLECT" if zero else pad_mode)


# (source shape, output channels, padding, norm before the resize, block LX/LY/TS/Z,
#  literal weights' budget in vec4s)
CASES = [
    ([1, 12, 16, 16], 8, "REFLECT", True, "8/4/2/0", 2048),  # style's @256 in small
    ([1, 12, 16, 16], 8, "REFLECT", True, "8/4/2/0", 0),
    ([1, 9, 11, 32], 16, "REFLECT", False, "8/4/2/0", 4096),  # @240's 8 slices, 2 groups
    ([1, 9, 11, 32], 16, "SYMMETRIC", False, "8/4/2/0", 0),
    ([1, 7, 10, 6], 12, "ZERO", True, "8/4/1/0", 2048),  # padded lanes, 3 groups
    ([1, 7, 10, 6], 6, "REFLECT", False, "8/8/2/1", 2048),
    ([1, 13, 6, 20], 3, "ZERO", False, "4/8/2/1", 0),
    ([1, 5, 19, 8], 10, "SYMMETRIC", True, "16/2/4/0", 4096),
    ([1, 9, 11, 32], 16, "REFLECT", False, "16/8/2/2", 4096),  # a parity per workgroup
    ([1, 12, 16, 16], 6, "ZERO", True, "8/4/1/2", 2048),
]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("shape,out_c,pad_mode,norm,block,literal", CASES)
def test_upsampled_3x3_as_four_2x2_convolutions(monkeypatch, tmp_path, shape, out_c, pad_mode,
                                                norm, block, literal, fp16):
    monkeypatch.setenv("TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_FUSE_UPSAMPLE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_NORM_PROLOGUE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UP2_BLOCK", block)
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UP2_LITERAL", str(literal))
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    model, shapes = up2_model(shape, out_c, pad_mode, norm, seed=shape[-1] + out_c)
    cpu, (plain, plain_stats), (split, split_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, random_inputs(shapes, seed=9),
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(split_stats)
    assert_close(plain, cpu, fp16)
    assert_close(split, cpu, fp16)
    assert plain_stats["dispatches"] == split_stats["dispatches"], (plain_stats, split_stats)
    # The dumps of the second delegate (the pass on) overwrite the first's: one program of it.
    programs = [t for t in (p.read_text() for p in tmp_path.glob("*.comp"))
                if "#define GROUPS " in t]
    assert len(programs) == 1
    text = programs[0]
    _, _, ts, quad = (int(v) for v in block.split("/"))
    out_slices, in_slices = -(-out_c // 4), -(-shape[-1] // 4)
    ts = min(ts, out_slices)
    groups = -(-out_slices // ts)
    assert f"#define GROUPS {groups}\n" in text
    assert ("#define QUAD" in text) == (quad == 1)
    assert ("#define PAR_WG" in text) == (quad == 2)
    vec4s = groups * 4 * 4 * in_slices * ts * 4
    # Literals with highp products only (fp16 storage on llvmpipe keeps them highp).
    highp = "#define MATH_P mediump" not in text
    assert ("#define WEIGHTS_LITERAL" in text) == (highp and vec4s <= literal)
    assert ("#define PROLOGUE_IN" in text) == norm


@pytest.mark.parametrize("case", ["stride_2", "pad_2", "no_upsample"])
def test_convolutions_the_pass_leaves(monkeypatch, tmp_path, case):
    """Only a 3x3, stride 1, padding 1 convolution of an upsample by 2 moves."""
    monkeypatch.setenv("TFLITE_GLES_X_FUSE_UPSAMPLE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    if case == "no_upsample":
        c = Chain([1, 6, 7, 8], seed=3)
        model, shapes = c.build([c.conv(c.x, 8, kernel=3)]), c.input_shapes
    else:  # a SAME convolution at stride 2, or a VALID one after a mirror pad of 2
        model, shapes = upsample_conv_model([1, 6, 7, 8], 2, 8, 3, 0 if case == "stride_2" else 2,
                                            2 if case == "stride_2" else 1, seed=3)
    cpu, (plain, _), (moved, stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, random_inputs(shapes, seed=2))
    assert_fully_delegated(stats)
    assert_close(moved, cpu)
    np.testing.assert_array_equal(plain[0], moved[0])
    assert not any("#define GROUPS " in p.read_text() for p in tmp_path.glob("*.comp"))


@pytest.mark.parametrize("literal", [2048, 0])
@pytest.mark.parametrize("in_c,out_c", [(16, 8), (32, 16)])
def test_the_measured_rule(monkeypatch, tmp_path, literal, in_c, out_c):
    """TFLITE_GLES_X_CONV_UP2=2 (NVIDIA's default): with literal weights (fp32) the layers of
    one output group take them (style's @256), the others' weights go to shared memory (WSMEM,
    @240); without (fp16) every layer reads its weights, 1 output slice per invocation past 4
    input slices."""
    monkeypatch.setenv("TFLITE_GLES_X_FUSE_UPSAMPLE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_NORM_PROLOGUE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UP2_LITERAL", str(literal))
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UP2_WSMEM", "1" if literal else "0")
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    model, shapes = up2_model([1, 10, 9, in_c], out_c, "REFLECT", in_c == 16, seed=5)
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UP2", "0")
    cpu = invoke(interpreter(model), random_inputs(shapes, seed=3))
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UP2", "2")
    gpu, stats = run_gpu(model, random_inputs(shapes, seed=3))
    assert_fully_delegated(stats)
    assert_close(gpu, cpu)
    programs = [t for t in (p.read_text() for p in tmp_path.glob("*.comp"))
                if "#define GROUPS " in t]
    assert len(programs) == 1
    assert ("#define TS 1\n" in programs[0]) == (literal == 0 and in_c == 32)
    assert ("#define WEIGHTS_LITERAL" in programs[0]) == (literal > 0 and out_c == 8)
    assert ("#define WSMEM" in programs[0]) == (literal > 0 and out_c == 16)


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("shape,out_c,block", [([1, 9, 11, 32], 16, "8/4/1/0"),
                                               ([1, 7, 10, 6], 12, "16/2/2/0"),
                                               ([1, 12, 16, 16], 8, "8/8/2/1")])
def test_weights_staged_in_shared_memory(monkeypatch, tmp_path, shape, out_c, block, fp16):
    """WSMEM (TFLITE_GLES_X_CONV_UP2_WSMEM): each slice's weights staged beside the tile."""
    monkeypatch.setenv("TFLITE_GLES_X_FUSE_UPSAMPLE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_NORM_PROLOGUE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UP2_BLOCK", block)
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UP2_LITERAL", "0")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UP2_WSMEM", "1")
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    model, shapes = up2_model(shape, out_c, "REFLECT", True, seed=7)
    cpu, (plain, _), (split, stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, random_inputs(shapes, seed=8), {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(split, cpu, fp16)
    assert any("#define WSMEM" in p.read_text() for p in tmp_path.glob("*.comp"))


def test_summed_weights_through_the_serialization_cache(monkeypatch, tmp_path, capfd):
    """The summed weights (a lazy constant made from conv2d's packing) are model data: a second
    delegate with the same serialization_dir and token loads them and computes the same bits."""
    monkeypatch.setenv("TFLITE_GLES_X_FUSE_UPSAMPLE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UP2", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UP2_LITERAL", "0")
    model, shapes = up2_model([1, 9, 11, 12], 16, "REFLECT", False, seed=4)
    inputs = random_inputs(shapes, seed=5)
    cpu = invoke(interpreter(model), inputs)
    options = {"serialization_dir": str(tmp_path), "model_token": "up2"}
    first, _ = run_gpu(model, inputs, options)
    assert any(p.name.endswith(".tfgdata") for p in tmp_path.iterdir())
    capfd.readouterr()
    second, stats = run_gpu(model, inputs, options)
    line = [l for l in capfd.readouterr().err.splitlines() if "model data:" in l][-1]
    words = line.split("model data: ")[1].split()
    # Both convolutions' packed weights and the summed ones loaded, none converted again.
    assert int(words[0]) == 3 and int(words[3]) == 0, line
    assert_fully_delegated(stats)
    np.testing.assert_array_equal(second[0], first[0])
    assert_close(second, cpu)
