"""The convolution before a GEMM pair as that pair's stage 0
(delegate/passes/gemm_chain_head.h, shaders/gemm_chain.comp HEAD): ENet's
3x3 + PRELU, the 1x1 expansion + residual ADD + PRELU and the next
bottleneck's 1x1 projection + PRELU as one dispatch. Forced on llvmpipe
(TFLITE_GLES_SHARED_MEMORY_GEMM=1, TFLITE_GLES_X_EPILOGUE_IN2=1 and
TFLITE_GLES_X_FUSE_GEMM_PAIRS=1, on by default only on real GPUs; the heads
by default on NVIDIA only): answers match TFLite's CPU kernels with
TFLITE_GLES_X_FUSE_CHAIN_HEADS off and on, and one dispatch less per head."""

import pytest

import gles_testing as gt

from gles_testing import assert_close, assert_fully_delegated, random_inputs, run_switch_off_and_on
from test_fusion import Chain
from test_gemm_chain import prelu

SWITCH = "TFLITE_GLES_X_FUSE_CHAIN_HEADS"


def conv(c, x, out_c, kernel, dilation=1, activation="NONE"):
    """A stride-1 SAME convolution of `kernel` x `kernel` taps, `dilation` apart."""
    n, h, w, _ = c.shapes[x]
    out = c.b.add_tensor([n, h, w, out_c])
    c.shapes[out] = [n, h, w, out_c]
    c.b.add_op("CONV_2D", [x, c.const([out_c, kernel, kernel, c.shapes[x][-1]]),
                           c.const([out_c], -1, 1)],
               [out], {"padding": "SAME", "stride_h": 1, "stride_w": 1,
                       "dilation_h_factor": dilation, "dilation_w_factor": dilation,
                       "fused_activation_function": activation})
    return out


def bottleneck(c, x, mid, kernel=3, dilation=1, activation="NONE", taps_out=None):
    """1x1 projection + PRELU, KxK + PRELU, 1x1 expansion + x, PRELU; the
    KxK's output also into `taps_out` (a list) when given."""
    t = conv(c, prelu(c, c.conv(x, mid)), mid, kernel, dilation, activation)
    if taps_out is not None:
        taps_out.append(t)
    y = prelu(c, t) if activation == "NONE" else t
    return prelu(c, c.binary("ADD", c.conv(y, c.shapes[x][-1]), x))


def run(monkeypatch, c, outputs, fp16=False):
    model = c.build(outputs)
    inputs = random_inputs(c.input_shapes, seed=7)
    for name in ("TFLITE_GLES_SHARED_MEMORY_GEMM", "TFLITE_GLES_X_EPILOGUE_IN2",
                 "TFLITE_GLES_X_FUSE_GEMM_PAIRS"):
        monkeypatch.setenv(name, "1")
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, inputs, {"precision_loss_allowed": fp16})
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    return plain_stats["dispatches"] - fused_stats["dispatches"]


@pytest.mark.parametrize("shape,mid", [
    ([1, 32, 32, 32], 8),   # whole slices; 1024 rows: 128 workgroups of 8
    ([1, 37, 29, 20], 5),   # channels not a multiple of 4; rows not of the tile
    ([1, 40, 40, 16], 4),   # one slice of c
    ([1, 48, 48, 64], 16),  # the hair stand-in's 128x128 blocks' widths (4 slices of c)
    ([1, 48, 48, 128], 32),  # its 64x64 blocks' (8 slices of c: two per invocation)
    ([2, 24, 24, 12], 3)])  # two batches
@pytest.mark.parametrize("fp16", [False, True])
def test_enet_bottleneck_heads(monkeypatch, shape, mid, fp16):
    c = Chain(shape, seed=shape[1] + mid)
    x = bottleneck(c, bottleneck(c, c.x, mid), mid)
    # The first block's 3x3 into the pair of its expansion and the second's projection.
    assert run(monkeypatch, c, [x], fp16) == 1


@pytest.mark.parametrize("kernel,dilation,activation", [
    (3, 2, "NONE"),   # dilated (hair's asymmetric / dilated blocks' kind)
    (5, 1, "NONE"),   # a wider window, padding 2
    (3, 1, "RELU")])  # a fused activation instead of a PRELU epilogue
def test_other_windows(monkeypatch, kernel, dilation, activation):
    c = Chain([1, 32, 32, 32], seed=kernel + dilation)  # 1024 rows: the pairs take them
    x = bottleneck(c, bottleneck(c, c.x, 8, kernel, dilation, activation), 8)
    assert run(monkeypatch, c, [x]) == 1


def test_convolution_read_elsewhere_stays_apart(monkeypatch):
    """A 3x3 whose output the model also returns keeps its own dispatch."""
    c = Chain([1, 32, 32, 32], seed=3)
    taps = []
    x = bottleneck(c, bottleneck(c, c.x, 8, taps_out=taps), 8)
    assert run(monkeypatch, c, [x, taps[0]]) == 0


@pytest.mark.parametrize("tile", [
    "16/256/4/2",   # 2 rows per invocation, 4 parts of the input slices
    "8/256/2/4",    # 4 rows, 2 parts
    "16/64/2/1"])   # 2 invocations over c's 8 slices: 4 slices each
def test_forced_stage0_splits(monkeypatch, tile):
    """TFLITE_GLES_X_GEMM_PAIR_TILE's WG_ROWS/LOCAL_X/K_PARTS0/ROWS0 (sweeps)."""
    monkeypatch.setenv("TFLITE_GLES_X_GEMM_PAIR_TILE", tile)
    c = Chain([1, 48, 48, 64], seed=11)  # 2304 rows: >= 128 workgroups of 16
    x = bottleneck(c, bottleneck(c, c.x, 32), 32)
    assert run(monkeypatch, c, [x]) == 1


