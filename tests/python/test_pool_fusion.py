"""Pooling fusions (delegate/passes/pool_fusion.h).

Unpooling (shaders/gemm_chain.comp UNPOOL_GATHER): MediaPipe's
MaxUnpooling2D whose output only a GEMM pair's residual operand reads
(ENet's upsampling block, the hair stand-in's two) is gathered in that
operand's loads and its dispatch goes. GEMM pairs form on real GPUs only:
forced on llvmpipe (TFLITE_GLES_SHARED_MEMORY_GEMM=1,
TFLITE_GLES_X_EPILOGUE_IN2=1, TFLITE_GLES_X_FUSE_GEMM_PAIRS=1), with
TFLITE_GLES_X_FUSE_UNPOOL off and on.

Upsampling (shaders/gemm_chain.comp UPSAMPLE_GATHER): the builtin twin's
nearest upsampling in the unpooling's place, read the same way from its
source (TFLITE_GLES_X_FUSE_UPSAMPLE_OPERAND off and on, pairs forced).

A second projection (shaders/gemm_chain.comp Y2): the up block's side
branch's 1x1 of the pair's x as the pair's third output
(TFLITE_GLES_X_FUSE_SECOND_PROJECTION off and on, pairs forced).

A transposed head (shaders/gemm_chain.comp HEAD_UPSTRIDE): the up block's
transposed convolution as its pair's stage 0 (TFLITE_GLES_X_FUSE_CHAIN_HEADS
2 and 3, pairs forced).

Pooling in a GEMM pair's A loads (shaders/gemm_chain.comp POOL_PROLOGUE,
UNPOOL_FROM_INPUT): the downsampling block's argmax pooling whose output only
the pair of its main 1x1 convolution reads and whose indices only a gathered
unpooling reads; TFLITE_GLES_X_FUSE_POOL_PROLOGUE off and on (pairs forced).

Pooling (shaders/concat.comp POOL_FIRST): the argmax pooling of ENet's
initial block, beside a strided convolution and concatenated with it, is
computed in the concat's loads; TFLITE_GLES_X_FUSE_POOL_CONCAT off and on,
with the concat's PRELU in its store or apart (TFLITE_GLES_X_CONCAT_EPILOGUE).

The blocks are tools/standin_hair.py's own layers: its "custom" variant (the
MediaPipe ops) through the delegate, its "exact" variant (the same function
in builtins, the same weights) on LiteRT's CPU. Both paths match the CPU,
the fused outputs are bit for bit the unfused ones (the same values are
selected, only not stored in between), and one dispatch goes per fusion.
"""

import numpy as np
import pytest

import gles_testing as gt
from build_standins import NetBuilder
from standin_hair import HairNet

SWITCH = "TFLITE_GLES_X_FUSE_UNPOOL"


