"""Naive NumPy reference implementations of TFLite ops, used as test oracles.

These are written straight from the op definitions (direct convolution, one
output pixel and one kernel tap at a time) rather than for speed, so that they
share no code or tricks with either the TFLite CPU kernels or our GPU shaders.
Everything is computed in float64 so that the reference is more accurate than
the float32 implementations it is compared against.

Layouts follow TFLite:
  activations  NHWC
  conv weights [out_channels, kernel_h, kernel_w, in_channels]
  depthwise    [1, kernel_h, kernel_w, in_channels * depth_multiplier]
"""

import numpy as np


def output_size_and_pad_before(in_size, kernel_size, stride, dilation, padding):
    """Returns (output size, padding before) along one spatial axis.

    SAME pads so that output = ceil(in / stride), with the odd extra pixel of
    padding going after the data; VALID never pads.
    """
    effective_kernel = (kernel_size - 1) * dilation + 1
    if padding == "VALID":
        return (in_size - effective_kernel) // stride + 1, 0
    if padding != "SAME":
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    out_size = -(-in_size // stride)
    total_pad = max((out_size - 1) * stride + effective_kernel - in_size, 0)
    return out_size, total_pad // 2


def apply_activation(x, activation):
    """Applies a TFLite fused activation, given by its enum name."""
    if activation == "NONE":
        return x
    if activation == "RELU":
        return np.maximum(x, 0.0)
    if activation == "RELU_N1_TO_1":
        return np.clip(x, -1.0, 1.0)
    if activation == "RELU6":
        return np.clip(x, 0.0, 6.0)
    if activation == "TANH":
        return np.tanh(x)
    raise ValueError(f"unsupported activation {activation!r}")


def _windowed_sum(x, kernel_h, kernel_w, out_channels, strides, padding, dilations,
                  tap_fn):
    """Shared sliding-window loop for conv-like ops.

    For every output pixel, accumulates tap_fn(patch, ky, kx) over all kernel
    taps that land inside the input, where patch is the [batch, in_channels]
    slice of the input under that tap.  Taps that land in the padding are
    skipped, which is the same as padding with zeros, as TFLite does.
    """
    batch, in_h, in_w, _ = x.shape
    stride_h, stride_w = strides
    dilation_h, dilation_w = dilations
    out_h, pad_top = output_size_and_pad_before(in_h, kernel_h, stride_h, dilation_h, padding)
    out_w, pad_left = output_size_and_pad_before(in_w, kernel_w, stride_w, dilation_w, padding)
    if out_h <= 0 or out_w <= 0:
        raise ValueError("kernel is larger than the input for VALID padding")
    result = np.zeros((batch, out_h, out_w, out_channels))
    for oy in range(out_h):
        for ox in range(out_w):
            acc = 0.0
            for ky in range(kernel_h):
                iy = oy * stride_h + ky * dilation_h - pad_top
                if not 0 <= iy < in_h:
                    continue
                for kx in range(kernel_w):
                    ix = ox * stride_w + kx * dilation_w - pad_left
                    if not 0 <= ix < in_w:
                        continue
                    acc = acc + tap_fn(x[:, iy, ix, :], ky, kx)
            result[:, oy, ox, :] = acc
    return result


def conv2d(x, weights, bias=None, strides=(1, 1), padding="SAME", dilations=(1, 1),
           activation="NONE"):
    """CONV_2D: x [N,H,W,Cin], weights [Cout,KH,KW,Cin], bias [Cout]."""
    x = np.asarray(x, np.float64)
    weights = np.asarray(weights, np.float64)
    out_channels, kernel_h, kernel_w, in_channels = weights.shape
    if x.shape[3] != in_channels:
        raise ValueError(f"input has {x.shape[3]} channels, weights expect {in_channels}")

    def tap(patch, ky, kx):
        return patch @ weights[:, ky, kx, :].T

    out = _windowed_sum(x, kernel_h, kernel_w, out_channels, strides, padding, dilations,
                        tap)
    if bias is not None:
        out = out + np.asarray(bias, np.float64)
    return apply_activation(out, activation)


def depthwise_conv2d(x, weights, bias=None, strides=(1, 1), padding="SAME",
                     dilations=(1, 1), depth_multiplier=1, activation="NONE"):
    """DEPTHWISE_CONV_2D: x [N,H,W,C], weights [1,KH,KW,C*M], bias [C*M].

    Output channel c * M + m is input channel c filtered by weights[..., c * M + m].
    """
    x = np.asarray(x, np.float64)
    weights = np.asarray(weights, np.float64)
    _, kernel_h, kernel_w, out_channels = weights.shape
    if out_channels != x.shape[3] * depth_multiplier:
        raise ValueError(f"weights have {out_channels} channels, expected "
                         f"{x.shape[3]} * {depth_multiplier}")

    def tap(patch, ky, kx):
        return np.repeat(patch, depth_multiplier, axis=-1) * weights[0, ky, kx, :]

    out = _windowed_sum(x, kernel_h, kernel_w, out_channels, strides, padding, dilations,
                        tap)
    if bias is not None:
        out = out + np.asarray(bias, np.float64)
    return apply_activation(out, activation)
