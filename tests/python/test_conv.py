"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED through the real LiteRT
interpreter: each single-op model runs on the CPU kernels and through the
delegate, fully delegated, and the answers agree. Nodes the delegate
declines stay on the CPU, say why in the log, and still answer right.
Transposed convolutions: test_transpose_conv.py.
"""

import numpy as np
import pytest

from gles_testing import (ModelBuilder, assert_close, assert_fully_delegated, random_inputs,
                          run_cpu_and_gpu, run_switch_off_and_on)

PRECISIONS = [False, True]


def conv_model(op, in_shape, filter_shape, options, bias=True, version=1, seed=0):
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.add_input(in_shape)
    w = b.add_const(rng.uniform(-0.5, 0.5, filter_shape).astype(np.float32))
    out_c = filter_shape[0] if op == "CONV_2D" else filter_shape[3]
    bias_index = b.add_const(rng.uniform(-1, 1, [out_c]).astype(np.float32)) if bias else -1
    o = b.add_tensor(output_shape(op, in_shape, filter_shape, options))
    b.add_op(op, [x, w, bias_index], [o], options, version=version)
    return b.build()


def output_shape(op, in_shape, filter_shape, options):
    """TFLite's output size rule (SAME: ceil(in / s); VALID: from the window)."""
    n, h, w, _ = in_shape
    kh, kw = filter_shape[1], filter_shape[2]
    dh, dw = options.get("dilation_h_factor", 1), options.get("dilation_w_factor", 1)
    sh, sw = options["stride_h"], options["stride_w"]

    def size(i, k, s, d):
        return -(-i // s) if options["padding"] == "SAME" else (i - (k - 1) * d - 1) // s + 1

    out_c = filter_shape[0] if op == "CONV_2D" else filter_shape[3]
    return [n, size(h, kh, sh, dh), size(w, kw, sw, dw), out_c]


def window(padding="SAME", stride=1, dilation=1, activation="NONE"):
    return {"padding": padding, "stride_h": stride, "stride_w": stride,
            "dilation_h_factor": dilation, "dilation_w_factor": dilation,
            "fused_activation_function": activation}


# (input shape, filter OHWI, options): channels 1/3/4/5/8/13, odd sizes,
# size 1, batch 2, strides, dilation, padding, the ReLU-family activations.
CONV_CASES = [
    ([1, 7, 5, 1], [4, 1, 1, 1], window()),
    ([2, 12, 12, 13], [8, 1, 1, 13], window(activation="RELU_N1_TO_1")),
    ([2, 6, 5, 3], [5, 3, 3, 3], window(activation="RELU")),
    ([1, 9, 7, 4], [8, 3, 3, 4], window(stride=2, activation="RELU6")),
    ([1, 11, 9, 5], [13, 3, 3, 5], window("VALID", stride=2)),
    ([1, 9, 10, 8], [4, 3, 3, 8], window(dilation=2)),
    ([1, 1, 1, 8], [3, 3, 3, 8], window()),
]


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,filter_shape,options", CONV_CASES)
def test_conv2d(in_shape, filter_shape, options, fp16):
    version = 2 if options["dilation_h_factor"] > 1 else 1
    model = conv_model("CONV_2D", in_shape, filter_shape, options, version=version)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=1),
                                      {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)



