#!/usr/bin/env python3
"""An architecture-exact stand-in for MobileNet v1 (alpha 1.0, 224x224, float):
the layers, shapes, padding, strides and fused RELU6 of the TFLite GPU docs'
sample model, with seeded random weights (the trained 16.9 MB file is not
reachable here). Same ops as ../shared/models/mobilenet_v1_0.25_224.tflite:
CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, SQUEEZE, SOFTMAX.

The benchmark uses tools/build_standins.py when it provides this model and
falls back to this builder otherwise.

    python3 bench/mobilenet_v1.py --alpha 1.0 --out /tmp/mobilenet_v1.tflite
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

from tflite_builder import ModelBuilder  # noqa: E402

# (stride, output channels at alpha 1.0) of the 13 depthwise-separable blocks.
BLOCKS = [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512),
          (1, 512), (1, 512), (1, 512), (1, 512), (1, 512), (2, 1024), (1, 1024)]
CLASSES = 1001


def build(alpha: float = 1.0, size: int = 224, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    b = ModelBuilder(f"mobilenet_v1_{alpha}_{size} architecture stand-in")

    def weights(shape, fan_in):
        # He-style scale keeps activations O(1) through 27 RELU6 layers, so
        # the output is not a constant (which would hide wrong results).
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def bias(n):
        return rng.uniform(-0.1, 0.1, n).astype(np.float32)

    def conv(x, shape_in, cout, kernel, stride):
        h = (shape_in[1] + stride - 1) // stride
        w = (shape_in[2] + stride - 1) // stride
        cin = shape_in[3]
        out_shape = [1, h, w, cout]
        y = b.add_tensor(out_shape)
        b.add_op("CONV_2D", [x, b.add_const(weights([cout, kernel, kernel, cin],
                                                    kernel * kernel * cin)),
                             b.add_const(bias(cout))], [y],
                 {"padding": "SAME", "stride_w": stride, "stride_h": stride,
                  "fused_activation_function": "RELU6"})
        return y, out_shape

    def depthwise(x, shape_in, stride):
        c = shape_in[3]
        out_shape = [1, (shape_in[1] + stride - 1) // stride,
                     (shape_in[2] + stride - 1) // stride, c]
        y = b.add_tensor(out_shape)
        b.add_op("DEPTHWISE_CONV_2D", [x, b.add_const(weights([1, 3, 3, c], 9)),
                                       b.add_const(bias(c))], [y],
                 {"padding": "SAME", "stride_w": stride, "stride_h": stride,
                  "depth_multiplier": 1, "fused_activation_function": "RELU6"})
        return y, out_shape

    def channels(n):
        return max(8, int(n * alpha))

    x = b.add_input([1, size, size, 3], name="input")
    t, shape = conv(x, [1, size, size, 3], channels(32), 3, 2)
    for stride, cout in BLOCKS:
        t, shape = depthwise(t, shape, stride)
        t, shape = conv(t, shape, channels(cout), 1, 1)
    pooled = b.add_tensor([1, 1, 1, shape[3]])
    b.add_op("AVERAGE_POOL_2D", [t], [pooled],
             {"padding": "VALID", "stride_w": 2, "stride_h": 2,
              "filter_width": shape[2], "filter_height": shape[1],
              "fused_activation_function": "NONE"})
    logits4 = b.add_tensor([1, 1, 1, CLASSES])
    b.add_op("CONV_2D", [pooled, b.add_const(weights([CLASSES, 1, 1, shape[3]], shape[3])),
                         b.add_const(bias(CLASSES))], [logits4],
             {"padding": "SAME", "stride_w": 1, "stride_h": 1,
              "fused_activation_function": "NONE"})
    logits = b.add_tensor([1, CLASSES])
    b.add_op("SQUEEZE", [logits4], [logits], {"squeeze_dims": [1, 2]})
    probabilities = b.add_tensor([1, CLASSES], name="probabilities")
    b.add_op("SOFTMAX", [logits], [probabilities], {"beta": 1.0})
    b.set_outputs([probabilities])
    return b.build()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alpha", type=float, default=1.0)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    Path(args.out).write_bytes(build(args.alpha, args.size, args.seed))
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