def encoder_decoder(variant, shape, seed, unpooled_is_output=False):
    """down (argmax pool) -> regular -> up (unpool + residual ADD) -> regular,
    as the hair stand-in's 128x128 stage; optionally the unpooled tensor is a
    model output too."""
    net = NetBuilder("unpool fusion", seed)
    h = HairNet(net, variant)
    x = net.input(shape)
    y, token = h.down(x, 2 * shape[3])
    y = h.regular(y)
    main = h.unpool(h.conv(y, shape[3], gain=1.0), token)
    side = h.prelu(h.conv(y, shape[3] // 4))
    side = h.prelu(h.transpose_conv(side, shape[3] // 4))
    side = h.conv(side, shape[3], gain=0.2)
    out = h.regular(h.prelu(net.add(main, side)))
    net.b.set_outputs([out, main] if unpooled_is_output else [out])
    return net.b.build()


def distinct_window_inputs(shape, seed):
    """Values exact in fp16 and distinct within every 2x2 window (each
    position of a window its own residue mod 4): fp16's rounding then cannot
    tie a window's maximum and move its argmax, which the unfused pair would
    answer as differently from the CPU as the fused one."""
    rng = np.random.default_rng(seed)
    n, h, w, c = shape
    code = (np.arange(h)[:, None] % 2) * 2 + np.arange(w)[None, :] % 2
    k = rng.integers(-500, 500, shape) * 4 + code[None, :, :, None]
    return [(k / 1024.0).astype(np.float32)]


def force_pairs(monkeypatch):
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_X_EPILOGUE_IN2", "1")
    monkeypatch.setenv("TFLITE_GLES_X_FUSE_GEMM_PAIRS", "1")


def off_and_on(monkeypatch, model, inputs, fp16, switch=SWITCH):
    runs = []
    for value in ("0", "1"):
        monkeypatch.setenv(switch, value)
        runs.append(gt.run_gpu(model, inputs, {"precision_loss_allowed": fp16}))
    return runs


# The pairs need >= 1024 rows (128 workgroups of 8) at the unpooled size.
@pytest.mark.parametrize("shape", [[1, 32, 32, 16], [1, 32, 48, 8], [2, 32, 32, 32]])
@pytest.mark.parametrize("fp16", [False, True])
def test_unpooling_gathered_in_the_residual_operand(monkeypatch, shape, fp16):
    seed = shape[1] + shape[3]
    custom, exact = (encoder_decoder(v, shape, seed) for v in ("custom", "exact"))
    inputs = distinct_window_inputs(shape, seed=7)
    cpu = gt.invoke(gt.interpreter(exact), inputs)
    force_pairs(monkeypatch)
    (plain, plain_stats), (fused, fused_stats) = off_and_on(monkeypatch, custom, inputs, fp16)
    gt.assert_fully_delegated(fused_stats)
    gt.assert_close(plain, cpu, fp16)
    gt.assert_close(fused, cpu, fp16)
    np.testing.assert_array_equal(fused[0], plain[0])
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)


def test_an_unpooling_read_elsewhere_stays(monkeypatch):
    """Its output is a model output as well: it must be stored, so it stays
    a dispatch, and the answers stay the CPU's."""
    shape = [1, 16, 16, 16]
    custom, exact = (encoder_decoder(v, shape, 3, unpooled_is_output=True)
                     for v in ("custom", "exact"))
    inputs = distinct_window_inputs(shape, seed=8)
    cpu = gt.invoke(gt.interpreter(exact), inputs)
    force_pairs(monkeypatch)
    (plain, plain_stats), (fused, fused_stats) = off_and_on(monkeypatch, custom, inputs, False)
    gt.assert_close(fused, cpu)
    assert fused_stats["dispatches"] == plain_stats["dispatches"], (fused_stats, plain_stats)


# The pairs of the pooled map need >= 1024 rows too: 64x64 inputs at least.
@pytest.mark.parametrize("shape", [[1, 64, 64, 16], [1, 64, 96, 8]])
@pytest.mark.parametrize("fp16", [False, True])
def test_argmax_pooling_in_the_pairs_loads(monkeypatch, shape, fp16):
    seed = shape[2] + shape[3]
    custom, exact = (encoder_decoder(v, shape, seed) for v in ("custom", "exact"))
    inputs = distinct_window_inputs(shape, seed=11)
    cpu = gt.invoke(gt.interpreter(exact), inputs)
    force_pairs(monkeypatch)
    (plain, plain_stats), (fused, fused_stats) = off_and_on(
        monkeypatch, custom, inputs, fp16, "TFLITE_GLES_X_FUSE_POOL_PROLOGUE")
    gt.assert_fully_delegated(fused_stats)
    gt.assert_close(plain, cpu, fp16)
    gt.assert_close(fused, cpu, fp16)
    np.testing.assert_array_equal(fused[0], plain[0])
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)


def initial_block(variant, shape, conv_channels, pooled_first, seed):
    """ENet's initial block: a strided 3x3 convolution beside a 2x2 argmax
    pooling of the input, concatenated, PRELU, then a 1x1 convolution."""
    net = NetBuilder("pool fusion", seed)
    h = HairNet(net, variant)
    x = net.input(shape)
    pooled, _ = h.pool(x)
    conv = h.conv(x, conv_channels, kernel=3, stride=2)
    y = h.prelu(net.concat([pooled, conv] if pooled_first else [conv, pooled], axis=3))
    net.b.set_outputs([h.conv(y, 8)])
    return net.b.build()


@pytest.mark.parametrize("shape,conv_channels,pooled_first", [
    ([1, 64, 64, 4], 12, False),   # the hair stand-in's: 12 + 4 channels
    ([1, 48, 32, 8], 8, True),     # two pooled slices, first in the concat
    ([2, 32, 32, 4], 4, False)])   # two batches
@pytest.mark.parametrize("concat_epilogue", ["0", "1"])
@pytest.mark.parametrize("fp16", [False, True])
def test_argmax_pooling_computed_in_the_concat(monkeypatch, shape, conv_channels, pooled_first,
                                               concat_epilogue, fp16):
    seed = shape[1] + conv_channels
    custom, exact = (initial_block(v, shape, conv_channels, pooled_first, seed)
                     for v in ("custom", "exact"))
    inputs = distinct_window_inputs(shape, seed=9)
    cpu = gt.invoke(gt.interpreter(exact), inputs)
    monkeypatch.setenv("TFLITE_GLES_X_CONCAT_EPILOGUE", concat_epilogue)
    (plain, plain_stats), (fused, fused_stats) = off_and_on(
        monkeypatch, custom, inputs, fp16, "TFLITE_GLES_X_FUSE_POOL_CONCAT")
    gt.assert_fully_delegated(fused_stats)
    gt.assert_close(plain, cpu, fp16)
    gt.assert_close(fused, cpu, fp16)
    np.testing.assert_array_equal(fused[0], plain[0])
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)


@pytest.mark.parametrize("block,switch", [
    ("initial", "TFLITE_GLES_X_FUSE_POOL_CONCAT"), ("encoder", "TFLITE_GLES_X_FUSE_POOL_PROLOGUE")])
@pytest.mark.parametrize("fp16", [False, True])
def test_builtin_max_pool_fuses_too(monkeypatch, block, switch, fp16):
    """The stand-in's builtin twin: MAX_POOL_2D (pooling.comp POOL_MAX, taken
    with max() as it does) in the concat's loads and in the pair's A loads
    (its nearest-upsampled decoder reads no indices); the CPU runs the same
    model."""
    if block == "initial":
        shape = [1, 64, 64, 4]
        model = initial_block("builtin", shape, 12, False, 5)
    else:
        shape = [1, 64, 64, 16]
        model = encoder_decoder("builtin", shape, 5)
    inputs = distinct_window_inputs(shape, seed=12)
    cpu = gt.invoke(gt.interpreter(model), inputs)
    force_pairs(monkeypatch)
    monkeypatch.setenv("TFLITE_GLES_X_CONCAT_EPILOGUE", "1")
    (plain, plain_stats), (fused, fused_stats) = off_and_on(monkeypatch, model, inputs, fp16,
                                                            switch)
    gt.assert_fully_delegated(fused_stats)
    gt.assert_close(plain, cpu, fp16)
    gt.assert_close(fused, cpu, fp16)
    np.testing.assert_array_equal(fused[0], plain[0])
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)


