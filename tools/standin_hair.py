"""A stand-in for MediaPipe's hair segmentation model (not shareable here).

Public facts it follows (MediaPipe model card and graph; Tkachenka et al.,
"Real-time Hair Segmentation and Recoloring on Mobile GPUs", 2019): a
512x512 input of four channels (the RGB frame and the previous frame's mask),
an ENet-style encoder-decoder whose downsampling keeps the argmax of each max
pool (MediaPipe's custom MaxPoolingWithArgmax2D) and whose decoder puts
values back there (MaxUnpooling2D), transposed convolutions as MediaPipe's
custom Convolution2DTransposeBias, PReLU activations, and a two-channel
512x512 output.  The layer widths and counts here are ENet's pattern scaled
to about 90 convolutions (the figure of issue 18), not the model's exact list.

Three variants share one seeded weight stream, so they hold the same weights:
  - "custom":  the MediaPipe custom ops, as the real model has them.  Only a
               GPU delegate runs it: LiteRT's CPU has no kernels for them.
  - "exact":   builtins that compute the same function, for a CPU reference:
               MAX_POOL_2D; unpooling as nearest upsampling times the mask
               x == upsampled(max); TRANSPOSE_CONV with bias.  Equal to
               "custom" wherever a pooling window has a single maximum.
  - "builtin": the benchmark twin every backend runs: MAX_POOL_2D, nearest
               upsampling in place of unpooling, TRANSPOSE_CONV with bias.
"""

from __future__ import annotations

import struct

import numpy as np

VARIANTS = ("custom", "exact", "builtin")


def _pool_options() -> bytes:
    """TfLitePoolParams as MediaPipe stores them in custom options: padding
    (SAME=1), stride w/h, filter w/h, activation, computed padding (4 ints)."""
    return struct.pack("<6i4i", 1, 2, 2, 2, 2, 0, 0, 0, 0, 0)


def _transpose_options() -> bytes:
    """MediaPipe's TfLiteTransposeConvParams: padding (SAME=1), stride w/h."""
    return struct.pack("<3i", 1, 2, 2)


