"""Depthwise-into-GEMM fusion (delegate/dw_fusion.h) through the real LiteRT
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


@pytest.mark.parametrize("fp16", [False, True])
def test_depthwise_pointwise_chain_fuses_and_agrees_with_the_cpu(monkeypatch, fp16):
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", "32768")
    monkeypatch.delenv("TFLITE_GLES_GEMM_TILE", raising=False)
    c, model = mobilenet_like_chain()
    inputs = gt.random_inputs(c.input_shapes, seed=7)
    dispatches = {}
    for fuse in ("0", "1"):
        monkeypatch.setenv("TFLITE_GLES_FUSE_DEPTHWISE", fuse)
        cpu, gpu, stats = gt.run_cpu_and_gpu(model, inputs, {"precision_loss_allowed": fp16})
        gt.assert_fully_delegated(stats)
        gt.assert_close(gpu, cpu, fp16)
        dispatches[fuse] = stats["dispatches"]
    assert dispatches["1"] == dispatches["0"] - 2, dispatches
