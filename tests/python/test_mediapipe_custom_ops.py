"""MediaPipe's GPU-only custom ops (MaxPoolingWithArgmax2D, MaxUnpooling2D)
inside the real LiteRT interpreter. LiteRT has no CPU kernels for them, so
such a model only loads because the delegate claims them; the answer is
checked against an independent NumPy reference."""

import struct

import numpy as np
import pytest

from gles_testing import ModelBuilder, assert_close, invoke, interpreter, make_delegate, stats


def pool_options(filter_size: int, stride: int) -> bytes:
    """Raw TfLitePoolParams, as MediaPipe stores them in custom options:
    padding (SAME=1), stride w/h, filter w/h, activation, computed padding."""
    return struct.pack("<6i4i", 1, stride, stride, filter_size, filter_size, 0, 0, 0, 0, 0)


def argmax_pool_then_unpool_model(shape):
    n, h, w, c = shape
    b = ModelBuilder()
    x = b.add_input(shape)
    pooled = b.add_tensor([n, h // 2, w // 2, c])
    indices = b.add_tensor([n, h // 2, w // 2, c])
    out = b.add_tensor(shape)
    options = pool_options(2, 2)
    b.add_op("CUSTOM", [x], [pooled, indices], custom_code="MaxPoolingWithArgmax2D",
             custom_options=options)
    b.add_op("CUSTOM", [pooled, indices], [out], custom_code="MaxUnpooling2D",
             custom_options=options)
    b.set_outputs([pooled, out])
    return b.build()


def reference(x):
    """2x2/2 max pooling, and each window's maximum put back in its place."""
    n, h, w, c = x.shape
    windows = x.reshape(n, h // 2, 2, w // 2, 2, c)
    pooled = windows.max(axis=(2, 4))
    is_max = windows == pooled[:, :, None, :, None, :]
    unpooled = np.where(is_max, windows, 0).reshape(x.shape)
    return pooled, unpooled


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("channels", [1, 3, 8, 13])
def test_argmax_pooling_and_unpooling_run_in_the_real_runtime(channels, fp16):
    shape = [1, 6, 8, channels]
    # Distinct values per window, so the maximum (and its index) is unique.
    rng = np.random.default_rng(channels)
    x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float32) / 16 - 3
    delegate = make_delegate({"precision_loss_allowed": fp16})
    outputs = invoke(interpreter(argmax_pool_then_unpool_model(shape), delegate), [x])
    s = stats(delegate)
    assert (s["nodes_delegated"], s["nodes_total"], s["partitions"]) == (2, 2, 1), s
    assert_close(outputs, list(reference(x)), fp16)
