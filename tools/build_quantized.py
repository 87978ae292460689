#!/usr/bin/env python3
"""Builds quantized models the way TFLite's converter lays them out, with
seeded weights, for the quantized-model tests (issue 15).

int8_mobilenet: a small MobileNet-like full-integer model. Float input ->
    QUANTIZE -> int8 CONV_2D / DEPTHWISE_CONV_2D (per-channel int8 weights,
    int32 biases, fused RELU6), inverted residual blocks with ADD,
    AVERAGE_POOL_2D, MEAN, FULLY_CONNECTED, SOFTMAX -> DEQUANTIZE -> float
    probabilities. Activation parameters are calibrated: the float twin (the
    same seeded weights, float32) runs on the sample photographs and the
    ranges it sees become each tensor's scale and zero point, as post-training
    quantization does; so the parameters are realistic, not made up.
dynamic_range: int8 weight constants with per-channel (or per-tensor)
    scales and float activations, as TFLite's dynamic-range converter emits
    (hybrid CONV_2D v5, DEPTHWISE_CONV_2D v6, FULLY_CONNECTED v3 and v12).

    python3 tools/build_quantized.py build/models     # writes both, then checks them

From Python: build_int8_mobilenet(path), build_dynamic_range_model(path)
(each writes the file and returns the path); int8_mobilenet_float_twin()
gives the float model the int8 one approximates. Output is deterministic.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflite_builder import ModelBuilder, QuantParams, run_tflite  # noqa: E402

INPUT_SHAPE = [1, 64, 64, 3]
CLASSES = 10
# Calibration and validation inputs: the sample photographs in [-1, 1].
PHOTOS = ("astronaut", "chelsea", "coffee", "motorcycle_left")


def same_out(size: int, stride: int) -> int:
    return -(-size // stride)


class QuantNet:
    """A network recorded once and emitted twice: as a float32 model and as
    its int8 full-integer counterpart (given each tensor's calibrated range).

    ops are dicts: op, inputs (tensor names), output, options, and for
    weighted layers float weights, bias and the weights' per-channel axis.
    """

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.shapes: dict[str, list[int]] = {}
        self.ops: list[dict] = []
        self.input_name = "input"

    def _new(self, shape, prefix) -> str:
        name = f"{prefix}_{len(self.shapes)}"
        self.shapes[name] = list(shape)
        return name

    def input(self, shape) -> str:
        self.shapes[self.input_name] = list(shape)
        return self.input_name

    def conv(self, x, out_channels, kernel=1, stride=1, act="RELU6", gain=2.0) -> str:
        n, h, w, c = self.shapes[x]
        std = np.sqrt(gain / (kernel * kernel * c))
        weights = self.rng.normal(0, std, (out_channels, kernel, kernel, c)).astype(np.float32)
        y = self._new([n, same_out(h, stride), same_out(w, stride), out_channels], "conv")
        self.ops.append(dict(op="CONV_2D", inputs=[x], output=y, weights=weights, axis=0,
                             bias=self.rng.uniform(-0.1, 0.1, out_channels).astype(np.float32),
                             options={"padding": "SAME", "stride_w": stride,
                                      "stride_h": stride, "fused_activation_function": act},
                             int8_version=3))
        return y

    def depthwise(self, x, stride=1, act="RELU6") -> str:
        n, h, w, c = self.shapes[x]
        weights = self.rng.normal(0, np.sqrt(2.0 / 9), (1, 3, 3, c)).astype(np.float32)
        y = self._new([n, same_out(h, stride), same_out(w, stride), c], "dw")
        self.ops.append(dict(op="DEPTHWISE_CONV_2D", inputs=[x], output=y, weights=weights,
                             axis=3, bias=self.rng.uniform(-0.1, 0.1, c).astype(np.float32),
                             options={"padding": "SAME", "stride_w": stride,
                                      "stride_h": stride, "depth_multiplier": 1,
                                      "fused_activation_function": act},
                             int8_version=3))
        return y

    def add(self, a, b) -> str:
        y = self._new(self.shapes[a], "add")
        self.ops.append(dict(op="ADD", inputs=[a, b], output=y,
                             options={"fused_activation_function": "NONE"}, int8_version=2))
        return y

    def avg_pool(self, x, size, stride) -> str:
        n, h, w, c = self.shapes[x]
        y = self._new([n, (h - size) // stride + 1, (w - size) // stride + 1, c], "pool")
        self.ops.append(dict(op="AVERAGE_POOL_2D", inputs=[x], output=y, same_params=True,
                             options={"padding": "VALID", "stride_w": stride,
                                      "stride_h": stride, "filter_width": size,
                                      "filter_height": size,
                                      "fused_activation_function": "NONE"},
                             int8_version=2))
        return y

    def mean(self, x) -> str:
        n, _, _, c = self.shapes[x]
        y = self._new([n, c], "mean")
        self.ops.append(dict(op="MEAN", inputs=[x], output=y, axes=np.array([1, 2], np.int32),
                             options={"keep_dims": False}, int8_version=2))
        return y

    def fully_connected(self, x, units, features=None, spread=3.0) -> str:
        """A classifier layer. Given `features` (rows: x's values on some
        inputs), the seeded random weights are centred and scaled so that the
        logits of those inputs spread by `spread` (std) around 0: an untrained
        network's pooled features differ little between images, and a
        classifier on them would give every image the same class."""
        n, c = self.shapes[x]
        weights = self.rng.normal(0, np.sqrt(1.0 / c), (units, c))
        bias = self.rng.uniform(-0.1, 0.1, units)
        if features is not None:
            centred = features - features.mean(axis=0)
            weights *= spread / max(float((centred @ weights.T).std()), 1e-6)
            bias = bias - weights @ features.mean(axis=0)
        y = self._new([n, units], "fc")
        self.ops.append(dict(op="FULLY_CONNECTED", inputs=[x], output=y,
                             weights=weights.astype(np.float32), axis=0,
                             bias=bias.astype(np.float32),
                             options={"fused_activation_function": "NONE"}, int8_version=4))
        return y

    def softmax(self, x) -> str:
        y = self._new(self.shapes[x], "softmax")
        # TFLite's integer softmax writes scale 1/256, zero point -128.
        self.ops.append(dict(op="SOFTMAX", inputs=[x], output=y, options={"beta": 1.0},
                             fixed_params=QuantParams(1.0 / 256, -128), int8_version=2))
        return y

    # ------------------------------------------------------------ emitting

    def float_model(self, every_tensor_an_output: bool = False) -> bytes:
        """The float32 twin; with every_tensor_an_output, every activation is
        a graph output too (for calibration), named as in self.shapes."""
        b = ModelBuilder("float twin of the int8 MobileNet-like model (seeded weights)")
        index = {self.input_name: b.add_input(self.shapes[self.input_name],
                                              name=self.input_name)}
        for op in self.ops:
            inputs = [index[name] for name in op["inputs"]]
            if "weights" in op:
                inputs += [b.add_const(op["weights"]), b.add_const(op["bias"])]
            if "axes" in op:
                inputs.append(b.add_const(op["axes"]))
            index[op["output"]] = b.add_tensor(self.shapes[op["output"]], name=op["output"])
            b.add_op(op["op"], inputs, [index[op["output"]]], op["options"])
        last = index[self.ops[-1]["output"]]
        if every_tensor_an_output:
            b.set_outputs([index[name] for name in self.shapes])
        else:
            b.set_outputs([last])
        return b.build()

    def activations(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """name -> value of every tensor of the float twin (as built so far) on x."""
        outputs = run_tflite(self.float_model(every_tensor_an_output=True), [x])
        return dict(zip(self.shapes, outputs))

    def calibrate(self, inputs) -> dict[str, tuple[float, float]]:
        """name -> (min, max) of each activation over the float twin's runs."""
        model = self.float_model(every_tensor_an_output=True)
        ranges: dict[str, tuple[float, float]] = {}
        for x in inputs:
            for name, value in zip(self.shapes, run_tflite(model, [x])):
                low, high = ranges.get(name, (np.inf, -np.inf))
                ranges[name] = (min(low, float(value.min())), max(high, float(value.max())))
        return ranges

    def int8_model(self, ranges) -> bytes:
        """The full-integer model: float input, QUANTIZE, int8 ops with the
        calibrated parameters, DEQUANTIZE to a float output."""
        b = ModelBuilder("int8 MobileNet-like model, calibrated on photographs (seeded weights)")
        params = {name: activation_params(*ranges[name]) for name in self.shapes}
        for op in self.ops:  # ops that TFLite's kernels require to keep or fix parameters
            if op.get("same_params"):
                params[op["output"]] = params[op["inputs"][0]]
            if "fixed_params" in op:
                params[op["output"]] = op["fixed_params"]
        x = b.add_input(self.shapes[self.input_name], name=self.input_name)
        index = {self.input_name: b.add_tensor(self.shapes[self.input_name], np.int8,
                                               name="input_int8",
                                               quant=params[self.input_name])}
        b.add_op("QUANTIZE", [x], [index[self.input_name]])
        for op in self.ops:
            inputs = [index[name] for name in op["inputs"]]
            if "weights" in op:
                in_quant = params[op["inputs"][0]]
                w_quant = per_channel_params(op["weights"], op["axis"])
                bias_quant = QuantParams(
                    (np.asarray(w_quant.scale, np.float64) * in_quant.scale)
                    .astype(np.float32).tolist(), 0)
                inputs += [b.add_const(w_quant.quantize(op["weights"], np.int8), quant=w_quant),
                           b.add_const(bias_quant.quantize(op["bias"], np.int32),
                                       quant=bias_quant)]
            if "axes" in op:
                inputs.append(b.add_const(op["axes"]))
            out = op["output"]
            index[out] = b.add_tensor(self.shapes[out], np.int8, name=out, quant=params[out])
            b.add_op(op["op"], inputs, [index[out]], op["options"], version=op["int8_version"])
        last = self.ops[-1]["output"]
        y = b.add_tensor(self.shapes[last], name="probabilities")
        b.add_op("DEQUANTIZE", [index[last]], [y], version=2)
        b.set_outputs([y])
        return b.build()


def activation_params(low: float, high: float) -> QuantParams:
    """Asymmetric int8 parameters covering [low, high] (and 0, which must be
    exact: padding and ReLU produce it)."""
    low, high = min(low, 0.0), max(high, 0.0)
    scale = max((high - low) / 255.0, 1e-8)
    zero_point = int(np.clip(np.round(-128 - low / scale), -128, 127))
    return QuantParams(float(np.float32(scale)), zero_point)


def per_channel_params(weights: np.ndarray, axis: int) -> QuantParams:
    """Symmetric per-channel int8 weights (zero point 0, +-127), as the
    converter quantizes them."""
    moved = np.moveaxis(weights, axis, 0).reshape(weights.shape[axis], -1)
    scales = np.maximum(np.abs(moved).max(axis=1), 1e-8) / 127.0
    return QuantParams(scales.astype(np.float32).tolist(), 0, quantized_dimension=axis)


def mobilenet_like(seed: int = 15) -> QuantNet:
    """64x64x3 -> 10 classes: conv 3x3/2, a depthwise-separable block, two
    inverted residual blocks (the second with its skip ADD), a 1x1
    expansion, average pool 2x2/2, global MEAN, FULLY_CONNECTED, SOFTMAX."""
    net = QuantNet(seed)
    x = net.input(INPUT_SHAPE)
    x = net.conv(x, 16, kernel=3, stride=2)              # 32x32x16
    x = net.depthwise(x)
    x = net.conv(x, 8, act="NONE", gain=1.0)             # 32x32x8
    x = net.conv(x, 24)
    x = net.depthwise(x, stride=2)                       # 16x16x24
    x = net.conv(x, 12, act="NONE", gain=1.0)
    skip = x
    x = net.conv(x, 36)
    x = net.depthwise(x)
    x = net.conv(x, 12, act="NONE", gain=1.0)
    x = net.add(x, skip)                                 # 16x16x12
    x = net.conv(x, 40)
    x = net.avg_pool(x, 2, 2)                            # 8x8x40
    x = net.mean(x)                                      # 1x40
    features = np.concatenate([net.activations(image)[x] for image in photo_inputs()])
    x = net.fully_connected(x, CLASSES, features)
    net.softmax(x)
    return net


def photo_inputs() -> list[np.ndarray]:
    """The sample photographs in [-1, 1], and each mirrored (8 inputs)."""
    from sample_images import model_input
    photos = [model_input(name, INPUT_SHAPE) for name in PHOTOS]
    return photos + [np.ascontiguousarray(p[:, :, ::-1]) for p in photos]


def int8_mobilenet_float_twin() -> bytes:
    return mobilenet_like().float_model()


def build_int8_mobilenet(path) -> Path:
    """Writes the calibrated int8 MobileNet-like model to path."""
    net = mobilenet_like()
    model = net.int8_model(net.calibrate(photo_inputs()))
    return _write(path, model)


def dynamic_range_model(seed: int = 16) -> tuple[bytes, bytes]:
    """(hybrid model, its float twin): float input [1, 12, 12, 8] ->
    CONV_2D 3x3 (int8 per-channel filter, v5) -> DEPTHWISE_CONV_2D (int8
    per-channel, v6) -> RESHAPE -> FULLY_CONNECTED 64 (int8 per-tensor, v3)
    -> FULLY_CONNECTED 10 (int8 per-channel, asymmetric input quantization,
    v12). Biases stay float, as the converter leaves them."""
    rng = np.random.default_rng(seed)
    layers = [
        ("CONV_2D", rng.normal(0, np.sqrt(2 / 72), (12, 3, 3, 8)), 0, True, 5,
         {"padding": "SAME", "stride_w": 1, "stride_h": 1,
          "fused_activation_function": "RELU"}),
        ("DEPTHWISE_CONV_2D", rng.normal(0, np.sqrt(2 / 9), (1, 3, 3, 12)), 3, True, 6,
         {"padding": "SAME", "stride_w": 2, "stride_h": 2, "depth_multiplier": 1,
          "fused_activation_function": "RELU6"}),
        ("FULLY_CONNECTED", rng.normal(0, np.sqrt(2 / 432), (64, 432)), 0, False, 3,
         {"fused_activation_function": "RELU"}),
        ("FULLY_CONNECTED", rng.normal(0, np.sqrt(4 / 64), (10, 64)), 0, True, 12,
         {"fused_activation_function": "NONE", "asymmetric_quantize_inputs": True}),
    ]
    shapes = [[1, 12, 12, 12], [1, 6, 6, 12], [1, 64], [1, 10]]
    biases = [rng.uniform(-0.1, 0.1, shape[-1]).astype(np.float32) for shape in shapes]
    models = []
    for hybrid in (True, False):
        b = ModelBuilder("dynamic-range quantized model (seeded weights)" if hybrid
                         else "float twin of the dynamic-range model")
        x = b.add_input([1, 12, 12, 8], name="input")
        for (op, weights, axis, per_channel, version, options), shape, bias in zip(
                layers, shapes, biases):
            weights = weights.astype(np.float32)
            quant = per_channel_params(weights, axis) if per_channel else \
                QuantParams(float(np.float32(np.abs(weights).max() / 127.0)), 0)
            q = quant.quantize(weights, np.int8)
            w = b.add_const(q, quant=quant) if hybrid else b.add_const(quant.dequantize(q))
            bias = b.add_const(bias)
            if shape == [1, 64]:  # the first FULLY_CONNECTED reads the flattened map
                flat = b.add_tensor([1, 432])
                b.add_op("RESHAPE", [x, b.add_const(np.array([1, 432], np.int32))], [flat])
                x = flat
            y = b.add_tensor(shape, name=f"{op.lower()}_{len(b._tensors)}")
            b.add_op(op, [x, w, bias], [y], options, version=version if hybrid else 1)
            x = y
        b.set_outputs([x])
        models.append(b.build())
    return models[0], models[1]


def build_dynamic_range_model(path) -> Path:
    """Writes the dynamic-range (hybrid) model to path."""
    return _write(path, dynamic_range_model()[0])


def _write(path, model: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tflite.partial")
    partial.write_bytes(model)
    partial.replace(path)
    return path


def check_int8_mobilenet(path) -> dict:
    """Runs the int8 model and its float twin on the photographs: top-1
    agreement and the largest probability difference."""
    twin = int8_mobilenet_float_twin()
    model = Path(path).read_bytes()
    agree, worst = 0, 0.0
    inputs = photo_inputs()
    for x in inputs:
        q = run_tflite(model, [x])[0]
        f = run_tflite(twin, [x])[0]
        agree += int(np.argmax(q) == np.argmax(f))
        worst = max(worst, float(np.abs(q - f).max()))
    return {"images": len(inputs), "top1_agree": agree, "max_probability_diff": worst}


def check_dynamic_range_model(path) -> dict:
    """Relative L2 error of the hybrid model against its float twin."""
    model = Path(path).read_bytes()
    twin = dynamic_range_model()[1]
    rng = np.random.default_rng(1)
    errors = []
    for _ in range(4):
        x = rng.uniform(-1, 1, [1, 12, 12, 8]).astype(np.float32)
        q, f = run_tflite(model, [x])[0], run_tflite(twin, [x])[0]
        errors.append(float(np.linalg.norm(q - f) / np.linalg.norm(f)))
    return {"max_relative_error": max(errors)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default="build/models")
    args = parser.parse_args()
    folder = Path(args.folder)
    int8 = build_int8_mobilenet(folder / "int8_mobilenet.tflite")
    print(int8, check_int8_mobilenet(int8))
    hybrid = build_dynamic_range_model(folder / "dynamic_range.tflite")
    print(hybrid, check_dynamic_range_model(hybrid))
    return 0


if __name__ == "__main__":
    sys.exit(main())
