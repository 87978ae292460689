"""Instance-norm statistics in one dispatch (delegate/passes/norm_fusion.h): MEAN,
SQUARED_DIFFERENCE, MEAN, ADD eps, RSQRT over H and W become
shaders/norm_stats.comp. Through the real LiteRT interpreter, on random
data: the normalized output matches the CPU kernels with the fusion (the
default) and without it (TFLITE_GLES_FUSE_NORM_STATS=0), the fused graph
runs at least four dispatches fewer, and graphs that differ from the
pattern in one respect keep every dispatch."""

import numpy as np
import pytest

from gles_testing import (assert_close, assert_fully_delegated, interpreter, invoke,
                          make_delegate, random_inputs, run_cpu_and_gpu, run_switch_off_and_on)
from test_fusion import Chain


def mean_hw(c, x, axes=(1, 2)):
    n, _, _, ch = c.shapes[x]
    keep = [n, 1 if 1 in axes else c.shapes[x][1], 1 if 2 in axes else c.shapes[x][2], ch]
    out = c.b.add_tensor(keep)
    c.shapes[out] = keep
    c.b.add_op("MEAN", [x, c.b.add_const(np.array(axes, np.int32))], [out],
               {"keep_dims": True})
    return out


def instance_norm(c, x, eps=1e-5, swap=False, add_activation="NONE", axes=(1, 2),
                  eps_shape=()):
    """y = (x - mean) * rsqrt(var + eps), written as converters write it;
    returns y and the intermediate tensors."""
    m = mean_hw(c, x, axes)
    d = c.b.add_tensor(c.shapes[x])
    c.shapes[d] = c.shapes[x]
    c.b.add_op("SQUARED_DIFFERENCE", [m, x] if swap else [x, m], [d])
    v = mean_hw(c, d, axes)
    eps_tensor = c.b.add_const(np.full(eps_shape, eps, np.float32))
    c.shapes[eps_tensor] = list(eps_shape)
    t = c.binary("ADD", v, eps_tensor, activation=add_activation)
    r = c.unary("RSQRT", t)
    centered = c.binary("SUB", x, m)
    return c.binary("MUL", centered, r), {"d": d, "v": v, "t": t}


def run(monkeypatch, model, inputs, fp16=False):
    """(CPU outputs, (outputs, stats) unfused, (outputs, stats) fused)."""
    return run_switch_off_and_on(monkeypatch, "TFLITE_GLES_FUSE_NORM_STATS", model, inputs,
                                 {"precision_loss_allowed": fp16})


@pytest.mark.parametrize("shape,eps,swap", [
    ([1, 16, 16, 8], 1e-5, False),
    ([2, 7, 5, 13], 1e-3, True),
    ([1, 24, 20, 32], 1e-5, False)])
@pytest.mark.parametrize("fp16", [False, True])
def test_instance_norm_statistics_fuse(monkeypatch, shape, eps, swap, fp16):
    c = Chain(shape, seed=shape[-1])
    # fp32: a map with a large mean and small spread, where a variance
    # computed as E[x^2] - mean^2 would lose most of its digits. (Half floats
    # cannot store such a map to 1e-2: their step at 25 is 1/64.)
    x = c.conv(c.x, shape[-1])
    x = c.binary("ADD", x, c.const([shape[-1]], *((-1.0, 1.0) if fp16 else (20.0, 30.0))))
    y, _ = instance_norm(c, x, eps, swap)
    model = c.build([y])
    inputs = random_inputs(c.input_shapes, seed=3)
    cpu, (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, model, inputs, fp16)
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    # Five nodes -> one dispatch. Since MEAN takes elementwise epilogues (the
    # quantization simulator's work), the unfused chain folds part of the
    # variance's epilogue into its MEAN and has one dispatch fewer than
    # before (8 -> 7 on llvmpipe, first shape, fp32); the fusion still saves
    # three, and its own count (4 there) is unchanged.
    assert fused_stats["dispatches"] <= plain_stats["dispatches"] - 3, (fused_stats, plain_stats)


@pytest.mark.parametrize("variant", ["variance_is_an_output", "relu_after_eps",
                                     "mean_over_h_only", "per_channel_eps", "negative_eps"])
