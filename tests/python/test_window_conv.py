"""Large windows over few channels from a shared-memory window
(shaders/conv2d_window.comp, delegate/passes/window_conv.h): the real LiteRT
CPU kernels against the delegate with the path off and on, on random data.

Cases: style transfer's 9x9 first layer (3 -> 8, reading the image's upload
staging, mirror padding folded in) and last layer (8 -> 3, one output slice
of 3 lanes), zero padding (SAME) on both sides, SYMMETRIC mirroring, 5 and 6
channels (a last slice of 1-2 real lanes), 1 and 2 output channels, batch 2,
an elementwise ADD in the epilogue, maps that are no multiple of the block,
and blocks forced small, so that many workgroups meet at every edge; each
with ROW_REUSE (conv2d_window.comp) off and on. The path must be taken (the profile names the shader) and the results must stay
within the usual bounds.
"""

import re

import numpy as np
import pytest

import gles_testing as gt
from gles_testing import ModelBuilder, assert_close, assert_fully_delegated, random_inputs

SWITCH = "TFLITE_GLES_X_WINDOW_CONV"


def window_model(in_shape, out_c, kernel, pads=None, mode="REFLECT", conv_padding="VALID",
                 add_input=False, seed=0):
    """[MIRROR_PAD ->] CONV_2D (RELU) [-> ADD of a second input]."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.add_input(in_shape)
    conv_in, shape = x, list(in_shape)
    if pads is not None:
        (top, bottom), (left, right) = pads
        shape = [in_shape[0], in_shape[1] + top + bottom, in_shape[2] + left + right, in_shape[3]]
        conv_in = b.add_tensor(shape)
        paddings = np.array([[0, 0], [top, bottom], [left, right], [0, 0]], np.int32)
        b.add_op("MIRROR_PAD", [x, b.add_const(paddings)], [conv_in], {"mode": mode})
    kh, kw = kernel
    if conv_padding == "SAME":
        out_h, out_w = shape[1], shape[2]
    else:
        out_h, out_w = shape[1] - kh + 1, shape[2] - kw + 1
    out_shape = [in_shape[0], out_h, out_w, out_c]
    o = b.add_tensor(out_shape)
    b.add_op("CONV_2D", [conv_in,
                         b.add_const(rng.uniform(-0.5, 0.5, [out_c, kh, kw, in_shape[3]])
                                     .astype(np.float32)),
                         b.add_const(rng.uniform(-1, 1, [out_c]).astype(np.float32))],
             [o], {"padding": conv_padding, "stride_h": 1, "stride_w": 1,
                   "fused_activation_function": "RELU"})
    shapes = [in_shape]
    if add_input:
        y = b.add_input(out_shape)
        s = b.add_tensor(out_shape)
        b.add_op("ADD", [o, y], [s])
        o = s
        shapes.append(out_shape)
    b.set_outputs([o])
    return b.build(), shapes


def run(monkeypatch, model, inputs, fp16, switch):
    """Outputs, the shader of every dispatch, and the delegate's stats."""
    monkeypatch.setenv(SWITCH, switch)  # read when the delegate is created
    delegate = gt.make_delegate({"precision_loss_allowed": fp16, "enable_profiling": "true"})
    interp = gt.interpreter(model, delegate)
    outputs = gt.invoke(interp, inputs)
    shaders = [e["shader"] for e in gt.profile(delegate)]
    stats = gt.stats(delegate)
    del interp
    return outputs, shaders, stats