# The tiles a many-core GPU's DeviceProfile::min_invocations picks
# (kernels/conv_common.cc ChooseGemmTile), on a first layer that reads the
# image's upload staging itself (upload fusion, as real GPUs run it): 32x32
# outputs x 8 slices take the llvmpipe tile (0), then 4x2, 2x2, 2x1 and one
# output per invocation (65536, the H200's default) as the target grows.
@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("min_invocations", ["0", "1024", "2048", "4096", "65536"])
def test_first_layer_over_the_tiles_a_gpu_picks(monkeypatch, min_invocations, fp16):
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", min_invocations)
    monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", "1")
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")  # staged, as images are
    # Read back through a conversion, as real GPUs do (llvmpipe relays it out
    # on the CPU: DeviceProfile::cpu_readback_relayout).
    monkeypatch.setenv("TFLITE_GLES_X_CPU_READBACK_RELAYOUT", "0")
    in_shape = [1, 63, 64, 3]
    model = conv_model("CONV_2D", in_shape, [32, 3, 3, 3], window(stride=2, activation="RELU6"),
                       seed=int(min_invocations) % 97)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=2),
                                      {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert stats["dispatches"] == 2  # the convolution and the readback conversion
    assert_close(gpu, cpu, fp16)

# The sum split across a workgroup's z (conv2d.comp K_SPLIT: real GPUs'
# default for >= 128 output pixels and >= 32 tap x slice steps; forced on
# llvmpipe here). Tile edges: pixel counts that are no multiple of the 4-row
# tile or the 32 tiles of a workgroup, odd output slice counts (a group of
# 2 with a padded slice) and padded lanes, step counts no multiple of the 4
# parts (75, 81, 162, 45, 49), strides, dilation, VALID, batch 2, an
# upload-fused first layer, fused activations; a layer of 27 steps that
# keeps the unsplit path; and once under the GLES 3.1 minimum profile (128
# invocations, 16 KB of shared memory).
KSPLIT_CASES = [
    ([1, 13, 11, 12], [5, 5, 5, 12], window(activation="RELU"), False),
    ([1, 13, 11, 12], [5, 3, 3, 12], window(), False),
    ([1, 24, 20, 3], [8, 9, 9, 3], window(), False),
    ([1, 20, 22, 8], [3, 9, 9, 8], window(), False),
    ([2, 30, 28, 20], [13, 3, 3, 20], window(stride=2, activation="RELU6"), False),
    ([1, 25, 23, 16], [16, 3, 3, 16], window("VALID", dilation=2), False),
    ([1, 40, 36, 3], [16, 7, 7, 3], window(stride=2), True),
]


def ksplit_model(monkeypatch, in_shape, filter_shape, options, first_layer):
    """A KSPLIT_CASES model with K_SPLIT forced (and, for a first layer, its
    upload fused so that it reads the image's staging)."""
    monkeypatch.setenv("TFLITE_GLES_X_CONV_KSPLIT", "1")
    if first_layer:
        monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", "1")
        monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")
    version = 2 if options["dilation_h_factor"] > 1 else 1
    return conv_model("CONV_2D", in_shape, filter_shape, options, version=version,
                      seed=filter_shape[0])


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,filter_shape,options,first_layer", KSPLIT_CASES)
def test_conv2d_with_the_sum_split_across_a_workgroup(monkeypatch, in_shape, filter_shape,
                                                      options, first_layer, fp16):
    model = ksplit_model(monkeypatch, in_shape, filter_shape, options, first_layer)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=3),
                                      {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


# K_SPLIT with its slice group's weights staged in shared memory (KS_WSMEM,
# TFLITE_GLES_X_CONV_KSPLIT_WSMEM): the same sums in the same order as K_SPLIT
# reading them from the buffer, equal bit for bit; the dumped programs show
# the define (every case's weights fit llvmpipe's shared memory).
@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,filter_shape,options,first_layer", KSPLIT_CASES)
def test_conv2d_with_the_split_sums_weights_in_shared_memory(monkeypatch, tmp_path, in_shape,
                                                             filter_shape, options,
                                                             first_layer, fp16):
    monkeypatch.setenv("TFLITE_GLES_X_DUMP_SHADERS", str(tmp_path))
    model = ksplit_model(monkeypatch, in_shape, filter_shape, options, first_layer)
    cpu, (plain, _), (staged, stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_CONV_KSPLIT_WSMEM", model,
        random_inputs([in_shape], seed=3), {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(staged, cpu, fp16)
    np.testing.assert_array_equal(plain[0], staged[0])
    dumped = [p.read_text() for p in tmp_path.glob("*.comp")]
    split = any("#define K_SPLIT" in t for t in dumped)
    assert any("#define KS_WSMEM" in t for t in dumped) == split


# K_SPLIT's tile (TFLITE_GLES_X_CONV_TILE=ROWS/SLICES/PARTS/LOCAL_X/STEP):
# rows LOCAL_X apart (real GPUs' default; llvmpipe keeps step 1), larger
# register tiles, more parts, a wider workgroup, and on a batch of 2 with
# a stride, an upload-fused first layer and a map smaller than one
# workgroup's rows.
KSPLIT_TILES = ["4/2/4/32/32", "8/2/2/64/64", "2/4/8/16/16", "8/4/2/32/1"]


@pytest.mark.parametrize("tile", KSPLIT_TILES)
@pytest.mark.parametrize("case", [KSPLIT_CASES[4], KSPLIT_CASES[6], KSPLIT_CASES[1]])
def test_conv2d_with_the_sum_split_by_tile(monkeypatch, tile, case):
    in_shape, filter_shape, options, first_layer = case
    monkeypatch.setenv("TFLITE_GLES_X_CONV_KSPLIT", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_TILE", tile)
    if first_layer:
        monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", "1")
        monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")
    model = conv_model("CONV_2D", in_shape, filter_shape, options, seed=filter_shape[0])
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=7), {})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu)


# K_SPLIT's and SMEM_TILE's tiles refilled for a many-core GPU (TFLITE_GLES_MIN_INVOCATIONS
# forced on llvmpipe): 8 parts where each keeps >= 8 steps, then fewer rows and slices;
# SMEM_TILE's one pixel x one slice (FillSplitTile, ChooseSmemTile).
@pytest.mark.parametrize("min_invocations", ["2000", "1000000"])
@pytest.mark.parametrize("case", KSPLIT_CASES[:1] + KSPLIT_CASES[4:6] + [
    ([1, 130, 129, 16], [12, 3, 3, 16], window(activation="RELU"), "smem")])
def test_conv2d_with_tiles_that_fill_the_gpu(monkeypatch, min_invocations, case):
    in_shape, filter_shape, options, smem = case
    monkeypatch.setenv("TFLITE_GLES_X_CONV_KSPLIT", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CONV_SMEM_TILE", "1" if smem else "0")
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", min_invocations)
    model = conv_model("CONV_2D", in_shape, filter_shape, options, seed=filter_shape[0])
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=7), {})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu)