@pytest.mark.parametrize("shape", [[1, 32, 32, 16], [1, 32, 48, 8], [2, 32, 32, 32]])
@pytest.mark.parametrize("fp16", [False, True])
def test_nearest_upsampling_gathered_in_the_residual_operand(monkeypatch, shape, fp16):
    """The builtin twin's decoder: RESIZE_NEAREST_NEIGHBOR by 2 in place of
    the unpooling, read only by the up block's pair as its residual operand,
    is read there from its source (gemm_chain.comp UPSAMPLE_GATHER,
    TFLITE_GLES_X_FUSE_UPSAMPLE_OPERAND): one dispatch less, bit for bit the
    unfused pair's; the CPU runs the same model."""
    model = encoder_decoder("builtin", shape, shape[1] + shape[3])
    inputs = distinct_window_inputs(shape, seed=13)
    cpu = gt.invoke(gt.interpreter(model), inputs)
    force_pairs(monkeypatch)
    (plain, plain_stats), (fused, fused_stats) = off_and_on(
        monkeypatch, model, inputs, fp16, "TFLITE_GLES_X_FUSE_UPSAMPLE_OPERAND")
    gt.assert_fully_delegated(fused_stats)
    gt.assert_close(plain, cpu, fp16)
    gt.assert_close(fused, cpu, fp16)
    np.testing.assert_array_equal(fused[0], plain[0])
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)