@pytest.mark.parametrize("shape,mid", [([1, 48, 48, 64], 16), ([1, 48, 48, 128], 32)])
@pytest.mark.parametrize("fp16", [False, True])
def test_head_pairs_tile(monkeypatch, shape, mid, fp16):
    """TFLITE_GLES_X_GEMM_PAIR_HEAD_TILE (NVIDIA's 8/128): the pairs that take
    a head on maps of up to TFLITE_GLES_X_GEMM_PAIR_ROWS32 rows (0 on
    llvmpipe: forced) get that tile, and stage 0 splits over it."""
    monkeypatch.setenv("TFLITE_GLES_X_GEMM_PAIR_HEAD_TILE", "8/128")
    monkeypatch.setenv("TFLITE_GLES_X_GEMM_PAIR_ROWS32", "16384")
    c = Chain(shape, seed=shape[3] + mid)
    x = bottleneck(c, bottleneck(c, c.x, mid), mid)
    assert run(monkeypatch, c, [x], fp16) == 1


def test_fp16_math(monkeypatch):
    """The convolution's mediump products and accumulators (TFLITE_GLES_X_FP16_MATH=2,
    NVIDIA's default) carried into stage 0."""
    monkeypatch.setenv("TFLITE_GLES_X_FP16_MATH", "2")
    c = Chain([1, 48, 48, 64], seed=13)
    x = bottleneck(c, bottleneck(c, c.x, 16), 16)
    assert run(monkeypatch, c, [x], fp16=True) == 1


@pytest.mark.parametrize("shape,mid", [([1, 32, 32, 32], 8), ([1, 40, 40, 16], 4),
                                       ([2, 24, 24, 12], 3)])
@pytest.mark.parametrize("fp16", [False, True])
def test_heads_before_single_gemms(monkeypatch, shape, mid, fp16):
    """TFLITE_GLES_X_FUSE_CHAIN_HEADS=2: a block's 3x3 whose reader is a
    single GEMM (the last block's expansion + ADD + PRELU: no projection
    follows) folds into it too, hosted by gemm_chain.comp SINGLE."""
    c = Chain(shape, seed=shape[1] + mid + 1)
    x = bottleneck(c, bottleneck(c, c.x, mid), mid)
    model = c.build([x])
    inputs = random_inputs(c.input_shapes, seed=8)
    for name in ("TFLITE_GLES_SHARED_MEMORY_GEMM", "TFLITE_GLES_X_EPILOGUE_IN2",
                 "TFLITE_GLES_X_FUSE_GEMM_PAIRS"):
        monkeypatch.setenv(name, "1")
    cpu = gt.invoke(gt.interpreter(model), inputs)
    runs = []
    for value in ("1", "2"):
        monkeypatch.setenv(SWITCH, value)
        runs.append(gt.run_gpu(model, inputs, {"precision_loss_allowed": fp16}))
    (pairs, pairs_stats), (singles, singles_stats) = runs
    assert_fully_delegated(singles_stats)
    assert_close(pairs, cpu, fp16)
    assert_close(singles, cpu, fp16)
    # The second block's 3x3 into its expansion.
    assert singles_stats["dispatches"] == pairs_stats["dispatches"] - 1


@pytest.mark.parametrize("shape,mid,dilation,tile", [
    ([1, 48, 48, 128], 32, 2, ""),       # the hair stand-in's dilated 64x64 blocks' widths
    ([1, 37, 29, 20], 5, 1, ""),         # channels not a multiple of 4; rows not of the tile
    ([2, 24, 24, 12], 3, 4, ""),         # two batches, a dilation past the map's quarter
    ([1, 48, 48, 128], 32, 1, "8/256"),  # 32 invocations a row: stage 0 in 8 parts
    ([1, 48, 48, 128], 32, 8, "16/512/4")])
@pytest.mark.parametrize("fp16", [False, True])
def test_specialized_chains(monkeypatch, shape, mid, dilation, tile, fp16):
    """TFLITE_GLES_X_SPECIALIZE_CHAINS=1: the pairs and singles (heads in them)
    compiled with their shapes in, the stages' loops of constant trip counts;
    answers match the CPU with the switch off and on, and the dispatches are
    the same (forced tiles too: TFLITE_GLES_X_GEMM_PAIR_TILE)."""
    if tile:
        monkeypatch.setenv("TFLITE_GLES_X_GEMM_PAIR_TILE", tile)
    monkeypatch.setenv(SWITCH, "2")
    c = Chain(shape, seed=shape[1] + mid + dilation)
    x = bottleneck(c, bottleneck(c, bottleneck(c, c.x, mid, dilation=dilation), mid), mid)
    model = c.build([x])
    inputs = random_inputs(c.input_shapes, seed=9)
    for name in ("TFLITE_GLES_SHARED_MEMORY_GEMM", "TFLITE_GLES_X_EPILOGUE_IN2",
                 "TFLITE_GLES_X_FUSE_GEMM_PAIRS"):
        monkeypatch.setenv(name, "1")
    cpu, (plain, plain_stats), (fixed, fixed_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_SPECIALIZE_CHAINS", model, inputs,
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(fixed_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fixed, cpu, fp16)
    assert fixed_stats["dispatches"] == plain_stats["dispatches"]
