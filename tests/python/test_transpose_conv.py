"""TRANSPOSE_CONV and MediaPipe's Convolution2DTransposeBias through the real
LiteRT interpreter: each single-op model runs on the CPU kernels and through
the delegate, fully delegated, and the answers agree.

Convolution2DTransposeBias is not in LiteRT's builtin CPU op set; XNNPACK
(the default CPU delegate) implements it, so it is the reference here, and
tests/cpp/conv_test.cc checks it against a naive scatter reference as well.
"""

import struct

import numpy as np
import pytest

from gles_testing import (ModelBuilder, assert_close, assert_fully_delegated, interpreter,
                          invoke, make_delegate, random_inputs, run_cpu_and_gpu, run_tflite,
                          stats)

PRECISIONS = [False, True]


# (input shape, filter OHWI, stride, padding, bias)
TRANSPOSE_CASES = [
    ([1, 4, 5, 3], [5, 3, 3, 3], 2, "SAME", True),
    ([2, 3, 3, 8], [4, 2, 2, 8], 2, "VALID", False),
    ([1, 5, 4, 13], [1, 3, 3, 13], 1, "SAME", True),
]


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,filter_shape,stride,padding,bias", TRANSPOSE_CASES)
def test_transpose_conv(in_shape, filter_shape, stride, padding, bias, fp16):
    rng = np.random.default_rng(5)
    n, h, w, _ = in_shape
    out_c, kh, kw, _ = filter_shape
    if padding == "SAME":
        out_shape = [n, h * stride, w * stride, out_c]
    else:
        out_shape = [n, (h - 1) * stride + kh, (w - 1) * stride + kw, out_c]
    b = ModelBuilder()
    shape = b.add_const(np.array(out_shape, np.int32))
    weights = b.add_const(rng.uniform(-0.5, 0.5, filter_shape).astype(np.float32))
    x = b.add_input(in_shape)
    inputs = [shape, weights, x]
    if bias:
        inputs.append(b.add_const(rng.uniform(-1, 1, [out_c]).astype(np.float32)))
    o = b.add_tensor(out_shape)
    b.add_op("TRANSPOSE_CONV", inputs, [o],
             {"padding": padding, "stride_h": stride, "stride_w": stride},
             version=3 if bias else 1)
    cpu, gpu, stats = run_cpu_and_gpu(b.build(), random_inputs([in_shape], seed=6),
                                      {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


# (input shape, output channels, kernel, stride, padding 1 = SAME / 2 = VALID)
MEDIAPIPE_CASES = [
    ([1, 6, 6, 16], 1, 2, 2, 1),   # the selfie_segmentation layer's shape
    ([1, 6, 5, 16], 3, 2, 2, 1),   # odd width: MediaPipe's SAME drops a column
    ([1, 4, 5, 5], 8, 3, 2, 1),
    ([2, 3, 4, 3], 4, 3, 2, 2),
]


def mediapipe_transpose_model(in_shape, out_c, kernel, stride, padding, seed):
    """A Convolution2DTransposeBias of MediaPipe's options (padding 1 = SAME,
    2 = VALID) with seeded weights and bias, its output by MediaPipe's rule."""
    rng = np.random.default_rng(seed)
    n, h, w, in_c = in_shape

    def size(i):  # MediaPipe's output size rule
        total = max(0, kernel - (i - 1) % stride - 1) if padding == 1 else 0
        return stride * (i - 1) + kernel - total

    b = ModelBuilder()
    x = b.add_input(in_shape)
    weights = b.add_const(rng.uniform(-0.5, 0.5, [out_c, kernel, kernel, in_c]).astype(np.float32))
    bias = b.add_const(rng.uniform(-1, 1, [out_c]).astype(np.float32))
    o = b.add_tensor([n, size(h), size(w), out_c])
    b.add_op("CUSTOM", [x, weights, bias], [o], custom_code="Convolution2DTransposeBias",
             custom_options=struct.pack("<3i", padding, stride, stride))
    return b.build()


def assert_delegate_matches_xnnpack(model, in_shape, seed, fp16):
    inputs = random_inputs([in_shape], seed=seed)
    cpu = run_tflite(model, inputs, use_xnnpack=True)
    delegate = make_delegate({"precision_loss_allowed": fp16})
    gpu = invoke(interpreter(model, delegate), inputs)
    assert_fully_delegated(stats(delegate))
    assert_close(gpu, cpu, fp16)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("in_shape,out_c,kernel,stride,padding", MEDIAPIPE_CASES)
def test_mediapipe_convolution2d_transpose_bias(in_shape, out_c, kernel, stride, padding,
                                                 fp16):
    model = mediapipe_transpose_model(in_shape, out_c, kernel, stride, padding, seed=12)
    assert_delegate_matches_xnnpack(model, in_shape, 13, fp16)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("min_invocations", ["0", "65536"])
@pytest.mark.parametrize("in_shape,out_c,kernel", [([1, 256, 258, 4], 2, 3), ([1, 10, 6, 16], 2, 3)])
def test_transpose_conv_many_core_tiles(monkeypatch, in_shape, out_c, kernel, min_invocations,
                                        fp16):
    """Many-core GPUs (forced here with TFLITE_GLES_MIN_INVOCATIONS) tile a
    transposed convolution for 65536 invocations: one pixel each on small
    maps (the second shape), 4-pixel tiles on a 512x516 output (the hair
    model's last layer's kind; the last tile runs past the row, 258 pixels
    per phase). llvmpipe's own tiles with "0". Even sizes: MediaPipe's SAME
    output is then twice the input."""
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", min_invocations)
    model = mediapipe_transpose_model(in_shape, out_c, kernel, 2, 1, seed=21)
    assert_delegate_matches_xnnpack(model, in_shape, 17, fp16)