# Mediump products (1) and accumulators (2) with fp16 storage
# (TFLITE_GLES_X_FP16_MATH): a split 3x3 convolution, a 1x1 convolution on
# gemm.comp and one on conv2d.comp. llvmpipe computes mediump in fp32, so
# this checks the variants' code; NVIDIA's fp16 error is measured by
# bench/run_bench.py's relative error (docs/perf/log.md, "conv, session 10").
@pytest.mark.parametrize("math", ["1", "2"])
@pytest.mark.parametrize("filter_shape,gemm", [([12, 3, 3, 12], "0"), ([20, 1, 1, 12], "1"),
                                               ([20, 1, 1, 12], "0")])
def test_conv2d_with_fp16_math(monkeypatch, math, filter_shape, gemm):
    monkeypatch.setenv("TFLITE_GLES_X_CONV_KSPLIT", "1")
    monkeypatch.setenv("TFLITE_GLES_X_FP16_MATH", math)
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", gemm)
    in_shape = [1, 13, 11, 12]
    model = conv_model("CONV_2D", in_shape, filter_shape, window(activation="RELU"), seed=8)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=9),
                                      {"precision_loss_allowed": True})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16=True)


# A tile over the minimum's 128 invocations and 16 KB falls back to 4x2.
@pytest.mark.parametrize("tile", [None, "8/4/4/64/64"])
def test_conv2d_with_the_sum_split_at_the_gles31_minimum(monkeypatch, tile):
    monkeypatch.setenv("TFLITE_GLES_X_CONV_KSPLIT", "1")
    if tile:
        monkeypatch.setenv("TFLITE_GLES_X_CONV_TILE", tile)
    monkeypatch.setenv("TFLITE_GLES_DEVICE_PROFILE", "gles31-minimum")
    in_shape = [1, 19, 17, 16]
    model = conv_model("CONV_2D", in_shape, [6, 3, 3, 16], window(activation="RELU"), seed=4)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=5), {})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu)


