"""Constant weights written into conv2d_window.comp's program as literals
(WEIGHTS_LITERAL, DeviceProfile::window_conv_literal_weights, switch
TFLITE_GLES_X_WINDOW_LITERAL; delegate/kernels/literal_weights.h): the real
LiteRT CPU kernels against the delegate with the switch forced on, so that
llvmpipe runs the path too.

Cases: style transfer's 9x9 first layer (3 -> 8, on the image's upload
staging, mirror padding folded in) and last layer (8 -> 3: two input slices
in SLICE_STEPS, where the literals replace PACK3's staging), a 5x7 window
with an ADD epilogue, and 2-8 pixels per invocation; fp32 and fp16 (the path
only where the products are highp: NVIDIA's fp16 keeps its weights in shared
memory). A layer
whose weights exceed the literal budget (3x3 over 32 -> 16 channels, 1152
vec4s) keeps its shared-memory weights.
"""

import pytest

import gles_testing as gt
from gles_testing import assert_close, assert_fully_delegated, random_inputs
from test_window_conv import run, window_model

# (input, output channels, kernel, mirror pads, conv padding, ADD, block, upload staging)
CASES = [
    ([1, 21, 19, 3], 8, (9, 9), ((4, 4), (4, 4)), "VALID", False, "2/8/4", True),
    ([1, 20, 23, 8], 3, (9, 9), ((4, 4), (4, 4)), "VALID", False, "2/8/4", False),
    ([1, 20, 23, 8], 3, (9, 9), ((4, 4), (4, 4)), "VALID", False, "8/4/4", False),
    ([2, 17, 14, 6], 2, (5, 7), None, "SAME", True, "3/4/8", False),
]


def dumped_window_programs(folder):
    texts = [p.read_text() for p in folder.glob("*.comp")]
    return [t for t in texts if "// @dump shader conv2d_window" in t]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("in_shape,out_c,kernel,pads,conv_padding,add,block,first", CASES)
def test_literal_weights_match_the_cpu(monkeypatch, tmp_path, in_shape, out_c, kernel, pads,
                                       conv_padding, add, block, first, fp16):
    if first:
        monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", "1")
        monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")
    model, shapes = window_model(in_shape, out_c, kernel, pads, "REFLECT", conv_padding, add,
                                 seed=in_shape[3])
    inputs = random_inputs(shapes, seed=7)
    cpu = gt.invoke(gt.interpreter(model), inputs)
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_REUSE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_SLICE_STEPS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_PACK3", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_LITERAL", "1")
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    outputs, shaders, stats = run(monkeypatch, model, inputs, fp16, block)
    assert_fully_delegated(stats)
    assert shaders.count("conv2d_window") == 1, shaders
    if first:
        assert shaders[0] == "conv2d_window", shaders
    (text,) = dumped_window_programs(tmp_path)
    # highp products only (fp32, or fp16 storage with highp math: llvmpipe's)
    literal = "#define MATH_P mediump" not in text
    assert ("#define WEIGHTS_LITERAL" in text) == literal
    assert ("#define WEIGHT_VALUES vec4(" in text) == literal
    if literal:
        assert "#define PACK3" not in text
    assert_close(outputs, cpu, fp16)


@pytest.mark.parametrize("vec4s,literal", [("1024", False), ("1152", True)])
def test_large_weights_stay_in_shared_memory(monkeypatch, tmp_path, vec4s, literal):
    """3x3 over 32 -> 16 channels (style's @240): 1152 weight vec4s, over a
    budget of 1024 (the default off NVIDIA fp32, where it is 2048: the budget is
    set here so that the case holds on every GPU); 1152 takes them."""
    model, shapes = window_model([1, 14, 13, 32], 16, (3, 3), ((1, 1), (1, 1)), "REFLECT",
                                 "VALID", seed=32)
    inputs = random_inputs(shapes, seed=7)
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_SMALL", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_REUSE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_LITERAL", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_LITERAL_VEC4S", vec4s)
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    outputs, shaders, _ = run(monkeypatch, model, inputs, False, "1")
    assert shaders.count("conv2d_window") == 1, shaders
    (text,) = dumped_window_programs(tmp_path)
    assert ("#define WEIGHTS_LITERAL" in text) == literal
    assert_close(outputs, gt.invoke(gt.interpreter(model), inputs))


def test_literal_px_sets_the_block_of_one_output_slice(monkeypatch, tmp_path):
    """TFLITE_GLES_X_WINDOW_LITERAL_PX: an 8 -> 3 layer with literal weights
    takes 3 pixels per invocation (an odd PX: its window rows unskewed)."""
    model, shapes = window_model([1, 20, 23, 8], 3, (9, 9), ((4, 4), (4, 4)), "REFLECT", "VALID",
                                 seed=8)
    inputs = random_inputs(shapes, seed=7)
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_REUSE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_SLICE_STEPS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_LITERAL", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_LITERAL_PX", "3")
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    outputs, shaders, stats = run(monkeypatch, model, inputs, False, "1")
    assert_fully_delegated(stats)
    (text,) = dumped_window_programs(tmp_path)
    assert "#define WEIGHTS_LITERAL" in text and "#define PX 3" in text
    assert_close(outputs, gt.invoke(gt.interpreter(model), inputs))


def test_literal_px_sets_the_block_of_two_output_slices(monkeypatch, tmp_path):
    """TFLITE_GLES_X_WINDOW_LITERAL_PX on a 3 -> 8 layer (two output slices,
    as style's input layer @3): 1 pixel per invocation, the mirror padding
    gathered, against LiteRT's CPU kernels."""
    model, shapes = window_model([1, 21, 19, 3], 8, (9, 9), ((4, 4), (4, 4)), "REFLECT", "VALID",
                                 seed=9)
    inputs = random_inputs(shapes, seed=10)
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_REUSE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_LITERAL", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_LITERAL_PX", "1")
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    outputs, shaders, stats = run(monkeypatch, model, inputs, False, "1")
    assert_fully_delegated(stats)
    (text,) = dumped_window_programs(tmp_path)
    assert "#define WEIGHTS_LITERAL" in text and "#define PX 1" in text
    assert "#define OUT_SLICES 2" in text
    assert_close(outputs, gt.invoke(gt.interpreter(model), inputs))


@pytest.mark.parametrize("small_lit,window", [("5", True), ("10", False)])
def test_small_windows_where_weights_become_literals(monkeypatch, tmp_path, small_lit, window):
    """TFLITE_GLES_X_WINDOW_SMALL_LIT: a 3x3 16 -> 8 layer (style's @256 in small) takes the
    window kernel with literal weights where it has at least that many MFLOP (this one 9.1),
    and stays in conv2d.comp below; WINDOW_SMALL itself off."""
    model, shapes = window_model([1, 64, 62, 16], 8, (3, 3), ((1, 1), (1, 1)), "REFLECT",
                                 "VALID", seed=16)
    inputs = random_inputs(shapes, seed=7)
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_SMALL", "0")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_SMALL_LIT", small_lit)
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_REUSE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_SLICE_STEPS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_LITERAL", "1")
    monkeypatch.setenv("TFLITE_GLES_X_WINDOW_LITERAL_PX", "1")
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    outputs, shaders, stats = run(monkeypatch, model, inputs, False, "1")
    assert_fully_delegated(stats)
    assert shaders.count("conv2d_window") == (1 if window else 0), shaders
    if window:
        (text,) = dumped_window_programs(tmp_path)
        assert "#define WEIGHTS_LITERAL" in text and "#define PX 1\n" in text
    assert_close(outputs, gt.invoke(gt.interpreter(model), inputs))
