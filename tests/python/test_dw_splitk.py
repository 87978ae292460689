"""Split-K across workgroups for depthwise-fused GEMMs (delegate/passes/dw_splitk.h,
shaders/gemm_dw_splitk.comp) through the real LiteRT interpreter. Off by
default (slower on the H200: docs/perf/log.md, "Split-K across workgroups
(skw)"); here (llvmpipe) TFLITE_GLES_SHARED_MEMORY_GEMM=1,
TFLITE_GLES_FUSE_DEPTHWISE=1 and TFLITE_GLES_X_DW_SPLITK=1 force it, and
TFLITE_GLES_X_DW_SPLITK_TILE picks tiles that cut these small depths into
several chunks (the cross-workgroup sum), chunks that do not divide the
depth, and one chunk (no partial sums). Each model runs twice in a row with
fresh inputs on one interpreter: the second run only agrees with the CPU
kernels if the first left every arrival counter at zero.
"""

import pytest

import gles_testing as gt
from test_fusion import Chain, window

ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def depthwise_then_pointwise(batch, size, channels, out_channels, stride, dw_act, pw_act, seed):
    c = Chain([batch, size, size, channels], seed=seed)
    out = -(-size // stride)
    y = c.b.add_tensor([batch, out, out, channels])
    c.shapes[y] = [batch, out, out, channels]
    c.b.add_op("DEPTHWISE_CONV_2D",
               [c.x, c.const([1, 3, 3, channels]), c.const([channels], -1, 1)], [y],
               dict(window(stride, dw_act), depth_multiplier=1))
    return c, c.build([c.conv(y, out_channels, activation=pw_act)])


def run_twice(model, input_shapes, fp16, seed):
    """Two invokes of one delegated interpreter, each checked against the
    CPU; returns the shaders of the GPU dispatches."""
    delegate = gt.make_delegate({"precision_loss_allowed": fp16, "enable_profiling": "true"})
    interp = gt.interpreter(model, delegate)
    cpu_interp = gt.interpreter(model)
    for run in range(2):
        inputs = gt.random_inputs(input_shapes, seed=seed + run)
        gpu = gt.invoke(interp, inputs)
        cpu = gt.invoke(cpu_interp, inputs)
        gt.assert_close(gpu, cpu, fp16)
    shaders = [entry["shader"] for entry in gt.profile(delegate)]
    gt.assert_fully_delegated(gt.stats(delegate))
    del interp
    return shaders


def split_alone(shaders):
    """The pair ran as one gemm_dw_splitk dispatch (besides layout
    conversions of the model's input and output)."""
    return ("gemm_dw_splitk" in shaders and "gemm" not in shaders and
            "depthwise_conv2d" not in shaders)


@pytest.fixture(autouse=True)
def forced_split(monkeypatch):
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", "65536")
    monkeypatch.setenv("TFLITE_GLES_FUSE_DEPTHWISE", "1")
    monkeypatch.setenv("TFLITE_GLES_X_DW_SPLITK", "1")
    monkeypatch.delenv("TFLITE_GLES_GEMM_TILE", raising=False)


# (batch, map, stride, depthwise activation, GEMM activation): 14x14 and
# 7x7 outputs, stride 1 and 2, every activation on both sides, batch 2.
CASES = [(1, 14, 1, "RELU6", "NONE"), (2, 14, 1, "NONE", "RELU"),
         (1, 28, 2, "RELU", "RELU6"), (2, 7, 1, "RELU_N1_TO_1", "RELU_N1_TO_1"),
         (1, 14, 2, "RELU6", "RELU6")]


@pytest.mark.parametrize("batch,size,stride,dw_act,pw_act", CASES)
@pytest.mark.parametrize("fp16", [False, True])
def test_chunks_across_workgroups_agree_with_the_cpu(monkeypatch, batch, size, stride, dw_act,
                                                     pw_act, fp16):
    # 24 channels = 6 depth steps in chunks of 2: three workgroups per tile.
    monkeypatch.setenv("TFLITE_GLES_X_DW_SPLITK_TILE", "4/4/2/2")
    c, model = depthwise_then_pointwise(batch, size, 24, 21, stride, dw_act, pw_act,
                                        seed=size + stride + batch)
    shaders = run_twice(model, c.input_shapes, fp16, seed=3)
    assert split_alone(shaders), shaders


@pytest.mark.parametrize("tile", ["8/2/2/4", "4/4/1/6", "3/8/2/5"])
def test_uneven_and_single_chunks_agree_with_the_cpu(monkeypatch, tile):
    """Chunks of 4 and 5 steps over 6 (the last chunk shorter), one chunk of
    all 6, and 3 rows a workgroup (rows not a power of two)."""
    monkeypatch.setenv("TFLITE_GLES_X_DW_SPLITK_TILE", tile)
    c, model = depthwise_then_pointwise(2, 7, 24, 33, 1, "RELU6", "RELU", seed=5)
    shaders = run_twice(model, c.input_shapes, False, seed=11)
    assert split_alone(shaders), shaders


def test_default_rule_keeps_shallow_layers_on_gemm(monkeypatch):
    """Without a tile override only layers of at least 256 depth steps
    (1024 channels) split: a 24-channel one stays on gemm.comp."""
    monkeypatch.delenv("TFLITE_GLES_X_DW_SPLITK_TILE", raising=False)
    c, model = depthwise_then_pointwise(1, 7, 24, 16, 1, "RELU", "NONE", seed=6)
    shaders = run_twice(model, c.input_shapes, False, seed=12)
    assert "gemm" in shaders and "gemm_dw_splitk" not in shaders, shaders
