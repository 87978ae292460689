#!/usr/bin/env python3
"""Builds architecture-exact stand-ins for models we cannot download.

The TFLite GPU docs' MobileNet v1 1.0 224, MobileNet SSD v2 and PoseNet are
not reachable from CI, so this rebuilds them layer for layer (same ops, shapes,
strides, paddings, activations and op mix) with seeded He-style weights.  The
weights are scaled so activations stay O(1) through the whole network: a
stand-in is useful only if fp16 and fp32 runs can be compared meaningfully,
which they cannot be when activations collapse to zero or blow up.

    python3 tools/build_standins.py build/models            # all of them
    python3 tools/build_standins.py build/models mobilenet_v1_1.0_224

Output is deterministic: the same seed gives byte-identical files.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from flatbuffers import flexbuffers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflite_builder import ModelBuilder  # noqa: E402
import standin_hair  # noqa: E402


def same_out(size: int, stride: int) -> int:
    """Output size of a SAME-padded window op."""
    return -(-size // stride)


class NetBuilder:
    """A ModelBuilder that knows the layers of MobileNet-style networks and
    tracks each tensor's NHWC shape, so architectures read like their papers."""

    def __init__(self, description: str, seed: int):
        self.b = ModelBuilder(description)
        self.rng = np.random.default_rng(seed)
        self.shapes: dict[int, list[int]] = {}

    def input(self, shape, name="input") -> int:
        t = self.b.add_input(shape, name=name)
        self.shapes[t] = list(shape)
        return t

    def _tensor(self, shape, name=None) -> int:
        t = self.b.add_tensor(shape, name=name)
        self.shapes[t] = list(shape)
        return t

    def _bias(self, channels: int, offset: float = 0.0) -> int:
        # Small biases, as batch-norm folding leaves them, keep units alive.
        bias = offset + self.rng.uniform(-0.1, 0.1, channels)
        return self.b.add_const(bias.astype(np.float32))

    def conv(self, x, out_channels, kernel=1, stride=1, act="RELU6", gain=2.0,
             padding="SAME", bias_offset=0.0, name=None) -> int:
        n, h, w, c = self.shapes[x]
        # He init: variance gain / fan_in keeps the activation scale through
        # ReLU layers (gain 2); linear layers (projections, heads) use gain 1.
        std = np.sqrt(gain / (kernel * kernel * c))
        weights = self.rng.normal(0, std, (out_channels, kernel, kernel, c)).astype(np.float32)
        if padding == "SAME":
            oh, ow = same_out(h, stride), same_out(w, stride)
        else:
            oh, ow = (h - kernel) // stride + 1, (w - kernel) // stride + 1
        y = self._tensor([n, oh, ow, out_channels], name)
        filters = self.b.add_const(weights)
        bias = self._bias(out_channels, bias_offset)
        self.b.add_op("CONV_2D", [x, filters, bias], [y],
                      {"padding": padding, "stride_w": stride, "stride_h": stride,
                       "fused_activation_function": act})
        return y

    def depthwise(self, x, stride=1, act="RELU6", name=None) -> int:
        n, h, w, c = self.shapes[x]
        weights = self.rng.normal(0, np.sqrt(2.0 / 9), (1, 3, 3, c)).astype(np.float32)
        y = self._tensor([n, same_out(h, stride), same_out(w, stride), c], name)
        self.b.add_op("DEPTHWISE_CONV_2D", [x, self.b.add_const(weights), self._bias(c)], [y],
                      {"padding": "SAME", "stride_w": stride, "stride_h": stride,
                       "depth_multiplier": 1, "fused_activation_function": act})
        return y

    def add(self, x, y) -> int:
        z = self._tensor(self.shapes[x])
        self.b.add_op("ADD", [x, y], [z], {"fused_activation_function": "NONE"})
        return z

    def avg_pool(self, x, size, stride) -> int:
        n, h, w, c = self.shapes[x]
        y = self._tensor([n, (h - size) // stride + 1, (w - size) // stride + 1, c])
        self.b.add_op("AVERAGE_POOL_2D", [x], [y],
                      {"padding": "VALID", "stride_w": stride, "stride_h": stride,
                       "filter_width": size, "filter_height": size,
                       "fused_activation_function": "NONE"})
        return y

    def reshape(self, x, shape, name=None) -> int:
        y = self._tensor(shape, name)
        self.b.add_op("RESHAPE", [x, self.b.add_const(np.array(shape, np.int32))], [y],
                      {"new_shape": list(shape)})
        return y

    def concat(self, xs, axis, name=None) -> int:
        shape = list(self.shapes[xs[0]])
        shape[axis] = sum(self.shapes[x][axis] for x in xs)
        y = self._tensor(shape, name)
        self.b.add_op("CONCATENATION", xs, [y],
                      {"axis": axis, "fused_activation_function": "NONE"})
        return y

    def unary(self, op, x, name=None) -> int:
        y = self._tensor(self.shapes[x], name)
        self.b.add_op(op, [x], [y])
        return y


def mobilenet_v1_blocks(net: NetBuilder, x: int, width: float) -> int:
    """The 13 depthwise/pointwise pairs of MobileNet v1 after conv0."""
    plan = [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512)] + \
        [(1, 512)] * 5 + [(2, 1024), (1, 1024)]
    for stride, channels in plan:
        x = net.depthwise(x, stride)
        x = net.conv(x, int(channels * width))
    return x


def mobilenet_v1_224(seed: int = 1) -> bytes:
    """MobileNet v1 1.0 224 float, as the TFLite GPU docs' sample (31 ops):
    conv 3x3/2, 13 depthwise+pointwise pairs with RELU6, average pool 7x7,
    1x1 conv to 1001 logits, reshape, softmax."""
    net = NetBuilder("stand-in: MobileNet v1 1.0 224 (seeded weights)", seed)
    x = net.input([1, 224, 224, 3])
    x = net.conv(x, 32, kernel=3, stride=2)
    x = mobilenet_v1_blocks(net, x, 1.0)                 # 7x7x1024
    x = net.avg_pool(x, 7, 2)                            # 1x1x1024
    # Gain 64: logits spread like a trained classifier's (std ~3), so the
    # softmax is not flat and top-5 is a meaningful comparison.
    x = net.conv(x, 1001, act="NONE", gain=64.0)
    x = net.reshape(x, [1, 1001])
    y = net._tensor([1, 1001], "MobilenetV1/Predictions/Reshape_1")
    net.b.add_op("SOFTMAX", [x], [y], {"beta": 1.0})
    return net.b.build()


def posenet_mobilenet_v1_075(seed: int = 2) -> bytes:
    """PoseNet on MobileNet v1 0.75 at 257x257, output stride 32: the
    backbone, then four 1x1 heads on the 9x9 grid: 17 keypoint heatmaps
    (logits), 34 offsets, 32 forward and 32 backward displacements."""
    net = NetBuilder("stand-in: PoseNet MobileNet v1 0.75 257x257 (seeded weights)", seed)
    x = net.input([1, 257, 257, 3], name="sub_2")
    x = net.conv(x, 24, kernel=3, stride=2)
    x = mobilenet_v1_blocks(net, x, 0.75)                # 9x9x768
    heads = [("heatmap", 17), ("offset_2", 34), ("displacement_fwd_2", 32),
             ("displacement_bwd_2", 32)]
    outputs = [net.conv(x, channels, act="NONE", gain=1.0, name=name)
               for name, channels in heads]
    net.b.set_outputs(outputs)
    return net.b.build()


# MobileNet v2 inverted residual settings: expansion t, channels c, repeats n, stride s.
MOBILENET_V2_PLAN = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                     (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
SSD_NUM_CLASSES = 90           # COCO labels; the heads add one background class
SSD_MAX_DETECTIONS = 10


def mobilenet_v2_backbone(net: NetBuilder, x: int) -> tuple[int, int]:
    """MobileNet v2 1.0 up to its 1x1 conv to 1280. Returns the two tensors SSD
    taps: layer 15's expansion output (19x19x576 at 300x300) and the last."""
    x = net.conv(x, 32, kernel=3, stride=2)
    layer, tap = 2, None
    for expansion, channels, repeats, first_stride in MOBILENET_V2_PLAN:
        for i in range(repeats):
            stride = first_stride if i == 0 else 1
            block_in = x
            if expansion != 1:
                x = net.conv(x, net.shapes[x][3] * expansion)
                if layer == 15:
                    tap = x
            x = net.depthwise(x, stride)
            x = net.conv(x, channels, act="NONE", gain=1.0)   # linear bottleneck
            if stride == 1 and net.shapes[block_in][3] == channels:
                x = net.add(x, block_in)
            layer += 1
    return tap, net.conv(x, 1280)


def ssd_anchors(grid_sizes, anchors_per_cell) -> np.ndarray:
    """SSD anchor boxes [ycenter, xcenter, h, w], in the order the heads emit
    them (feature map, row, column, anchor). Scales 0.2..0.95 over the maps,
    aspect ratios 1, 2, 1/2, 3, 1/3 plus one between-scales box; the first
    map has 3 smaller boxes, as in the COCO MobileNet SSD configs."""
    scales = np.linspace(0.2, 0.95, len(grid_sizes)).tolist() + [1.0]
    boxes = []
    for k, (size, count) in enumerate(zip(grid_sizes, anchors_per_cell)):
        if count == 3:
            shapes = [(0.1, 1.0), (scales[k], 2.0), (scales[k], 0.5)]
        else:
            shapes = [(scales[k], r) for r in (1.0, 2.0, 0.5, 3.0, 1 / 3)]
            shapes.append((np.sqrt(scales[k] * scales[k + 1]), 1.0))
        for row in range(size):
            for col in range(size):
                for scale, ratio in shapes:
                    boxes.append([(row + 0.5) / size, (col + 0.5) / size,
                                  scale / np.sqrt(ratio), scale * np.sqrt(ratio)])
    return np.array(boxes, np.float32)


def postprocess_options() -> bytes:
    """TFLite_Detection_PostProcess's flexbuffer options, as the object
    detection API's TFLite export writes them for COCO SSD."""
    return bytes(flexbuffers.Dumps({
        "max_detections": SSD_MAX_DETECTIONS, "max_classes_per_detection": 1,
        "detections_per_class": 100, "use_regular_nms": False,
        "nms_score_threshold": 1e-8, "nms_iou_threshold": 0.6,
        "num_classes": SSD_NUM_CLASSES, "y_scale": 10.0, "x_scale": 10.0,
        "h_scale": 5.0, "w_scale": 5.0}))


def mobilenet_ssd_v2(seed: int = 3) -> bytes:
    """MobileNet SSD v2 (COCO) at 300x300: MobileNet v2 backbone, four extra
    feature layers (1x1 then 3x3/2 convs), 1x1 box and class predictors on
    six maps (1917 anchors), reshape+concat, sigmoid scores, and the
    TFLite_Detection_PostProcess custom op, which stays on the CPU."""
    net = NetBuilder("stand-in: MobileNet SSD v2 300x300 COCO (seeded weights)", seed)
    x = net.input([1, 300, 300, 3], name="normalized_input_image_tensor")
    tap15, x = mobilenet_v2_backbone(net, x)
    features = [tap15, x]
    for squeeze, channels in [(256, 512), (128, 256), (128, 256), (64, 128)]:
        x = net.conv(x, squeeze)
        x = net.conv(x, channels, kernel=3, stride=2)
        features.append(x)
    grid_sizes = [net.shapes[f][1] for f in features]            # 19 10 5 3 2 1
    anchors_per_cell = [3] + [6] * (len(features) - 1)
    boxes, scores = [], []
    for feature, count in zip(features, anchors_per_cell):
        _, h, w, _ = net.shapes[feature]
        box = net.conv(feature, count * 4, act="NONE", gain=1.0)
        boxes.append(net.reshape(box, [1, h * w * count, 4]))
        # Logits of std ~1.5 around -2, like a trained head's background
        # prior: most scores low, the best near 0.9, few saturated at 1.
        cls = net.conv(feature, count * (SSD_NUM_CLASSES + 1), act="NONE", gain=0.5,
                       bias_offset=-2.0)
        scores.append(net.reshape(cls, [1, h * w * count, SSD_NUM_CLASSES + 1]))
    box_encodings = net.concat(boxes, axis=1, name="raw_outputs/box_encodings")
    logits = net.concat(scores, axis=1)
    class_scores = net.unary("LOGISTIC", logits, name="raw_outputs/class_predictions")
    anchors = net.b.add_const(ssd_anchors(grid_sizes, anchors_per_cell), name="anchors")
    outputs = [net._tensor(shape, name) for shape, name in [
        ([1, SSD_MAX_DETECTIONS, 4], "TFLite_Detection_PostProcess"),
        ([1, SSD_MAX_DETECTIONS], "TFLite_Detection_PostProcess:1"),
        ([1, SSD_MAX_DETECTIONS], "TFLite_Detection_PostProcess:2"),
        ([1], "TFLite_Detection_PostProcess:3")]]
    net.b.add_op("CUSTOM", [box_encodings, class_scores, anchors], outputs,
                 custom_code="TFLite_Detection_PostProcess",
                 custom_options=postprocess_options())
    net.b.set_outputs(outputs)
    return net.b.build()


def hair_segmentation(variant: str, seed: int = 4) -> bytes:
    """MediaPipe's hair segmentation, 512x512x4 -> 512x512x2 (standin_hair.py)."""
    net = NetBuilder(f"hair segmentation 512 stand-in ({variant})", seed)
    return standin_hair.hair_segmentation(net, variant)


STANDINS = {
    "mobilenet_v1_1.0_224": mobilenet_v1_224,
    "mobilenet_ssd_v2_300": mobilenet_ssd_v2,
    "posenet_mobilenet_v1_075_257": posenet_mobilenet_v1_075,
    # The real ops (MediaPipe custom ops: GPU delegates only) and the builtin
    # twin that every backend runs, for the benchmark's CPU and LiteRT GPU peers.
    "hair_segmentation_512": lambda: hair_segmentation("custom"),
    "hair_segmentation_512_builtin": lambda: hair_segmentation("builtin"),
    # Not benchmarked: the CPU reference of the custom-op model (the same
    # function in builtins, slower: see standin_hair.py).
    "hair_segmentation_512_exact": lambda: hair_segmentation("exact"),
}

# Stand-ins LiteRT's CPU cannot run -> the stand-in whose CPU output is theirs.
CPU_REFERENCES = {"hair_segmentation_512": "hair_segmentation_512_exact"}


def build(folder, names=None) -> dict[str, Path]:
    """Writes the named stand-ins (all by default) as folder/NAME.tflite,
    skipping files already there; returns name -> path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name in names or STANDINS:
        if name not in STANDINS:
            raise ValueError(f"unknown stand-in {name!r}; known: {', '.join(STANDINS)}")
        path = folder / f"{name}.tflite"
        if not path.exists():
            # Write then rename, so a concurrent reader never sees half a file.
            partial = path.with_suffix(".tflite.partial")
            partial.write_bytes(STANDINS[name]())
            partial.replace(path)
        paths[name] = path
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="where to write NAME.tflite")
    parser.add_argument("names", nargs="*", help=f"stand-ins (default: all of {list(STANDINS)})")
    parser.add_argument("--force", action="store_true", help="rebuild existing files")
    args = parser.parse_args()
    if args.force:
        for name in args.names or STANDINS:
            (Path(args.folder) / f"{name}.tflite").unlink(missing_ok=True)
    for name, path in build(args.folder, args.names).items():
        print(f"{path}  ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