def test_near_misses_keep_every_dispatch(monkeypatch, variant):
    shape = [1, 12, 10, 8]
    c = Chain(shape, seed=5)
    x = c.conv(c.x, shape[-1])
    kwargs = {"add_activation": "RELU"} if variant == "relu_after_eps" else {}
    if variant == "mean_over_h_only":
        kwargs["axes"] = (1,)
    if variant == "per_channel_eps":
        kwargs["eps_shape"] = (shape[-1],)
    if variant == "negative_eps":
        kwargs["eps"] = -1e-3
    y, parts = instance_norm(c, x, **kwargs)
    outputs = [y, parts["v"]] if variant == "variance_is_an_output" else [y]
    model = c.build(outputs)
    inputs = random_inputs(c.input_shapes, seed=4)
    cpu, (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, model, inputs)
    assert_close(fused, cpu)
    assert fused_stats["dispatches"] == plain_stats["dispatches"], (fused_stats, plain_stats)


def test_fresh_inputs_every_invoke(monkeypatch):
    """The statistics are recomputed on every invoke (nothing cached)."""
    shape = [1, 9, 11, 12]
    c = Chain(shape, seed=8)
    y, _ = instance_norm(c, c.conv(c.x, shape[-1]))
    model = c.build([y])
    monkeypatch.setenv("TFLITE_GLES_FUSE_NORM_STATS", "1")
    for seed in (11, 12):
        inputs = random_inputs(c.input_shapes, seed=seed)
        cpu, gpu, stats = run_cpu_and_gpu(model, inputs, {})
        assert_fully_delegated(stats)
        assert_close(gpu, cpu)


def conditional_norm(c, x, style, add_activation="NONE", swap=False, shift_is_output=False):
    """Style transfer's conditional instance norm: gamma and beta from a style
    vector by 1x1 convolutions (added after the statistics, as the converter
    orders them), then s = rstd * gamma, shift = beta - mean * s,
    y = x * s + shift. Returns y and the tensors an output may name."""
    ch = c.shapes[x][-1]
    m = mean_hw(c, x)
    d = c.b.add_tensor(c.shapes[x])
    c.shapes[d] = c.shapes[x]
    c.b.add_op("SQUARED_DIFFERENCE", [x, m], [d])
    v = mean_hw(c, d)
    eps = c.b.add_const(np.full((), 1e-3, np.float32))
    c.shapes[eps] = []
    r = c.unary("RSQRT", c.binary("ADD", v, eps))
    beta = c.conv(style, ch)
    gamma = c.conv(style, ch)
    s = c.binary("MUL", gamma, r) if swap else c.binary("MUL", r, gamma)
    u = c.binary("MUL", s, m) if swap else c.binary("MUL", m, s)
    shift = c.binary("SUB", beta, u)
    y = c.binary("ADD", c.binary("MUL", x, s), shift, activation=add_activation)
    return y, {"u": u, "shift": shift}


@pytest.mark.parametrize("shape,swap,activation", [
    ([1, 16, 16, 8], False, "NONE"),
    ([1, 12, 10, 13], True, "RELU"),   # padded lanes, operands swapped
    ([1, 33, 7, 4], False, "NONE")])   # an odd map, one slice
@pytest.mark.parametrize("fp16", [False, True])
def test_conditional_norm_affine_half_fuses(monkeypatch, shape, swap, activation, fp16):
    """The affine half in the statistics' dispatch (norm_fusion.h): same
    results as the CPU kernels and as without it, and fewer dispatches (the
    gamma and beta convolutions no longer wait for the statistics)."""
    c = Chain(shape, seed=shape[-1] + 1)
    style = c.extra_input([1, 1, 1, 20])
    x = c.conv(c.x, shape[-1], kernel=3)
    y, _ = conditional_norm(c, x, style, activation, swap)
    model = c.build([y])
    inputs = random_inputs(c.input_shapes, seed=6)
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_FUSE_NORM_AFFINE", model, inputs,
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    assert fused_stats["dispatches"] <= plain_stats["dispatches"] - 1, (fused_stats, plain_stats)


@pytest.mark.parametrize("variant", ["u_is_an_output", "gles31_minimum"])
def test_conditional_norm_near_misses(monkeypatch, variant):
    """A product mean * s read outside the group, or a device that may bind
    only 4 buffers (the GLES 3.1 minimum): the affine half stays separate
    dispatches, with the same results."""
    shape = [1, 10, 12, 8]
    c = Chain(shape, seed=9)
    style = c.extra_input([1, 1, 1, 16])
    y, parts = conditional_norm(c, c.conv(c.x, shape[-1]), style)
    model = c.build([y, parts["u"]] if variant == "u_is_an_output" else [y])
    if variant == "gles31_minimum":
        monkeypatch.setenv("TFLITE_GLES_DEVICE_PROFILE", "gles31-minimum")
    inputs = random_inputs(c.input_shapes, seed=7)
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_FUSE_NORM_AFFINE", model, inputs)
    assert_close(plain, cpu)
    assert_close(fused, cpu)
    assert fused_stats["dispatches"] == plain_stats["dispatches"], (fused_stats, plain_stats)