class HairNet:
    """ENet layers on a NetBuilder, in one of VARIANTS."""

    def __init__(self, net, variant: str):
        if variant not in VARIANTS:
            raise ValueError(f"variant {variant!r} not in {VARIANTS}")
        self.net, self.b, self.variant = net, net.b, variant

    def prelu(self, x) -> int:
        c = self.net.shapes[x][3]
        alpha = self.net.rng.uniform(0.05, 0.3, (1, 1, c)).astype(np.float32)
        y = self.net._tensor(self.net.shapes[x])
        self.b.add_op("PRELU", [x, self.b.add_const(alpha)], [y])
        return y

    def conv(self, x, out_channels, kernel=1, stride=1, dilation=1, gain=2.0) -> int:
        n, h, w, c = self.net.shapes[x]
        std = np.sqrt(gain / (kernel * kernel * c))
        weights = self.net.rng.normal(0, std, (out_channels, kernel, kernel, c))
        y = self.net._tensor([n, -(-h // stride), -(-w // stride), out_channels])
        self.b.add_op("CONV_2D", [x, self.b.add_const(weights.astype(np.float32)),
                                  self.net._bias(out_channels)], [y],
                      {"padding": "SAME", "stride_w": stride, "stride_h": stride,
                       "dilation_w_factor": dilation, "dilation_h_factor": dilation,
                       "fused_activation_function": "NONE"})
        return y

    def pool(self, x):
        """2x2/2 max pooling; returns (pooled, token for unpool)."""
        n, h, w, c = self.net.shapes[x]
        pooled = self.net._tensor([n, h // 2, w // 2, c])
        if self.variant == "custom":
            indices = self.net._tensor([n, h // 2, w // 2, c])
            self.b.add_op("CUSTOM", [x], [pooled, indices],
                          custom_code="MaxPoolingWithArgmax2D", custom_options=_pool_options())
            return pooled, indices
        self.b.add_op("MAX_POOL_2D", [x], [pooled],
                      {"padding": "SAME", "stride_w": 2, "stride_h": 2,
                       "filter_width": 2, "filter_height": 2,
                       "fused_activation_function": "NONE"})
        return pooled, (x, pooled)

    def _upsample(self, v) -> int:
        n, h, w, c = self.net.shapes[v]
        y = self.net._tensor([n, 2 * h, 2 * w, c])
        size = self.b.add_const(np.array([2 * h, 2 * w], np.int32))
        self.b.add_op("RESIZE_NEAREST_NEIGHBOR", [v, size], [y],
                      {"align_corners": False, "half_pixel_centers": False})
        return y

    def unpool(self, v, token) -> int:
        n, h, w, c = self.net.shapes[v]
        if self.variant == "custom":
            y = self.net._tensor([n, 2 * h, 2 * w, c])
            self.b.add_op("CUSTOM", [v, token], [y], custom_code="MaxUnpooling2D",
                          custom_options=_pool_options())
            return y
        up = self._upsample(v)
        if self.variant == "builtin":
            return up
        x, pooled = token
        is_max = self.b.add_tensor(self.net.shapes[x], dtype=np.bool_)
        self.b.add_op("EQUAL", [x, self._upsample(pooled)], [is_max])
        mask = self.net._tensor(self.net.shapes[x])
        self.b.add_op("CAST", [is_max], [mask])
        y = self.net._tensor(self.net.shapes[x])
        self.b.add_op("MUL", [up, mask], [y], {"fused_activation_function": "NONE"})
        return y

    def transpose_conv(self, x, out_channels) -> int:
        """3x3 stride-2 SAME transposed convolution with bias (both ops pad 1
        in total, 0 before, for these sizes)."""
        n, h, w, c = self.net.shapes[x]
        rng = self.net.rng
        weights = rng.normal(0, np.sqrt(2.0 / (9 * c / 4)), (out_channels, 3, 3, c))
        bias = rng.uniform(-0.1, 0.1, out_channels)
        y = self.net._tensor([n, 2 * h, 2 * w, out_channels])
        wt = self.b.add_const(weights.astype(np.float32))
        bt = self.b.add_const(bias.astype(np.float32))
        if self.variant == "custom":
            self.b.add_op("CUSTOM", [x, wt, bt], [y], custom_code="Convolution2DTransposeBias",
                          custom_options=_transpose_options())
        else:
            shape = self.b.add_const(np.array([n, 2 * h, 2 * w, out_channels], np.int32))
            self.b.add_op("TRANSPOSE_CONV", [shape, wt, x, bt], [y],
                          {"padding": "SAME", "stride_w": 2, "stride_h": 2}, version=3)
        return y

    # ENet's bottlenecks: a 1x1 projection to a quarter of the width, the
    # main convolution, a 1x1 expansion, added to the shortcut, then PReLU.
    def regular(self, x, dilation=1) -> int:
        c = self.net.shapes[x][3]
        y = self.prelu(self.conv(x, c // 4))
        y = self.prelu(self.conv(y, c // 4, kernel=3, dilation=dilation))
        y = self.conv(y, c, gain=0.2)
        return self.prelu(self.net.add(x, y))

    def down(self, x, out_channels):
        pooled, token = self.pool(x)
        main = self.conv(pooled, out_channels, gain=1.0)
        y = self.prelu(self.conv(x, out_channels // 4, kernel=2, stride=2))
        y = self.prelu(self.conv(y, out_channels // 4, kernel=3))
        y = self.conv(y, out_channels, gain=0.2)
        return self.prelu(self.net.add(main, y)), token

    def up(self, x, out_channels, token) -> int:
        main = self.unpool(self.conv(x, out_channels, gain=1.0), token)
        y = self.prelu(self.conv(x, out_channels // 4))
        y = self.prelu(self.transpose_conv(y, out_channels // 4))
        y = self.conv(y, out_channels, gain=0.2)
        return self.prelu(self.net.add(main, y))


def hair_segmentation(net, variant: str) -> bytes:
    """512x512x4 -> 512x512x2; 87 convolutions (2 of them transposed)."""
    h = HairNet(net, variant)
    x = net.input([1, 512, 512, 4])
    # Initial block: a strided 3x3 convolution beside a max pool of the input,
    # concatenated (12 + 4 = 16 channels at 256x256).
    pooled, _ = h.pool(x)
    x = h.prelu(net.concat([h.conv(x, 12, kernel=3, stride=2), pooled], axis=3))
    x, token1 = h.down(x, 64)                      # 128x128
    for _ in range(4):
        x = h.regular(x)
    x, token2 = h.down(x, 128)                     # 64x64
    for dilation in (1, 2, 1, 4, 1, 8, 1, 2) * 2:  # stages 2 and 3
        x = h.regular(x, dilation)
    x = h.up(x, 64, token2)                        # 128x128
    for _ in range(2):
        x = h.regular(x)
    x = h.up(x, 16, token1)                        # 256x256
    x = h.regular(x)
    x = h.transpose_conv(x, 2)                     # 512x512x2 logits
    net.b.set_outputs([x])
    return net.b.build()