# The pooled map's pairs need >= 1024 rows: 64x64 inputs at least.
@pytest.mark.parametrize("shape", [[1, 64, 64, 16], [1, 64, 96, 8]])
@pytest.mark.parametrize("fp16", [False, True])
def test_side_projection_as_the_pairs_second_output(monkeypatch, shape, fp16):
    """The up block's side-branch projection (1x1 + PRELU of the last
    bottleneck's x, which the pair's second GEMM, the main branch's 1x1,
    reads too) computed in that pair's stage 2 as its y2 (gemm_chain.comp
    Y2, TFLITE_GLES_X_FUSE_SECOND_PROJECTION): one dispatch less, both
    paths the CPU's answers."""
    seed = shape[2] + shape[3] + 1
    custom, exact = (encoder_decoder(v, shape, seed) for v in ("custom", "exact"))
    inputs = distinct_window_inputs(shape, seed=14)
    cpu = gt.invoke(gt.interpreter(exact), inputs)
    force_pairs(monkeypatch)
    (plain, plain_stats), (fused, fused_stats) = off_and_on(
        monkeypatch, custom, inputs, fp16, "TFLITE_GLES_X_FUSE_SECOND_PROJECTION")
    gt.assert_fully_delegated(fused_stats)
    gt.assert_close(plain, cpu, fp16)
    gt.assert_close(fused, cpu, fp16)
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)


@pytest.mark.parametrize("variant,shape", [
    ("custom", [1, 32, 32, 16]),    # MediaPipe's Convolution2DTransposeBias
    ("custom", [2, 32, 48, 8]),     # two batches, a wider map
    ("builtin", [1, 32, 32, 16])])  # TRANSPOSE_CONV with bias
@pytest.mark.parametrize("fp16", [False, True])
def test_transposed_convolution_as_the_pairs_head(monkeypatch, variant, shape, fp16):
    """The up block's transposed convolution (+ PRELU), read only by the
    pair of its 1x1 expansion, as that pair's stage 0
    (gemm_chain.comp HEAD_UPSTRIDE, TFLITE_GLES_X_FUSE_CHAIN_HEADS 2 -> 3):
    one dispatch less, both the CPU's answers."""
    seed = shape[2] + shape[3] + 2
    model = encoder_decoder(variant, shape, seed)
    reference = encoder_decoder("exact", shape, seed) if variant == "custom" else model
    inputs = distinct_window_inputs(shape, seed=15)
    cpu = gt.invoke(gt.interpreter(reference), inputs)
    force_pairs(monkeypatch)
    runs = []
    for value in ("2", "3"):
        monkeypatch.setenv("TFLITE_GLES_X_FUSE_CHAIN_HEADS", value)
        runs.append(gt.run_gpu(model, inputs, {"precision_loss_allowed": fp16}))
    (plain, plain_stats), (fused, fused_stats) = runs
    gt.assert_fully_delegated(fused_stats)
    gt.assert_close(plain, cpu, fp16)
    gt.assert_close(fused, cpu, fp16)
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)