DEPTHWISE_CASES = [
    ([1, 9, 11, 1], 1, 3, window()),
    ([2, 7, 6, 3], 1, 3, window(activation="RELU6")),
    ([1, 10, 9, 4], 1, 3, window(stride=2)),
    ([1, 13, 12, 5], 1, 3, window("VALID", stride=2)),
    ([1, 6, 7, 3], 2, 3, window(activation="RELU")),
    ([1, 9, 8, 8], 1, 3, window(dilation=2)),
    # Dilated 3x3 at stride 1 slide over outputs a dilation apart on
    # llvmpipe: phases with tails, batch 2, VALID, unequal dilations.
    ([2, 17, 19, 12], 1, 3, window(dilation=4, activation="RELU6")),
    ([1, 15, 14, 5], 1, 3, window("VALID", dilation=2)),
    ([1, 16, 13, 4], 1, 3, dict(window(), dilation_h_factor=3, dilation_w_factor=2)),
    ([1, 8, 9, 13], 1, 5, window()),
    ([1, 1, 1, 13], 1, 3, window()),
]


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,multiplier,kernel,options", DEPTHWISE_CASES)
def test_depthwise_conv2d(in_shape, multiplier, kernel, options, fp16):
    out_c = in_shape[3] * multiplier
    options = dict(options, depth_multiplier=multiplier)
    version = 2 if options["dilation_h_factor"] > 1 else 1
    model = conv_model("DEPTHWISE_CONV_2D", in_shape, [1, kernel, kernel, out_c],
                       options, version=version)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=2),
                                      {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


@pytest.mark.parametrize("reuse", ["0", "1"])
def test_dilated_depthwise_with_and_without_the_window_reuse(monkeypatch, reuse):
    """Both paths of dilated 3x3 layers on every device: the gather (the
    default off llvmpipe) and the sliding window over a dilation's phases
    (the default on llvmpipe), on a DeepLab-like 33x33 map."""
    monkeypatch.setenv("TFLITE_GLES_X_DILATED_DW_REUSE", reuse)
    in_shape = [1, 33, 33, 20]
    options = dict(window(dilation=2, activation="RELU6"), depth_multiplier=1)
    model = conv_model("DEPTHWISE_CONV_2D", in_shape, [1, 3, 3, 20], options, version=2)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=4), {})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu)


@pytest.mark.parametrize("in_c", [20, 24])
def test_pointwise_with_two_depth_steps_per_iteration(monkeypatch, in_c):
    """conv2d.comp's K_UNROLL=2 (TFLITE_GLES_X_CONV_UNROLL=1, off by
    default): an odd (5) and an even (6) number of depth steps."""
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UNROLL", "1")
    in_shape = [1, 13, 12, in_c]
    model = conv_model("CONV_2D", in_shape, [10, 1, 1, in_c], window(activation="RELU"))
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=6), {})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu)