@pytest.mark.parametrize("fp16", [False, True])
def test_style_gemms_batched_into_one_dispatch(monkeypatch, fp16):
    """Three conditional norms (8, 13 and 3 channels: padded lanes and
    padded slices) whose gamma and beta come from one style vector: with
    gemm.comp (as on real GPUs) the six one-row GEMMs run as one dispatch (delegate/passes/gemm_batching.h), each norm reading its
    gamma and beta at an offset of the joined output; same results as the
    CPU kernels and as with the batching off."""
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    c = Chain([1, 10, 12, 8], seed=21)
    style = c.extra_input([1, 1, 1, 20])
    y, _ = conditional_norm(c, c.conv(c.x, 8, kernel=3), style)
    y, _ = conditional_norm(c, c.conv(y, 13, kernel=3), style, add_activation="RELU")
    y, _ = conditional_norm(c, c.conv(y, 3), style, swap=True)
    model = c.build([y])
    inputs = random_inputs(c.input_shapes, seed=8)
    cpu, (plain, plain_stats), (batched, batched_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_BATCH_GEMMS", model, inputs,
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(batched_stats)
    assert_close(plain, cpu, fp16)
    assert_close(batched, cpu, fp16)
    # The six GEMMs agree on their tile: one dispatch instead of six.
    assert plain_stats["dispatches"] - batched_stats["dispatches"] == 5, (
        plain_stats, batched_stats)


@pytest.mark.parametrize("shape,affine,large_mean", [
    ([1, 24, 30, 13], False, False),  # 720 pixels: 3 runs of 256, the last one short
    ([2, 40, 33, 8], False, False),   # batch 2, 6 runs, the last of 40 pixels
    ([1, 32, 20, 5], True, True),     # conditional: scale and shift from the runs
    ([1, 130, 130, 4], False, False)])  # 67 runs: more than a 64-lane combine, lanes take 2
@pytest.mark.parametrize("fp16", [False, True])
def test_statistics_split_over_workgroups(monkeypatch, shape, affine, large_mean, fp16):
    """norm_stats.comp SPLIT (real GPUs' default; forced here): each slice's
    pixels in runs of 4 per invocation, a workgroup each, the last to arrive
    combining their means and M2 by the pairwise rule. fp32 on a map of large
    mean and small spread (as above; on larger maps the CPU's own float sums
    miss 1e-5 there, so they are centred); same results as the CPU kernels and
    as unsplit, over two invokes of one delegate (the arrival counters are
    zeroed for the next), and the same number of dispatches."""
    monkeypatch.setenv("TFLITE_GLES_FUSE_NORM_STATS", "1")
    c = Chain(shape, seed=shape[1])
    x = c.conv(c.x, shape[-1])
    big = large_mean and not fp16
    # A mean of 8-12 over a spread of ~0.5-0.9: with 20-30 one ulp of a
    # channel's mean (or of mean * s, s = gamma * rstd up to ~12) moved the
    # conditional norm's output by ~1e-5 of its size, so LiteRT's float sums
    # and any GPU's disagreed by ~1e-5 (H200: 1.06e-5 with the session-13
    # library and this one alike; 8-12: 4.8e-6 there and on llvmpipe;
    # docs/perf/log.md, "style3, session 14").
    x = c.binary("ADD", x, c.const([shape[-1]], *((8.0, 12.0) if big else (-1.0, 1.0))))
    if affine:
        y, _ = conditional_norm(c, x, c.extra_input([1, 1, 1, 12]))
    else:
        y, _ = instance_norm(c, x)
    model = c.build([y])
    inputs = random_inputs(c.input_shapes, seed=3)
    cpu, (plain, plain_stats), (split, split_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_NORM_SPLIT", model, inputs,
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(split_stats)
    assert_close(plain, cpu, fp16)
    assert_close(split, cpu, fp16)
    assert split_stats["dispatches"] == plain_stats["dispatches"]
    delegate = make_delegate({"precision_loss_allowed": fp16})
    interp = interpreter(model, delegate)
    for seed in (5, 6):
        fresh = random_inputs(c.input_shapes, seed=seed)
        assert_close(invoke(interp, fresh), invoke(interpreter(model), fresh), fp16)
