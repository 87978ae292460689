"""conv2d.comp's SMEM_TILE path (shared-memory tiles: NVIDIA's default for
stride-1 convolutions on large maps, DeviceProfile::conv_smem_tile) through
the real LiteRT interpreter, forced on llvmpipe with its developer switch,
against the CPU kernels and the gather path. Split out of test_conv.py
(600-line limit of test_source_rules.py); the models are test_conv's.
"""

import numpy as np
import pytest

from gles_testing import (assert_close, assert_fully_delegated, random_inputs, run_cpu_and_gpu,
                          run_switch_off_and_on)
from test_conv import PRECISIONS, conv_model, window


# Shared-memory tiles (conv2d.comp SMEM_TILE: NVIDIA's default for stride-1
# layers on maps of >= 16384 pixels with <= 8 input slices; forced on
# llvmpipe here): maps no multiple of the 32 x 8 output tile, padded input
# and output lanes, 1, 2 and 4 input slices (the steps written out in the
# shader; 5 keep the gather), 2 slice groups, VALID, 3x3 / 5x5 / 9x9, an upload-fused first
# layer, fused activations; mirror pads done in the tile's gather (style
# transfer's layers); and the GLES 3.1 minimum profile, where a 9x9 window
# takes the 32 x 4 tile to stay within 16 KB. With 2 or more input slices
# the tile sums in another order than the gather, so its fp32 output differs
# from the gather's in the last bits: proof the path ran.
SMEM_SWITCH = "TFLITE_GLES_X_CONV_SMEM_TILE"
# Real GPUs send large windows over few channels to conv2d_window.comp
# (TFLITE_GLES_X_WINDOW_CONV), with the switch on or off: these tests pin
# conv2d.comp so that the switch chooses between its two paths there too
# (on NVIDIA the 9x9 cases compared conv2d_window with itself).
WINDOW_SWITCH = "TFLITE_GLES_X_WINDOW_CONV"
SMEM_CASES = [
    ([1, 129, 131, 5], [6, 3, 3, 5], window(activation="RELU"), None),
    ([1, 128, 128, 3], [8, 9, 9, 3], window(), "first_layer"),
    ([1, 134, 136, 13], [3, 5, 5, 13], window("VALID", activation="RELU6"), None),
    ([1, 130, 128, 16], [16, 3, 3, 16], window(), None),
    ([1, 128, 128, 20], [8, 3, 3, 20], window(), None),  # 5 slices: the gather
    ([1, 131, 128, 8], [5, 9, 9, 8], window(), "gles31-minimum"),
]


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,filter_shape,options,setting", SMEM_CASES)
def test_conv2d_with_shared_memory_tiles(monkeypatch, in_shape, filter_shape, options,
                                         setting, fp16):
    monkeypatch.setenv(WINDOW_SWITCH, "0")
    # The 4-slice limit these cases encode (NVIDIA takes 8: the 8-slice tests below).
    monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_SLICES", "4")
    if setting == "first_layer":
        monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", "1")
        monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")
    elif setting:
        monkeypatch.setenv("TFLITE_GLES_DEVICE_PROFILE", setting)
    model = conv_model("CONV_2D", in_shape, filter_shape, options, seed=filter_shape[0])
    cpu, (plain, _), (tiled, tiled_stats) = run_switch_off_and_on(
        monkeypatch, SMEM_SWITCH, model, random_inputs([in_shape], seed=11),
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(tiled_stats)
    assert_close(plain, cpu, fp16)
    assert_close(tiled, cpu, fp16)
    if 4 < in_shape[3] <= 16 and not fp16:
        assert not np.array_equal(plain[0], tiled[0]), "the shared-memory path did not run"
    elif in_shape[3] > 16:
        np.testing.assert_array_equal(plain[0], tiled[0])  # over 4 slices: not taken


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,out_c", [([1, 128, 128, 8], 3), ([1, 128, 129, 3], 8)])
def test_conv2d_with_shared_memory_tiles_after_a_mirror_pad(monkeypatch, in_shape, out_c,
                                                           fp16):
    from test_mirror_pad_fusion import pad_conv_model
    # Both paths with their products fused one by one (FMA_CHAIN; the test
    # above runs them summed per step).
    monkeypatch.setenv("TFLITE_GLES_X_FMA_CHAIN", "1")
    monkeypatch.setenv(WINDOW_SWITCH, "0")
    if in_shape[3] <= 4:  # style transfer's first layer reads the image's staging
        monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", "1")
        monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")
    model = pad_conv_model(in_shape, ((4, 4), (4, 4)), "REFLECT", [out_c, 9, 9], seed=out_c)
    cpu, (plain, plain_stats), (tiled, tiled_stats) = run_switch_off_and_on(
        monkeypatch, SMEM_SWITCH, model, random_inputs([in_shape], seed=12),
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(tiled_stats)
    assert tiled_stats["dispatches"] == plain_stats["dispatches"]  # the pad stays fused
    assert_close(plain, cpu, fp16)
    assert_close(tiled, cpu, fp16)
    if in_shape[3] > 4 and not fp16:
        assert not np.array_equal(plain[0], tiled[0]), "the shared-memory path did not run"


# SMEM_TILE's block forced (TFLITE_GLES_X_CONV_SMEM_BLOCK=LX/LY/PX/SL, the
# device sweeps' switch): one output slice per invocation, 4-row and 8-wide
# workgroups, 4 pixels per invocation, on a map no multiple of any of them.
@pytest.mark.parametrize("block", ["16/8/1/1", "16/4/2/2", "8/8/4/1"])
def test_conv2d_with_forced_shared_memory_blocks(monkeypatch, block):
    in_shape = [1, 130, 129, 16]
    monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_BLOCK", block)
    model = conv_model("CONV_2D", in_shape, [12, 3, 3, 16], window(activation="RELU"), seed=3)
    cpu, (plain, _), (tiled, tiled_stats) = run_switch_off_and_on(
        monkeypatch, SMEM_SWITCH, model, random_inputs([in_shape], seed=13), {})
    assert_fully_delegated(tiled_stats)
    assert_close(plain, cpu, False)
    assert_close(tiled, cpu, False)
    assert not np.array_equal(plain[0], tiled[0]), "the shared-memory path did not run"


# ST_PREFETCH (TFLITE_GLES_X_CONV_SMEM_PREFETCH): the next input slice's tile and
# weights loaded into registers during this slice's taps. Same sums in the same
# order as SMEM_TILE without it: the outputs are equal bit for bit, and the dumped
# program shows the define. 3x3 16 -> 12 (3 vec4s per invocation, 2 slices of
# weights), 5x5 8 -> 4 (4 vec4s: every slot), a mirror pad in the gather and 2
# input slices; 5x5 over 2 output slices (200 weight vec4s for 128 invocations)
# keeps the plain staging.
PREFETCH_CASES = [([1, 130, 129, 16], [12, 3, 3, 16], None, True),
                  ([1, 129, 131, 8], [4, 5, 5, 8], None, True),
                  ([1, 128, 130, 8], [8, 3, 3, 8], "mirror", True),
                  ([1, 128, 128, 8], [8, 5, 5, 8], None, False)]


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,filter_shape,setting,prefetched", PREFETCH_CASES)
def test_conv2d_shared_memory_tiles_with_prefetch(monkeypatch, tmp_path, in_shape,
                                                  filter_shape, setting, prefetched, fp16):
    from test_mirror_pad_fusion import pad_conv_model
    monkeypatch.setenv(WINDOW_SWITCH, "0")
    monkeypatch.setenv(SMEM_SWITCH, "1")
    if not prefetched:  # the 128-invocation block the comment counts (NVIDIA's is wider)
        monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_BLOCK", "16/8/1/2")
    if setting == "mirror":
        model = pad_conv_model(in_shape, ((1, 1), (1, 1)), "REFLECT", filter_shape[:3], seed=5)
    else:
        model = conv_model("CONV_2D", in_shape, filter_shape, window(activation="RELU"), seed=4)
    inputs = random_inputs([in_shape], seed=14)
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    cpu, (plain, _), (fetched, stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_CONV_SMEM_PREFETCH", model, inputs,
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(fetched, cpu, fp16)
    np.testing.assert_array_equal(plain[0], fetched[0])
    dumped = [p.read_text() for p in tmp_path.glob("*.comp")]
    assert any("#define SMEM_TILE" in t for t in dumped)
    assert any("#define ST_PREFETCH 1" in t for t in dumped) == prefetched


# Up to 8 input slices (TFLITE_GLES_X_CONV_SMEM_SLICES=8; conv2d.comp writes
# steps 4-7 out together, a step past the layer's slices meeting only its
# barriers): 8 slices (style's @240 shape, 32 -> 16) and 5, with and without
# ST_PREFETCH (equal bit for bit), against the CPU.
@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,filter_shape", [([1, 128, 130, 32], [16, 3, 3, 32]),
                                                   ([1, 129, 128, 20], [8, 3, 3, 20])])
def test_conv2d_shared_memory_tiles_of_up_to_8_slices(monkeypatch, tmp_path, in_shape,
                                                      filter_shape, fp16):
    monkeypatch.setenv(WINDOW_SWITCH, "0")
    monkeypatch.setenv(SMEM_SWITCH, "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_SLICES", "8")
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    model = conv_model("CONV_2D", in_shape, filter_shape, window(activation="RELU"), seed=6)
    cpu, (plain, _), (fetched, stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_CONV_SMEM_PREFETCH", model,
        random_inputs([in_shape], seed=15), {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(plain, cpu, fp16)
    assert_close(fetched, cpu, fp16)
    np.testing.assert_array_equal(plain[0], fetched[0])
    dumped = [p.read_text() for p in tmp_path.glob("*.comp")]
    slices = (in_shape[3] + 3) // 4
    assert any(f"#define ST_SLICES {slices}" in t and "#define ST_PREFETCH 1" in t
               for t in dumped)


# NVIDIA's rule (TFLITE_GLES_X_CONV_SMEM_PREFETCH=2, forced here with the many-core fill
# rule's 65536 invocations): layers of > 4 input slices, and in fp16 of 4, take 16 x 8
# invocations of 1 pixel x 2 slices with ST_PREFETCH; a 2-slice layer keeps its block and no
# prefetch; a 4-slice layer too small for 1 x 2 gets the fill block without prefetch.
@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,filter_shape", [([1, 192, 192, 32], [16, 3, 3, 32]),
                                                   ([1, 384, 384, 16], [8, 3, 3, 16]),
                                                   ([1, 128, 128, 16], [16, 3, 3, 16]),
                                                   ([1, 192, 192, 8], [16, 3, 3, 8])])
def test_conv2d_shared_memory_tiles_by_the_prefetch_rule(monkeypatch, tmp_path, in_shape,
                                                         filter_shape, fp16):
    monkeypatch.setenv(WINDOW_SWITCH, "0")
    monkeypatch.setenv(SMEM_SWITCH, "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_SLICES", "8")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_PREFETCH", "2")
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", "65536")
    # This rule alone: NVIDIA fp32's ST_LIT (literal weights, with their own prefetch on
    # that GPU) has its own tests below.
    monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_LIT", "0")
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    model = conv_model("CONV_2D", in_shape, filter_shape, window(activation="RELU"), seed=7)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=16),
                                      {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)
    text = next(t for t in (p.read_text() for p in tmp_path.glob("*.comp"))
                if "#define SMEM_TILE" in t)
    slices = in_shape[3] // 4
    ruled = slices > (3 if fp16 else 4)
    pixels = in_shape[1] * in_shape[2]
    fill = ruled and pixels * filter_shape[0] // 4 // 2 < 65536
    assert ("#define ST_PREFETCH 1" in text) == (ruled and not fill)
    if ruled and not fill:
        assert "#define TILE_ROWS 1" in text and "#define TILE_SLICES 2" in text