@pytest.mark.parametrize("switch,value", [
    ("TFLITE_GLES_X_CONV_UNROLLED_TILE", "0"),   # session 12's loops, 4x4
    ("TFLITE_GLES_X_CONV_UNROLLED_TILE", "1"),   # written out, 6x4 (llvmpipe's default)
    ("TFLITE_GLES_X_POINTWISE_TILE", "16/1"),    # the most rows written out
    ("TFLITE_GLES_X_POINTWISE_TILE", "2/8"),     # the most slices written out
    ("TFLITE_GLES_X_GEMM_GROUP_BLOCK", "1"),     # 8 pixel tiles x the slice groups
])
def test_pointwise_tiles_written_out(monkeypatch, switch, value):
    """conv2d.comp's 1x1 path with ROWS_UNROLLED (DeviceProfile::
    conv_unrolled_tile; on by default on llvmpipe, forced by the tile
    switches there) and its loops, on a map of 143 pixels (not a multiple
    of 6 or 16 rows), 30 channels (a half-empty last slice, 8 slices: two
    groups of 4, one of 8), an ADD epilogue and ReLU6."""
    monkeypatch.setenv(switch, value)
    in_shape = [1, 11, 13, 20]
    b = ModelBuilder()
    x = b.add_input(in_shape)
    rng = np.random.default_rng(8)
    w = b.add_const(rng.uniform(-0.5, 0.5, [30, 1, 1, 20]).astype(np.float32))
    bias = b.add_const(rng.uniform(-1, 1, [30]).astype(np.float32))
    y = b.add_tensor([1, 11, 13, 30])
    b.add_op("CONV_2D", [x, w, bias], [y], window(activation="NONE"))
    other = b.add_input([1, 11, 13, 30])
    out = b.add_tensor([1, 11, 13, 30])
    b.add_op("ADD", [y, other], [out], {"fused_activation_function": "RELU6"})
    model = b.build()
    inputs = random_inputs([in_shape, [1, 11, 13, 30]], seed=9)
    cpu, gpu, stats = run_cpu_and_gpu(model, inputs, {})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu)