# (input, output channels, kernel, mirror pads, mode, conv padding, ADD,
#  forced block PX/LOCAL_X/LOCAL_Y or "1", first layer on the upload staging)
CASES = [
    ([1, 21, 19, 3], 8, (9, 9), ((4, 4), (4, 4)), "REFLECT", "VALID", False, "1", True),
    ([1, 20, 23, 8], 3, (9, 9), ((4, 4), (4, 4)), "REFLECT", "VALID", False, "1/8/4", False),
    ([2, 13, 11, 5], 6, (5, 5), ((2, 2), (2, 2)), "SYMMETRIC", "VALID", True, "2/4/4", False),
    ([1, 17, 14, 6], 2, (7, 5), None, None, "SAME", False, "3/4/8", False),
    ([1, 12, 26, 4], 1, (5, 7), None, None, "VALID", True, "1", False),
]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("in_shape,out_c,kernel,pads,mode,conv_padding,add,block,first", CASES)
def test_window_convolution_matches_the_cpu(monkeypatch, tmp_path, in_shape, out_c, kernel, pads,
                                            mode, conv_padding, add, block, first, fp16):
    if first:
        monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", "1")
        monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")
    model, shapes = window_model(in_shape, out_c, kernel, pads, mode, conv_padding, add,
                                 seed=in_shape[3])
    inputs = random_inputs(shapes, seed=3)
    cpu = gt.invoke(gt.interpreter(model), inputs)
    plain, plain_shaders, _ = run(monkeypatch, model, inputs, fp16, "0")
    window, window_shaders, stats = run(monkeypatch, model, inputs, fp16, block)
    assert_fully_delegated(stats)
    assert "conv2d_window" not in plain_shaders
    assert window_shaders.count("conv2d_window") == 1, window_shaders
    assert len(window_shaders) == len(plain_shaders)
    if first:  # the image is read from its staging: no upload conversion
        assert window_shaders[0] == "conv2d_window", window_shaders
    assert_close(plain, cpu, fp16)
    assert_close(window, cpu, fp16)
    # ROW_REUSE (registers slid over the taps, weights in shared memory;
    # NVIDIA's default), forced both ways here; the dumped program shows it.
    # With FMA_CHAIN too (products fused into the accumulators one by one;
    # in fp32, where products and accumulators have one precision).
    for reuse, fma in (("0", "0"), ("1", "0"), ("1", "1")):
        monkeypatch.setenv("TFLITE_GLES_X_WINDOW_REUSE", reuse)
        monkeypatch.setenv("TFLITE_GLES_X_FMA_CHAIN", fma)
        folder = tmp_path / (reuse + fma)
        monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(folder))
        folder.mkdir()
        again, _, _ = run(monkeypatch, model, inputs, fp16, block)
        dumped = [p.read_text() for p in folder.glob("*.comp")]
        dumped = [t for t in dumped if "// @dump shader conv2d_window" in t]
        assert dumped
        assert any("#define ROW_REUSE" in text for text in dumped) == (reuse == "1")
        for text in dumped:  # fused where products and accumulators have one precision
            # (both highp, or both mediump where DeviceProfile::window_conv_acc_mediump
            # makes fp16's accumulators mediump too: NVIDIA's default)
            math_p, acc_p = (m.group(1) if m else "highp" for m in (
                re.search(rf"#define {n} (\w+)", text) for n in ("MATH_P", "ACC_P")))
            one_precision = math_p == acc_p
            # and an invocation has >= 4 accumulators (PX x output slices)
            px, slices = (int(re.search(rf"#define {n} (\d+)", text).group(1))
                          for n in ("PX", "OUT_SLICES"))
            # (or its weights are literals: NVIDIA's fp32 default, test_window_literal.py)
            literal = "#define WEIGHTS_LITERAL" in text
            assert ("#define FMA_CHAIN 1" in text) == (fma == "1" and one_precision and
                                                       (px * slices >= 4 or literal))
        assert_close(again, cpu, fp16)


def test_small_windows_and_many_slices_keep_the_gather(monkeypatch):
    """A 3x3 window and a 12-channel input stay in conv2d.comp."""
    for in_shape, out_c, kernel in (([1, 12, 12, 3], 8, (3, 3)), ([1, 12, 12, 12], 3, (9, 9))):
        model, shapes = window_model(in_shape, out_c, kernel, seed=2)
        inputs = random_inputs(shapes, seed=1)
        outputs, shaders, _ = run(monkeypatch, model, inputs, False, "1")
        assert "conv2d_window" not in shaders
        assert_close(outputs, gt.invoke(gt.interpreter(model), inputs))


