"""Depthwise-into-GEMM fusion (delegate/passes/dw_fusion.h) through the real LiteRT
interpreter. Real GPUs fuse each 3x3 depthwise into the pointwise GEMM that
reads it; here (llvmpipe) TFLITE_GLES_SHARED_MEMORY_GEMM=1 and
TFLITE_GLES_FUSE_DEPTHWISE=1 force it, and =0 gives the unfused baseline.
A MobileNet-like chain (dw 3x3 stride 1 -> 1x1 conv -> dw stride 2 -> 1x1
conv) must agree with the CPU kernels either way, in fewer dispatches when
fused.
"""

import pytest

import gles_testing as gt
from test_fusion import Chain, window


def mobilenet_like_chain():
    c = Chain([1, 15, 13, 10], seed=31)
    y = c.depthwise(c.x, activation="RELU6")
    y = c.conv(y, 22, activation="RELU6")
    n, h, w, ch = c.shapes[y]
    strided = c.b.add_tensor([n, -(-h // 2), -(-w // 2), ch])
    c.shapes[strided] = [n, -(-h // 2), -(-w // 2), ch]
    c.b.add_op("DEPTHWISE_CONV_2D", [y, c.const([1, 3, 3, ch]), c.const([ch], -1, 1)],
               [strided], dict(window(2, "RELU6"), depth_multiplier=1))
    y = c.conv(strided, 12)
    return c, c.build([y])


def fused_minus_unfused(monkeypatch, model, inputs, fp16):
    """Runs `model` with the depthwise fusion off and on, each fully delegated
    and within tolerance of the CPU; returns how many dispatches fusion
    added (negative: saved)."""
    cpu, (plain, plain_stats), (fused, fused_stats) = gt.run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_FUSE_DEPTHWISE", model, inputs,
        {"precision_loss_allowed": fp16})
    for gpu, stats in ((plain, plain_stats), (fused, fused_stats)):
        gt.assert_fully_delegated(stats)
        gt.assert_close(gpu, cpu, fp16)
    return fused_stats["dispatches"] - plain_stats["dispatches"]


@pytest.mark.parametrize("fp16", [False, True])
def test_depthwise_pointwise_chain_fuses_and_agrees_with_the_cpu(monkeypatch, fp16):
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", "65536")
    monkeypatch.delenv("TFLITE_GLES_GEMM_TILE", raising=False)
    c, model = mobilenet_like_chain()
    inputs = gt.random_inputs(c.input_shapes, seed=7)
    assert fused_minus_unfused(monkeypatch, model, inputs, fp16) == -2


def depthwise_pointwise(kernel, stride, dilation, padding="SAME", multiplier=1,
                        shape=(2, 17, 14, 12)):
    """One depthwise of any kernel (the general path, not FAST_3X3) feeding
    a 1x1 convolution."""
    c = Chain(list(shape), seed=kernel[0] * 7 + kernel[1] + stride + dilation[0])
    n, h, w, ch = shape
    def out_size(size, k, d):
        if padding == "SAME":
            return -(-size // stride)
        return (size - (k - 1) * d - 1) // stride + 1
    out_ch = ch * multiplier
    y = c.b.add_tensor([n, out_size(h, kernel[0], dilation[0]),
                        out_size(w, kernel[1], dilation[1]), out_ch])
    c.shapes[y] = [n, out_size(h, kernel[0], dilation[0]), out_size(w, kernel[1], dilation[1]),
                   out_ch]
    c.b.add_op("DEPTHWISE_CONV_2D",
               [c.x, c.const([1, kernel[0], kernel[1], out_ch]), c.const([out_ch], -1, 1)], [y],
               {"padding": padding, "stride_h": stride, "stride_w": stride,
                "dilation_h_factor": dilation[0], "dilation_w_factor": dilation[1],
                "fused_activation_function": "RELU", "depth_multiplier": multiplier})
    return c, c.build([c.conv(y, 9)])


@pytest.mark.parametrize("kernel,stride,dilation,padding,multiplier,fuses", [
    ((5, 5), 1, (1, 1), "SAME", 1, True),    # palm detection's blocks
    ((5, 5), 2, (1, 1), "SAME", 1, True),
    ((3, 3), 1, (2, 2), "SAME", 1, True),    # deeplabv3's atrous layers
    ((5, 3), 1, (1, 2), "VALID", 1, True),
    ((3, 3), 3, (1, 1), "SAME", 1, True),    # stride 3: not FAST_3X3
    ((3, 3), 1, (1, 1), "SAME", 2, False),   # multiplier 2: not fused
    ((7, 7), 1, (1, 1), "SAME", 1, False)])  # larger than 5x5: not fused
@pytest.mark.parametrize("fp16", [False, True])
def test_general_depthwise_kernels_fuse_and_agree(monkeypatch, kernel, stride, dilation,
                                                  padding, multiplier, fuses, fp16):
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", "65536")
    monkeypatch.delenv("TFLITE_GLES_GEMM_TILE", raising=False)
    c, model = depthwise_pointwise(kernel, stride, dilation, padding, multiplier)
    inputs = gt.random_inputs(c.input_shapes, seed=9)
    assert fused_minus_unfused(monkeypatch, model, inputs, fp16) == (-1 if fuses else 0)


def test_large_kernels_on_big_maps_stay_unfused(monkeypatch):
    """A 5x5 depthwise over more than 24x24 output pixels keeps its own
    dispatch (measured slower fused there); a 3x3 one of the same size
    fuses."""
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", "65536")
    for kernel, fuses in (((5, 5), False), ((3, 3), True)):
        c, model = depthwise_pointwise(kernel, 1, (1, 1), shape=(1, 26, 25, 8))
        inputs = gt.random_inputs(c.input_shapes, seed=10)
        assert fused_minus_unfused(monkeypatch, model, inputs, False) == (-1 if fuses else 0), kernel


@pytest.mark.parametrize("shape,out_ch,stride", [
    ((1, 7, 7, 64), 132, 1),    # 7x7: 2 rows x 4 invocations, depth in 16 parts
    ((2, 7, 7, 40), 20, 1),     # batch 2, 98 rows; 5 output slices
    ((1, 15, 15, 24), 40, 2),   # stride 2 onto 8x8
    ((1, 14, 14, 36), 72, 1),   # 14x14: 2 rows a invocation
    ((1, 14, 14, 16), 512, 1),  # 14x14, 128 output slices: fp32 takes 32 a workgroup
    ((1, 28, 28, 16), 130, 1),  # 28x28: 4 rows, 33 output slices
    ((1, 63, 66, 16), 128, 2),  # stride 2 onto 32x33: 4 rows, depth in 4 parts
])
@pytest.mark.parametrize("fp16", [False, True])
def test_register_tiles_in_fused_gemms_agree_with_the_cpu(monkeypatch, shape, out_ch, stride,
                                                          fp16):
    """TFLITE_GLES_X_DW_REGISTER_TILES (kernels/gemm.cc,
    RegisterTiledDepthwiseGemm; which tile each map gets is the gtest
    SharedMemoryGemm.DepthwiseFusedTilesUseRegisterTilesOnlyOnSmallMaps):
    off and on, each one fused dispatch that matches the CPU."""
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_FUSE_DEPTHWISE", "1")
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", "65536")
    monkeypatch.delenv("TFLITE_GLES_GEMM_TILE", raising=False)
    c = Chain(list(shape), seed=sum(shape) + out_ch)
    n, h, w, ch = shape
    y = c.b.add_tensor([n, -(-h // stride), -(-w // stride), ch])
    c.shapes[y] = [n, -(-h // stride), -(-w // stride), ch]
    c.b.add_op("DEPTHWISE_CONV_2D", [c.x, c.const([1, 3, 3, ch]), c.const([ch], -1, 1)],
               [y], dict(window(stride, "RELU6"), depth_multiplier=1))
    model = c.build([c.conv(y, out_ch, activation="RELU")])
    inputs = gt.random_inputs(c.input_shapes, seed=11)
    cpu, (off, off_stats), (on, on_stats) = gt.run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_DW_REGISTER_TILES", model, inputs,
        {"precision_loss_allowed": fp16})
    for gpu, stats in ((off, off_stats), (on, on_stats)):
        gt.assert_fully_delegated(stats)
        assert stats["dispatches"] == off_stats["dispatches"]
        gt.assert_close(gpu, cpu, fp16)