# 1x1 layers with >= 16 depth steps take 8 x 4 on llvmpipe where it idles few
# lanes, and 3 or 4k + 2 output slices 3 or 4 slices per tile instead of 2
# (kernels/conv_common.cc): 250 outputs (not a multiple of 8), 70 input
# channels (18 steps, a half-empty last slice) or 20 (5 steps: 6 rows), 30
# outputs (2 groups of 4), 12 (one of 3), 22 (6 slices: a half-empty group of
# 4); =0: the 4 x 4 / 4 x 2 loops.
@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("unrolled", ["0", "1"])
@pytest.mark.parametrize("in_c,out_c", [(70, 30), (70, 12), (20, 22)])
def test_pointwise_eight_row_tiles(monkeypatch, in_c, out_c, unrolled, fp16):
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UNROLLED_TILE", unrolled)
    in_shape = [1, 10, 25, in_c]
    model = conv_model("CONV_2D", in_shape, [out_c, 1, 1, in_c], window(activation="RELU6"))
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=11),
                                      {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


# General convolutions over several input slices take the 6 x 4 tile written
# out on llvmpipe (DeviceProfile::conv_unrolled_tile, kernels/conv_common.cc;
# =0: the 4 x 4 loops): two images of 143 or 99 outputs (tiles of 6 rows
# cross from one image into the next), 9 input channels (a partial last
# slice), 30 outputs (a half-empty last slice), SAME with ReLU6, dilation 2,
# VALID.
@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("unrolled", ["0", "1"])
@pytest.mark.parametrize("options", [window(activation="RELU6"), window(dilation=2),
                                     window("VALID")])
def test_general_conv2d_tiles_written_out(monkeypatch, unrolled, options, fp16):
    monkeypatch.setenv("TFLITE_GLES_X_CONV_UNROLLED_TILE", unrolled)
    in_shape = [2, 11, 13, 9]
    version = 2 if options["dilation_h_factor"] > 1 else 1
    model = conv_model("CONV_2D", in_shape, [30, 3, 3, 9], options, version=version)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=10),
                                      {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


# (input shape, outputs, keep_num_dims, bias)
FC_CASES = [
    ([2, 13], 5, False, True),
    ([1, 1024], 1001, False, True),
    ([2, 3, 3, 5], 7, False, True),   # each batch flattened
    ([1, 4, 2, 3], 6, True, True),    # keep_num_dims
    ([3, 8], 4, False, False),        # no bias (-1)
]


def fc_model(in_shape, outputs, keep_num_dims, bias, activation="NONE", weights=None):
    rng = np.random.default_rng(3)
    depth = in_shape[-1] if keep_num_dims or len(in_shape) == 2 else int(np.prod(in_shape[1:]))
    rows = int(np.prod(in_shape)) // depth
    b = ModelBuilder()
    x = b.add_input(in_shape)
    w = weights(b) if weights else b.add_const(
        rng.uniform(-0.5, 0.5, [outputs, depth]).astype(np.float32))
    bias_index = b.add_const(rng.uniform(-1, 1, [outputs]).astype(np.float32)) if bias else -1
    out_shape = in_shape[:-1] + [outputs] if keep_num_dims else [rows, outputs]
    o = b.add_tensor(out_shape)
    b.add_op("FULLY_CONNECTED", [x, w, bias_index], [o],
             {"fused_activation_function": activation, "keep_num_dims": keep_num_dims},
             version=5 if keep_num_dims else 1)
    return b.build()


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,outputs,keep_num_dims,bias", FC_CASES)
def test_fully_connected(in_shape, outputs, keep_num_dims, bias, fp16):
    model = fc_model(in_shape, outputs, keep_num_dims, bias, activation="RELU6")
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([in_shape], seed=4),
                                      {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


def assert_declined(stats, capfd, op, reason):
    """The node stayed on the CPU and the log says which op and why."""
    assert stats["nodes_delegated"] == 0, stats
    log = capfd.readouterr().err
    assert op in log and reason in log, log


def test_conv2d_with_a_non_constant_filter_stays_on_the_cpu(capfd):
    b = ModelBuilder()
    x = b.add_input([1, 5, 5, 4])
    w = b.add_input([3, 3, 3, 4])
    bias = b.add_const(np.ones([3], np.float32))
    o = b.add_tensor([1, 5, 5, 3])
    b.add_op("CONV_2D", [x, w, bias], [o], window())
    inputs = random_inputs([[1, 5, 5, 4], [3, 3, 3, 4]], seed=7)
    cpu, gpu, stats = run_cpu_and_gpu(b.build(), inputs)
    assert_declined(stats, capfd, "CONV_2D", "filter (input 1) must be a constant")
    assert_close(gpu, cpu)


def test_depthwise_with_a_non_constant_filter_stays_on_the_cpu(capfd):
    b = ModelBuilder()
    x = b.add_input([1, 6, 6, 4])
    w = b.add_input([1, 3, 3, 4])
    bias = b.add_const(np.ones([4], np.float32))
    o = b.add_tensor([1, 6, 6, 4])
    b.add_op("DEPTHWISE_CONV_2D", [x, w, bias], [o], dict(window(), depth_multiplier=1))
    inputs = random_inputs([[1, 6, 6, 4], [1, 3, 3, 4]], seed=8)
    cpu, gpu, stats = run_cpu_and_gpu(b.build(), inputs)
    assert_declined(stats, capfd, "DEPTHWISE_CONV_2D", "must be a constant")
    assert_close(gpu, cpu)


def test_fully_connected_with_int8_weights_stays_on_the_cpu(capfd):
    """Hybrid (int8-weight) FC with quantized models declined
    (quantized_models_allowed=false): it stays on the CPU, which
    dequantizes on the fly. (By default it runs on the GPU in the float
    view: the next test.)"""
    rng = np.random.default_rng(9)

    def int8_weights(builder):
        return builder.add_const(rng.integers(-100, 100, [4, 16]).astype(np.int8),
                                 quant=(0.01, 0))

    model = fc_model([2, 16], 4, False, True, weights=int8_weights)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([[2, 16]], seed=10),
                                      {"quantized_models_allowed": False})
    assert_declined(stats, capfd, "FULLY_CONNECTED", "quantized_models_allowed=false")
    assert_close(gpu, cpu)


def test_fully_connected_with_int8_weights_runs_the_float_view():
    """Hybrid (int8-weight) FC by default: delegated, computing in float with
    the weights dequantized once (issue 15), i.e. what the same FC with
    those float weights computes on the CPU (1e-5)."""
    q = np.random.default_rng(9).integers(-100, 100, [4, 16]).astype(np.int8)
    hybrid = fc_model([2, 16], 4, False, True,
                      weights=lambda b: b.add_const(q, quant=(0.01, 0)))
    twin = fc_model([2, 16], 4, False, True,
                    weights=lambda b: b.add_const(q.astype(np.float32) * np.float32(0.01)))
    inputs = random_inputs([[2, 16]], seed=10)
    cpu_twin, _, _ = run_cpu_and_gpu(twin, inputs)
    _, gpu, stats = run_cpu_and_gpu(hybrid, inputs)
    assert stats["nodes_delegated"] == 1 and stats["partitions"] == 1
    assert_close(gpu, cpu_twin)


def test_conv2d_with_fused_tanh_stays_on_the_cpu(capfd):
    """TFLite's CPU conv ignores a fused TANH (it only clamps for the ReLU
    family); the delegate declines rather than disagree with it."""
    model = conv_model("CONV_2D", [1, 5, 4, 5], [6, 3, 3, 5], window(activation="TANH"))
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([[1, 5, 4, 5]], seed=11))
    assert_declined(stats, capfd, "CONV_2D", "fused TANH/SIGMOID")
    assert_close(gpu, cpu)