# DeviceProfile::window_conv_small (TFLITE_GLES_X_WINDOW_SMALL): 3x3 windows
# over up to 8 input / 4 output slices (style's @240 32 -> 16 after a 2x
# nearest upsampling, @256 16 -> 8) in the window kernel, whichever block
# fits (on llvmpipe's 32 KB: 1/8/8 with ROW_REUSE for 8 slices).
# DeviceProfile::fma_chain (TFLITE_GLES_X_FMA_CHAIN) with ROW_REUSE.
SMALL_CASES = [
    ([1, 14, 13, 32], 16, ((1, 1), (1, 1))),
    ([1, 11, 19, 16], 7, None),
]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("in_shape,out_c,pads", SMALL_CASES)
def test_window_small_takes_3x3_layers_of_many_slices(monkeypatch, in_shape, out_c, pads, fp16):
    model, shapes = window_model(in_shape, out_c, (3, 3), pads, "REFLECT",
                                 "VALID" if pads else "SAME", seed=in_shape[3])
    inputs = random_inputs(shapes, seed=4)
    cpu = gt.invoke(gt.interpreter(model), inputs)
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_SMALL", "1")
    for reuse in ("0", "1"):
        # ROW_REUSE off and on, the second with FMA_CHAIN (products fused
        # into the accumulators one by one).
        monkeypatch.setenv("TFLITE_GLES_X_WINDOW_REUSE", reuse)
        monkeypatch.setenv("TFLITE_GLES_X_FMA_CHAIN", reuse)
        outputs, shaders, stats = run(monkeypatch, model, inputs, fp16, "1")
        assert_fully_delegated(stats)
        assert shaders.count("conv2d_window") == 1, shaders
        assert_close(outputs, cpu, fp16)


# DeviceProfile::window_conv_slice_steps (TFLITE_GLES_X_WINDOW_SLICE_STEPS):
# one input slice's window in shared memory at a time, the slices staged and
# consumed in steps (the next one's loads in flight during this one's taps),
# so that blocks of 4-8 pixels per invocation fit: 9x9 over 2 slices, 3x3
# over 5 and 8 slices (WINDOW_SMALL), each in a block with edges inside the
# map and ROW_REUSE on (SLICE_STEPS needs it); one input slice: no steps.
# PACK3 (3-lane weights as 3 vec4s per 4), BLOCK_STEPS (blocks stacked
# along y per workgroup, without SLICE_STEPS: one input slice) and, in fp16,
# HALF_SMEM (window and weights as packed halves) ride along:
# (input, output channels, kernel, mirror pads, block, PACK3, BLOCK_STEPS).
SLICE_CASES = [
    ([1, 20, 23, 8], 3, (9, 9), ((4, 4), (4, 4)), "4/4/4", "1", "1"),
    ([1, 14, 13, 32], 16, (3, 3), ((1, 1), (1, 1)), "4/4/4", "0", "1"),
    ([1, 11, 19, 20], 7, (3, 3), None, "8/2/4", "0", "1"),
    ([1, 21, 19, 3], 8, (9, 9), ((4, 4), (4, 4)), "2/8/4", "0", "3"),
    ([1, 18, 9, 4], 3, (5, 5), None, "1/4/4", "1", "2"),
]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("in_shape,out_c,kernel,pads,block,pack3,block_steps", SLICE_CASES)
def test_window_slice_steps(monkeypatch, tmp_path, in_shape, out_c, kernel, pads, block, pack3,
                            block_steps, fp16):
    model, shapes = window_model(in_shape, out_c, kernel, pads, "REFLECT",
                                 "VALID" if pads else "SAME", seed=in_shape[3])
    inputs = random_inputs(shapes, seed=5)
    cpu = gt.invoke(gt.interpreter(model), inputs)
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_SMALL", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_REUSE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_SLICE_STEPS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_PACK3", pack3)
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_BLOCK_STEPS", block_steps)
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_HALF_SMEM", "1")  # fp16 storage only
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_LITERAL_PX", "0")  # the block asserted below
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    outputs, shaders, stats = run(monkeypatch, model, inputs, fp16, block)
    assert_fully_delegated(stats)
    assert shaders.count("conv2d_window") == 1, shaders
    dumped = [p.read_text() for p in tmp_path.glob("*.comp")]
    dumped = [t for t in dumped if "// @dump shader conv2d_window" in t]
    assert len(dumped) == 1
    text = dumped[0]
    assert ("#define SLICE_STEPS" in text) == (in_shape[3] > 4)
    assert f"#define PX {block.split('/')[0]}" in text
    # (literal weights, NVIDIA's fp32 default, take PACK3's place)
    assert ("#define PACK3" in text) == (pack3 == "1" and "#define WEIGHTS_LITERAL" not in text)
    assert ("#define HALF_SMEM" in text) == fp16
    # (the shader's own fallback defines BLOCK_STEPS 1)
    assert re.findall(r"#define BLOCK_STEPS (\d)", text)[0] == block_steps
    assert_close(outputs, cpu, fp16)