# ST_WONCE (TFLITE_GLES_X_CONV_SMEM_WONCE: every input slice's weights staged once) and ST_DB
# (TFLITE_GLES_X_CONV_SMEM_DB, with it: two tiles, one barrier per slice): the same sums in the
# same order as the per-slice staging, so equal to it bit for bit; the dumped program shows the
# defines. 4 slices over 2 slice groups (the default block, 16 x 4 of 4 pixels, ST_PREFETCH),
# 8 slices (style's @240 shape), a mirror pad in the gather with 8 x 8 of 4 pixels, 5x5.
WONCE_CASES = [([1, 130, 129, 16], [12, 3, 3, 16], None, None),
               ([1, 130, 129, 16], [12, 3, 3, 16], None, "16/4/4/2"),
               ([1, 130, 129, 16], [12, 3, 3, 16], "prefetch", None),
               ([1, 128, 130, 32], [16, 3, 3, 32], None, None),
               ([1, 128, 130, 8], [8, 3, 3, 8], "mirror", "8/8/4/1"),
               ([1, 129, 131, 8], [4, 5, 5, 8], None, None)]


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("db", [False, True])
@pytest.mark.parametrize("in_shape,filter_shape,setting,block", WONCE_CASES)
def test_conv2d_shared_memory_tiles_with_weights_staged_once(monkeypatch, tmp_path, in_shape,
                                                             filter_shape, setting, block, db,
                                                             fp16):
    from test_mirror_pad_fusion import pad_conv_model
    monkeypatch.setenv(WINDOW_SWITCH, "0")
    monkeypatch.setenv(SMEM_SWITCH, "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_SLICES", "8")
    if block:
        monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_BLOCK", block)
    if setting == "prefetch":
        monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_PREFETCH", "1")
    if db:
        monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_DB", "1")
    if setting == "mirror":
        model = pad_conv_model(in_shape, ((1, 1), (1, 1)), "REFLECT", filter_shape[:3], seed=8)
    else:
        model = conv_model("CONV_2D", in_shape, filter_shape, window(activation="RELU"), seed=9)
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    cpu, (plain, _), (once, stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_CONV_SMEM_WONCE", model,
        random_inputs([in_shape], seed=17), {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(once, cpu, fp16)
    np.testing.assert_array_equal(plain[0], once[0])
    dumped = [p.read_text() for p in tmp_path.glob("*.comp")]
    assert any("#define ST_WONCE 1" in t for t in dumped)
    assert any("#define ST_DB 1" in t for t in dumped) == db


# ST_LIT (TFLITE_GLES_X_CONV_SMEM_LIT: 1 fp32 storage, 2 fp16 too): layers of <= 2 output
# slices take 1 pixel x every slice per invocation, their weights as constants in the
# program; the same sums in the same order, against the CPU and the shared-memory staging.
# 3x3 16 -> 8 (style's @256 shape), 32 -> 6 (8 input slices, padded lanes), a mirror pad in
# the gather, 5x5; 12 and 16 outputs (3, 4 slices) keep the staged weights.
LIT_CASES = [([1, 130, 129, 16], [8, 3, 3, 16], None),
             ([1, 128, 130, 32], [6, 3, 3, 32], None),
             ([1, 129, 128, 8], [12, 3, 3, 8], None),
             ([1, 128, 130, 8], [8, 3, 3, 8], "mirror"),
             ([1, 129, 131, 8], [4, 5, 5, 8], None),
             ([1, 128, 128, 8], [16, 3, 3, 8], None)]


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,filter_shape,setting", LIT_CASES)
def test_conv2d_shared_memory_tiles_with_literal_weights(monkeypatch, tmp_path, in_shape,
                                                         filter_shape, setting, fp16):
    from test_mirror_pad_fusion import pad_conv_model
    monkeypatch.setenv(WINDOW_SWITCH, "0")
    monkeypatch.setenv(SMEM_SWITCH, "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_SLICES", "8")
    # The many-core fill block (1 x 1 per invocation: NVIDIA's on these maps) has one slice.
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", "0")
    if setting == "mirror":
        model = pad_conv_model(in_shape, ((1, 1), (1, 1)), "REFLECT", filter_shape[:3], seed=10)
    else:
        model = conv_model("CONV_2D", in_shape, filter_shape, window(activation="RELU"), seed=11)
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    cpu, gpu, _ = run_cpu_and_gpu(model, random_inputs([in_shape], seed=18),
                                  {"precision_loss_allowed": fp16})
    monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_LIT", "2")
    lit_cpu, lit, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=18),
                                          {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)
    assert_close(lit, lit_cpu, fp16)
    dumped = [p.read_text() for p in tmp_path.glob("*.comp")]
    assert any("#define ST_LIT_N " in t for t in dumped) == (filter_shape[0] <= 8)


# Session 19's forms of ST_LIT (forced on llvmpipe by their switches): two slice groups of
# literals (ST_LIT_G: 4 output slices; 3 with the last group padded), two slices staged per
# barrier (ST_PAIR), two tiles (ST_DB), the prefetch, shapes compiled in, the tile's sources
# set once (ST_HOIST; with the prefetch too); a mirror pad in
# the gather. Each against the CPU, its program checked for the form's define.
LIT_FORMS = [("LIT_GROUPS", "#define ST_LIT_G 2"), ("PAIR", "#define ST_PAIR 1"),
             ("DB", "#define ST_DB 1"), ("PREFETCH", "#define ST_PREFETCH 1"),
             ("LIT_SPEC", "#define SPECIALIZED 1"), ("HOIST", "#define ST_HOIST 1"),
             ("HOIST,PREFETCH", "#define ST_PREFETCH 1")]
LIT_FORM_CASES = [([1, 130, 129, 16], [8, 3, 3, 16], None),
                  ([1, 128, 130, 32], [16, 3, 3, 32], None),
                  ([1, 129, 128, 20], [12, 3, 3, 20], None),
                  ([1, 128, 130, 8], [8, 3, 3, 8], "mirror")]


@pytest.mark.parametrize("form,define", LIT_FORMS)
@pytest.mark.parametrize("in_shape,filter_shape,setting", LIT_FORM_CASES)
def test_conv2d_literal_weights_forms(monkeypatch, tmp_path, in_shape, filter_shape, setting,
                                      form, define):
    from test_mirror_pad_fusion import pad_conv_model
    switches = {WINDOW_SWITCH: "0", SMEM_SWITCH: "1", "TFLITE_GLES_MIN_INVOCATIONS": "0",
                "TFLITE_GLES_X_CONV_SMEM_SLICES": "8", "TFLITE_GLES_X_CONV_SMEM_LIT": "1",
                "TFLITE_GLES_X_CONV_SMEM_LIT_GROUPS": "2",
                "TFLITE_GLES_X_DUMP_SHADERS": str(tmp_path)}
    if form != "LIT_GROUPS":
        switches.update({f"TFLITE_GLES_X_CONV_SMEM_{f}": "1" for f in form.split(",")})
    for name, value in switches.items():
        monkeypatch.setenv(name, value)
    if setting == "mirror":
        model = pad_conv_model(in_shape, ((1, 1), (1, 1)), "REFLECT", filter_shape[:3], seed=10)
    else:
        model = conv_model("CONV_2D", in_shape, filter_shape, window(activation="RELU"), seed=11)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=18))
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, False)
    dumped = [p.read_text() for p in tmp_path.glob("*.comp")]
    lit = [t for t in dumped if "#define ST_LIT_N " in t]
    assert lit, "ST_LIT did not run"
    groups = -(-filter_shape[0] // 8)
    assert any("#define ST_LIT_G 2\n" in t for t in lit) == (groups > 1)
    assert any(define in t for t in lit) == (form != "LIT_GROUPS" or groups > 1)
