"""The split-depth GEMM (shaders/gemm.comp, DeviceProfile::
shared_memory_gemm) through the real LiteRT interpreter. Real GPUs choose it
for 1x1 CONV_2D and FULLY_CONNECTED; TFLITE_GLES_SHARED_MEMORY_GEMM=1 forces
it here (llvmpipe), with TFLITE_GLES_MIN_INVOCATIONS at the GPU's value so
the tiles split K as on one. Each model runs on the CPU kernels and through
the delegate; the profile shows which shader ran each node.
"""

import numpy as np
import pytest

import gles_testing as gt
from test_fusion import Chain


def run_with_profile(model, inputs, fp16):
    """(CPU outputs, GPU outputs, stats, shaders of the GPU dispatches)."""
    cpu = gt.invoke(gt.interpreter(model), inputs)
    delegate = gt.make_delegate({"precision_loss_allowed": fp16, "enable_profiling": "true"})
    interp = gt.interpreter(model, delegate)
    gpu = gt.invoke(interp, inputs)
    shaders = [entry["shader"] for entry in gt.profile(delegate)]
    stats = gt.stats(delegate)
    del interp
    return cpu, gpu, stats, shaders


@pytest.fixture(autouse=True)
def forced_gemm(monkeypatch):
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", "65536")
    monkeypatch.delenv("TFLITE_GLES_GEMM_TILE", raising=False)


@pytest.mark.parametrize("fma_chain", ["0", "1"])
@pytest.mark.parametrize("fp16", [False, True])
def test_pointwise_convs_with_fused_add_and_activations(monkeypatch, fp16, fma_chain):
    """Batch 2, odd channel counts (13 -> 30 -> 7), a fused RELU6, and an ADD
    of a model input + RELU folded into the second GEMM's store; the tiled
    core's products summed per step or fused one by one (FMA_CHAIN)."""
    monkeypatch.setenv("TFLITE_GLES_X_FMA_CHAIN", fma_chain)
    c = Chain([2, 9, 7, 13], seed=21)
    y = c.conv(c.x, 30, activation="RELU6")
    y = c.conv(y, 7)
    skip = c.extra_input(c.shapes[y])
    model = c.build([c.unary("RELU", c.binary("ADD", y, skip))])
    cpu, gpu, stats, shaders = run_with_profile(
        model, gt.random_inputs(c.input_shapes, seed=5), fp16)
    gt.assert_fully_delegated(stats)
    gt.assert_close(gpu, cpu, fp16)
    assert shaders.count("gemm") == 2 and "conv2d" not in shaders, shaders
    assert "elementwise" not in shaders, shaders  # ADD + RELU fused


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("rows,depth,outputs", [(1, 1024, 1001), (3, 45, 7), (6, 70, 33)])
def test_fully_connected_split_k_and_tiled(rows, depth, outputs, fp16):
    """A classifier's logits and a 3-row FC take the split-K form, 6 rows
    the tiled one; then a MAXIMUM with a model input fused into the store."""
    c = Chain([rows, depth], seed=rows)
    c.shapes[c.x] = [rows, depth]
    y = c.fully_connected(c.x, outputs)
    other = c.extra_input(c.shapes[y])
    model = c.build([c.binary("MAXIMUM", y, other)])
    cpu, gpu, stats, shaders = run_with_profile(
        model, gt.random_inputs(c.input_shapes, seed=6), fp16)
    gt.assert_fully_delegated(stats)
    gt.assert_close(gpu, cpu, fp16)
    assert shaders.count("gemm") == 1 and "elementwise" not in shaders, shaders


def test_turned_off_the_register_tiled_shader_runs(monkeypatch):
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "0")
    c = Chain([1, 5, 5, 8], seed=3)
    model = c.build([c.conv(c.x, 4)])
    cpu, gpu, stats, shaders = run_with_profile(model, gt.random_inputs(c.input_shapes), False)
    gt.assert_close(gpu, cpu)
    assert "conv2d" in shaders and "gemm" not in shaders, shaders



@pytest.mark.parametrize("fp16", [False, True])
def test_gemms_with_shapes_compiled_in_agree_with_the_cpu(monkeypatch, fp16):
    """DeviceProfile::specialize_gemm_below_rows: GEMMs of fewer rows than
    the limit compile their shapes as constants, one program per shape. Two
    pointwise layers with one tile and different shapes (84 and 25 rows,
    16 -> 16 channels) share a program with uniforms (limit 0), not with
    constants (limit above both), and a limit between them specializes only
    the smaller; every variant matches the CPU kernels."""
    c = Chain([2, 6, 7, 16], seed=41)
    big = c.conv(c.x, 16)
    small = c.conv(c.extra_input([1, 5, 5, 16]), 16)
    model = c.build([big, small])
    inputs = gt.random_inputs(c.input_shapes, seed=9)
    programs = {}
    for limit in ("0", "50", "1000000"):
        monkeypatch.setenv("TFLITE_GLES_SPECIALIZE_GEMM_ROWS", limit)
        cpu, gpu, stats, shaders = run_with_profile(model, inputs, fp16)
        gt.assert_fully_delegated(stats)
        gt.assert_close(gpu, cpu, fp16)
        assert shaders.count("gemm") == 2, shaders
        programs[limit] = stats["programs"]
    # The other programs (layout conversions) are the same in all three.
    assert programs["50"] == programs["0"] + 1, programs
    assert programs["1000000"] == programs["0"] + 1, programs
