"""Two tiled 1x1 GEMMs in a row as one dispatch (delegate/passes/gemm_chain.h,
shaders/gemm_chain.comp): ENet's 1x1 expansion + residual ADD + PRELU, then
the next bottleneck's 1x1 projection + PRELU of that output, which the next
residual ADD reads too. Forced on llvmpipe (TFLITE_GLES_SHARED_MEMORY_GEMM=1
and the GEMM's second epilogue operand, TFLITE_GLES_X_EPILOGUE_IN2=1; both on
by default only where gemm.comp runs): answers match TFLite's CPU kernels
with TFLITE_GLES_X_FUSE_GEMM_PAIRS off and on, and one dispatch goes per
pair."""

import pytest

from gles_testing import assert_close, assert_fully_delegated, random_inputs, run_switch_off_and_on
from test_fusion import Chain

SWITCH = "TFLITE_GLES_X_FUSE_GEMM_PAIRS"


def prelu(c, x):
    return c.binary("PRELU", x, c.const([1, 1, c.shapes[x][-1]], 0.05, 0.4))


def bottleneck(c, x, mid):
    """1x1 projection + PRELU, 3x3 + PRELU, 1x1 expansion + x, PRELU."""
    y = prelu(c, c.conv(prelu(c, c.conv(x, mid)), mid, kernel=3))
    return prelu(c, c.binary("ADD", c.conv(y, c.shapes[x][-1]), x))


@pytest.mark.parametrize("shape,mid", [
    ([1, 32, 32, 32], 8),   # whole slices; 1024 rows: 128 workgroups of 8
    ([1, 37, 29, 20], 5),   # channels not a multiple of 4; rows not of the tile
    ([1, 40, 40, 16], 4),   # 1600 rows; one output slice in the second GEMM
    ([2, 24, 24, 12], 3)])  # two batches
@pytest.mark.parametrize("fp16", [False, True])
def test_enet_bottlenecks(monkeypatch, shape, mid, fp16):
    c = Chain(shape, seed=shape[1] + mid)
    x = bottleneck(c, bottleneck(c, c.x, mid), mid)
    model = c.build([x])
    inputs = random_inputs(c.input_shapes, seed=5)
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_X_EPILOGUE_IN2", "1")
    # The pairs alone: on NVIDIA their 3x3 heads fold in too by default, one
    # dispatch fewer again (test_gemm_chain_head.py covers those).
    monkeypatch.setenv("TFLITE_GLES_X_FUSE_CHAIN_HEADS", "0")
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, inputs, {"precision_loss_allowed": fp16})
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    # The first block's expansion and the second's projection.
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)


@pytest.mark.parametrize("case", ["widening second", "deep first", "x in the second's epilogue"])
def test_pairs_the_pass_leaves_apart(monkeypatch, case):
    """A second GEMM wider than x (MobileNet v2's expansion after its
    projection), a first of more than 16 input slices (DeepLab's 512 -> 256
    before its logits), and x read again by the second's own epilogue (it
    would be read in the dispatch that writes it) stay two dispatches, and
    the answers stay the CPU's."""
    shape, mid, wide = [1, 32, 32, 16], 8, 16
    if case == "deep first":
        shape = [1, 32, 32, 72]  # 18 slices: over the gate on NVIDIA (16) too
    c = Chain(shape, seed=len(case))
    x = prelu(c, c.conv(c.x, wide))
    if case == "widening second":
        y = prelu(c, c.conv(x, 2 * wide))
    elif case == "x in the second's epilogue":
        y = c.binary("ADD", c.conv(x, wide), x)
    else:
        y = prelu(c, c.conv(x, mid))
    model = c.build([y])
    inputs = random_inputs(c.input_shapes, seed=6)
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_X_EPILOGUE_IN2", "1")
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, inputs)
    assert_close(fused, cpu)
    assert fused_stats["dispatches"] == plain_stats["dispatches"], (fused_stats, plain_stats)


@pytest.mark.parametrize("steps,folded", [("8", 0), ("16", 1)])
def test_first_depth_gate(monkeypatch, steps, folded):
    """TFLITE_GLES_X_GEMM_PAIR_STEPS (DeviceProfile::gemm_pair_max_steps; 16
    on NVIDIA, 8 elsewhere): a first GEMM of 10 input slices pairs under 16."""
    c = Chain([1, 32, 32, 40], seed=9)
    y = prelu(c, c.conv(prelu(c, c.conv(c.x, 16)), 8))
    model = c.build([y])
    inputs = random_inputs(c.input_shapes, seed=8)
    for name, value in (("TFLITE_GLES_SHARED_MEMORY_GEMM", "1"),
                        ("TFLITE_GLES_X_EPILOGUE_IN2", "1"),
                        ("TFLITE_GLES_X_GEMM_PAIR_STEPS", steps)):
        monkeypatch.setenv(name, value)
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, inputs)
    assert_close(fused, cpu)
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == folded


@pytest.mark.parametrize("rows32", ["0", "16384"])
def test_pairs_of_a_128x128_map(monkeypatch, rows32):
    """128x128 rows: 64 per workgroup by the base rule, 32 under
    TFLITE_GLES_X_GEMM_PAIR_ROWS32 (NVIDIA's default), the head's stage 0 then
    in two parts of the depth; both against the CPU."""
    c = Chain([1, 128, 128, 8], seed=11)
    x = bottleneck(c, bottleneck(c, c.x, 4), 4)
    model = c.build([x])
    inputs = random_inputs(c.input_shapes, seed=6)
    for name in ("TFLITE_GLES_SHARED_MEMORY_GEMM", "TFLITE_GLES_X_EPILOGUE_IN2",
                 "TFLITE_GLES_X_FUSE_CHAIN_HEADS"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("TFLITE_GLES_X_GEMM_PAIR_ROWS32", rows32)
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, inputs)
    assert_close(plain, cpu)
    assert_close(fused, cpu)
    # The pair, and the first block's 3x3 as its head.
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 2, (fused_stats, plain_stats)


@pytest.mark.parametrize("shape,mid,side,activation", [
    ([1, 32, 32, 32], 8, 4, "NONE"),   # y2 without an epilogue operand (Y2_BINDING2 -1)
    ([1, 37, 29, 20], 5, 3, "RELU"),   # channels not a multiple of 4, a fused activation
    ([2, 24, 24, 12], 3, 8, "NONE")])  # two batches; y2 wider than y
@pytest.mark.parametrize("fp16", [False, True])
def test_second_projection_of_x(monkeypatch, shape, mid, side, activation, fp16):
    """A 1x1 GEMM of the pair's x beside its second (ENet's up block: the
    side branch's projection) as the pair's y2 (gemm_chain.comp Y2,
    TFLITE_GLES_X_FUSE_SECOND_PROJECTION off and on): one dispatch less,
    both the CPU's answers."""
    c = Chain(shape, seed=shape[1] + side)
    x = bottleneck(c, c.x, mid)
    y = prelu(c, c.conv(x, mid))
    y2 = c.conv(x, side, activation=activation)
    model = c.build([y, y2])
    inputs = random_inputs(c.input_shapes, seed=6)
    for name in ("TFLITE_GLES_SHARED_MEMORY_GEMM", "TFLITE_GLES_X_EPILOGUE_IN2", SWITCH):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("TFLITE_GLES_X_FUSE_CHAIN_HEADS", "0")
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_FUSE_SECOND_PROJECTION", model, inputs,
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)