def shared_program_chain_model(seed=5):
    """98x98x4 -> depthwise 3x3 s1 -> 1x1 4->16 -> depthwise 3x3 s2 -> 49x49x16
    -> 1x1 16->128 -> depthwise 3x3 s1: the two stride-1 depthwise layers get
    the same 7x7 output blocks (pixels on x on the first, its 32 slices on x
    on the last) and the two 1x1 layers the same 4x4 tile, so each pair
    shares one program with its shapes in the uniform block."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.add_input([1, 98, 98, 4])

    def depthwise(src, shape, stride):
        c = shape[3]
        w = b.add_const(rng.uniform(-0.5, 0.5, [1, 3, 3, c]).astype(np.float32))
        bias = b.add_const(rng.uniform(-1, 1, [c]).astype(np.float32))
        out_shape = [1, -(-shape[1] // stride), -(-shape[2] // stride), c]
        out = b.add_tensor(out_shape)
        b.add_op("DEPTHWISE_CONV_2D", [src, w, bias], [out],
                 dict(window(stride=stride, activation="RELU6"), depth_multiplier=1))
        return out, out_shape

    def pointwise(src, shape, out_c):
        w = b.add_const(rng.uniform(-0.5, 0.5, [out_c, 1, 1, shape[3]]).astype(np.float32))
        bias = b.add_const(rng.uniform(-1, 1, [out_c]).astype(np.float32))
        out_shape = shape[:3] + [out_c]
        out = b.add_tensor(out_shape)
        b.add_op("CONV_2D", [src, w, bias], [out], window())
        return out, out_shape

    t, shape = depthwise(x, [1, 98, 98, 4], 1)
    t, shape = pointwise(t, shape, 16)
    t, shape = depthwise(t, shape, 2)
    t, shape = pointwise(t, shape, 128)
    depthwise(t, shape, 1)
    return b.build()


@pytest.mark.parametrize("fp16", PRECISIONS)
def test_layers_of_different_shapes_sharing_a_program_are_each_right(fp16, monkeypatch):
    # Shapes as uniforms (the default) even when the environment asks for
    # them compiled in (delegate/device/device_tuning.cc).
    monkeypatch.setenv("TFLITE_GLES_SPECIALIZE_SHAPES", "0")
    # The same kernels and tiles on every device (llvmpipe's), so that the
    # counts below hold on a GPU too: no GEMM path, no tiles shrunk for
    # thousands of lanes, no transfers or depthwise folded into kernels.
    for name, value in (("TFLITE_GLES_SHARED_MEMORY_GEMM", "0"),
                        ("TFLITE_GLES_MIN_INVOCATIONS", "0"),
                        ("TFLITE_GLES_FUSE_UPLOAD", "0"),
                        ("TFLITE_GLES_FUSE_DEPTHWISE", "0"),
                        ("TFLITE_GLES_X_DIRECT_TRANSFERS", "0")):
        monkeypatch.setenv(name, value)
    cpu, gpu, stats = run_cpu_and_gpu(shared_program_chain_model(),
                                      random_inputs([[1, 98, 98, 4]], seed=6),
                                      {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    # 7 dispatches (5 layers and 2 layout conversions), 5 programs: each
    # pair of same-tile layers runs one program with its own uniform range.
    assert (stats["dispatches"], stats["programs"]) == (7, 5)
    assert_close(gpu, cpu, fp16)


def broadcast_concat_conv_model(cx, cp, resize_op, pixel_first, half_pixel, seed):
    """DeepLab's ASPP projection in small: a 1x1 CONV_2D over CONCATENATION
    (X, RESIZE of a one-pixel P) in either order."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.add_input([1, 7, 9, cx])
    p = b.add_input([1, 1, 1, cp])
    size = b.add_const(np.array([7, 9], np.int32))
    r = b.add_tensor([1, 7, 9, cp])
    b.add_op(resize_op, [p, size], [r],
             {"align_corners": False, "half_pixel_centers": half_pixel})
    joined = b.add_tensor([1, 7, 9, cx + cp])
    b.add_op("CONCATENATION", [r, x] if pixel_first else [x, r], [joined],
             {"axis": 3, "fused_activation_function": "NONE"})
    w = b.add_const(rng.uniform(-0.5, 0.5, [10, 1, 1, cx + cp]).astype(np.float32))
    bias = b.add_const(rng.uniform(-1, 1, [10]).astype(np.float32))
    o = b.add_tensor([1, 7, 9, 10])
    b.add_op("CONV_2D", [joined, w, bias], [o], window(activation="RELU"))
    return b.build()


@pytest.mark.parametrize("cx,cp,resize_op,pixel_first,half_pixel,fp16,gemm", [
    (8, 8, "RESIZE_BILINEAR", False, True, False, False),
    (6, 5, "RESIZE_NEAREST_NEIGHBOR", True, False, False, False),
    (12, 4, "RESIZE_BILINEAR", True, False, True, False),
    # NVIDIA's path: the projection on gemm.comp, its bias the pixel's share.
    (8, 8, "RESIZE_BILINEAR", False, True, False, True),
    (12, 4, "RESIZE_BILINEAR", True, False, True, True),
])
def test_a_broadcast_pixel_in_a_concat_becomes_the_convolutions_bias(
        monkeypatch, cx, cp, resize_op, pixel_first, half_pixel, fp16, gemm):
    """TFLITE_GLES_X_BROADCAST_CONCAT_BIAS (llvmpipe's default): the
    convolution reads X and a one-row GEMM of P as its bias; the resize and
    the concat are dropped, one dispatch fewer in all."""
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1" if gemm else "0")
    monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", "0")
    model = broadcast_concat_conv_model(cx, cp, resize_op, pixel_first, half_pixel, cx + cp)
    inputs = random_inputs([[1, 7, 9, cx], [1, 1, 1, cp]], seed=cx)
    cpu, (off, off_stats), (on, on_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_BROADCAST_CONCAT_BIAS", model, inputs,
        {"precision_loss_allowed": fp16})
    for s in (off_stats, on_stats):
        assert_fully_delegated(s)
    assert_close(off, cpu, fp16)
    assert_close(on, cpu, fp16)
    assert on_stats["dispatches"] == off_stats["dispatches"] - 1, (off_stats, on_stats)
