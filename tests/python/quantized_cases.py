"""Single-op quantized models (uint8 and int8) for every op that TFLite has
integer kernels for, each with its float twin, for test_quantized_ops.py.

A case is a QuantSpec: the op, its version as TFLite's converter would write
it (tensorflow/lite/tools/versioning/op_version.cc), graph inputs with their
quantization parameters, constants given as real values plus the parameters
and storage type to quantize them to, and the output parameters. From one
spec come two models:

  quantized  the op on uint8/int8 tensors, run by TFLite's integer kernels on
             the CPU (the reference) and by the delegate;
  float twin the same op on float32 tensors holding the dequantized values,
             run by TFLite's float kernels. Quantizing its output with the
             output parameters tells whether the parameters fit the integer
             kernel's assumptions (e.g. MAX_POOL_2D does not rescale, so its
             output parameters must be the input's): a reference that is far
             from the twin would be a reference for the wrong model.

Parameters are deliberately awkward: scales that are not powers of two, zero
points far from 0 and 128 (uint8 37 / 201, int8 -91 / 77), per-channel int8
weights (zero point 0, as TFLite requires) and int32 biases of scale
input_scale * weight_scale. Where the output range is free, its scale is
calibrated from the float twin's output range for the given zero point, so
that few outputs saturate but some do.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from tflite_builder import QuantParams, run_tflite, single_op_model

UINT8_ZERO_POINTS = (37, 201)
INT8_ZERO_POINTS = (-91, 77)
# Not powers of two, and not simple fractions of each other.
SCALES = (0.0137, 0.0291, 0.00617, 0.0419)
SHAPE = [1, 9, 11, 13]  # channels not a multiple of 4


@dataclasses.dataclass
class Operand:
    """A graph input (quantized or float) or a constant.

    A constant holds real values and is stored as `dtype`, quantized with
    `quant` when given (its float twin holds the dequantized values); a
    constant without quant (a shape, paddings) is the same in both models.
    """
    shape: list
    quant: QuantParams | None = None
    const: np.ndarray | None = None
    dtype: type | None = None  # storage type; default: the case's type for inputs


@dataclasses.dataclass
class QuantSpec:
    name: str
    op: str
    dtype: type  # np.uint8 or np.int8: the activation type
    operands: list
    output_quant: QuantParams | None  # None: a float output (DEQUANTIZE)
    options: dict | None = None
    version: int = 1
    float_version: int = 1
    output_dtype: type | None = None
    # Float range of the graph inputs of a QUANTIZE (its input is float).
    float_input_range: tuple = (-3.0, 3.0)
    # QUANTIZE: every other float input half-way between two grid points
    # (as photographs scaled to [-1, 1] with scale 2/255 are), where the
    # rounding of x / scale decides.
    half_way_inputs: bool = False

    def activation_dtypes(self) -> list:
        return [o.dtype or self.dtype for o in self.operands if o.const is None]

    def quantized_model(self) -> bytes:
        consts, const_quant = {}, {}
        for position, o in enumerate(self.operands):
            if o.const is None:
                continue
            consts[position] = (o.quant.quantize(o.const, o.dtype) if o.quant is not None
                                else np.asarray(o.const, o.dtype))
            if o.quant is not None:
                const_quant[position] = o.quant
        inputs = [o for o in self.operands if o.const is None]
        return single_op_model(
            self.op, [o.shape for o in inputs], self.options, consts,
            input_dtypes=self.activation_dtypes(),
            output_dtypes=self.output_dtype or self.dtype, version=self.version,
            input_quant=[o.quant for o in inputs], output_quant=self.output_quant,
            const_quant=const_quant)

    def float_model(self) -> bytes:
        consts = {}
        for position, o in enumerate(self.operands):
            if o.const is None:
                continue
            consts[position] = (self.dequantized_const(o) if o.quant is not None
                                else np.asarray(o.const, o.dtype))
        inputs = [o for o in self.operands if o.const is None]
        return single_op_model(self.op, [o.shape for o in inputs], self.options, consts,
                               version=self.float_version)

    def twin_output(self, inputs: list) -> np.ndarray:
        """The float twin's output for quantized `inputs` (QUANTIZE and
        DEQUANTIZE have no float form: their twin is the identity on the
        real values)."""
        real = self.float_inputs(inputs)
        if self.op in ("QUANTIZE", "DEQUANTIZE"):
            return real[0]
        return run_tflite(self.float_model(), real)[0]

    def twin_reference(self, inputs: list) -> np.ndarray:
        """The float twin's output quantized with the output parameters."""
        out = self.twin_output(inputs)
        if self.output_quant is None:
            return out
        return self.output_quant.quantize(out, self.output_dtype or self.dtype)

    @staticmethod
    def dequantized_const(o: Operand) -> np.ndarray:
        return o.quant.dequantize(o.quant.quantize(o.const, o.dtype))

    def random_inputs(self, seed: int) -> list:
        """Quantized inputs over the whole range of their type (QUANTIZE:
        floats over float_input_range)."""
        rng = np.random.default_rng(seed)
        arrays = []
        for o, dtype in zip([o for o in self.operands if o.const is None],
                            self.activation_dtypes()):
            if np.dtype(dtype).kind == "f":
                x = rng.uniform(*self.float_input_range, o.shape).astype(dtype)
                if self.half_way_inputs:
                    q, info = self.output_quant, np.iinfo(self.output_dtype or self.dtype)
                    steps = rng.integers(info.min, info.max, o.shape) - q.zero_point + 0.5
                    flat = x.reshape(-1)
                    flat[::2] = (steps * q.scale).astype(dtype).reshape(-1)[::2]
                arrays.append(x)
            else:
                info = np.iinfo(dtype)
                arrays.append(rng.integers(info.min, info.max + 1, o.shape).astype(dtype))
        return arrays

    def float_inputs(self, inputs: list) -> list:
        graph_inputs = [o for o in self.operands if o.const is None]
        return [o.quant.dequantize(x) if o.quant is not None else x
                for o, x in zip(graph_inputs, inputs)]


def step_counts(gpu: np.ndarray, cpu: np.ndarray, step: float | None) -> dict:
    """How many elements differ by 0, 1, 2 and more than 2 quantization steps.

    Integer outputs differ by whole steps; a float output (DEQUANTIZE)
    differs by |gpu - cpu| / step, rounded to the nearest step."""
    if step is None:
        diff = np.abs(gpu.astype(np.int64) - cpu.astype(np.int64))
    else:
        with np.errstate(invalid="ignore"):
            diff = np.rint(np.abs(gpu.astype(np.float64) - cpu.astype(np.float64)) / step)
        diff[~np.isfinite(diff)] = 1 << 20
    return {"0": int(np.sum(diff == 0)), "1": int(np.sum(diff == 1)),
            "2": int(np.sum(diff == 2)), "more": int(np.sum(diff > 2)),
            "max": int(diff.max()) if diff.size else 0, "total": int(diff.size)}


def output_step(spec: QuantSpec) -> float | None:
    """The step of a float output (DEQUANTIZE: its input's scale)."""
    if spec.output_quant is not None:
        return None
    return float(np.atleast_1d(spec.operands[0].quant.scale)[0])


# ---------------------------------------------------------------- parameters

def zero_points(dtype) -> tuple:
    return UINT8_ZERO_POINTS if np.dtype(dtype) == np.uint8 else INT8_ZERO_POINTS


def qp(dtype, which: int, scale_index: int | None = None) -> QuantParams:
    """Awkward per-tensor parameters: zero point `which` of the type's pair."""
    scale = SCALES[which if scale_index is None else scale_index]
    return QuantParams(scale, zero_points(dtype)[which])


def calibrated(dtype, zero_point: int, real: np.ndarray, headroom: float = 0.95) -> QuantParams:
    """Parameters for values like `real` with the given zero point: the scale
    that just covers the larger side, times `headroom` (< 1: a few percent
    of the outputs saturate, so that clamping is tested too)."""
    info = np.iinfo(dtype)
    low, high = float(np.min(real)), float(np.max(real))
    scale = max(-low / (zero_point - info.min) if low < 0 else 0.0,
                high / (info.max - zero_point) if high > 0 else 0.0, 1e-6) * headroom
    return QuantParams(float(np.float32(scale)), zero_point)


def symmetric_per_channel(weights: np.ndarray, axis: int) -> QuantParams:
    """int8 per-channel weight parameters (zero point 0, range +-127)."""
    moved = np.moveaxis(weights, axis, 0).reshape(weights.shape[axis], -1)
    scales = np.maximum(np.abs(moved).max(axis=1), 1e-6) / 127.0
    return QuantParams(scales.astype(np.float32).tolist(), 0, quantized_dimension=axis)


def weight_params(dtype, weights: np.ndarray, axis: int) -> QuantParams:
    """int8: per-channel symmetric; uint8: one asymmetric scale (TFLite's
    uint8 kernels take per-tensor weights only), zero point 151."""
    if np.dtype(dtype) == np.int8:
        return symmetric_per_channel(weights, axis)
    return calibrated(np.uint8, 151, weights, headroom=1.0)


def bias_params(input_quant: QuantParams, weight_quant: QuantParams) -> QuantParams:
    scales = np.atleast_1d(np.asarray(weight_quant.scale, np.float64)) * float(
        np.atleast_1d(input_quant.scale)[0])
    return QuantParams(scales.astype(np.float32).tolist(), 0)


def case_seed(name: str) -> int:
    return sum((i + 1) * ord(c) for i, c in enumerate(name))


def with_calibrated_output(spec: QuantSpec, zero_point: int) -> QuantSpec:
    """Sets the output parameters from the float twin's output range."""
    # Calibrated on the inputs the test uses (build_spec's name): the
    # extreme few percent saturate.
    name = f"{spec.op}-{np.dtype(spec.dtype).name}"
    out = spec.twin_output(spec.random_inputs(case_seed(name)))
    spec.output_quant = calibrated(spec.dtype, zero_point, out)
    return spec


def _int8(dtype) -> bool:
    return np.dtype(dtype) == np.int8


def _binary(op: str, dtype, **kwargs) -> QuantSpec:
    a, b = qp(dtype, 0), qp(dtype, 1)
    spec = QuantSpec(f"{op}", op, dtype, [Operand(SHAPE, a), Operand(SHAPE, b)], None,
                     options={"fused_activation_function": "NONE"},
                     version=2 if _int8(dtype) else 1, **kwargs)
    return with_calibrated_output(spec, zero_points(dtype)[0])


def _same_params_binary(op: str, dtype) -> QuantSpec:
    """MAXIMUM/MINIMUM compare raw integers: one set of parameters for all."""
    q = qp(dtype, 1)
    return QuantSpec(op, op, dtype, [Operand(SHAPE, q), Operand(SHAPE, q)], q,
                     version=2 if _int8(dtype) else 1)


def _unary(op: str, dtype, version: int, output_zero_point_index: int = 0) -> QuantSpec:
    spec = QuantSpec(op, op, dtype, [Operand(SHAPE, qp(dtype, 1))], None, version=version)
    return with_calibrated_output(spec, zero_points(dtype)[output_zero_point_index])


def _fixed_output_unary(op: str, dtype, options=None) -> QuantSpec:
    """SOFTMAX and LOGISTIC: TFLite fixes the output to scale 1/256 and zero
    point 0 (uint8) or -128 (int8)."""
    out = QuantParams(1.0 / 256, -128 if _int8(dtype) else 0)
    return QuantSpec(op, op, dtype, [Operand(SHAPE, qp(dtype, 0, 2))], out, options=options,
                     version=2 if _int8(dtype) else 1)


def _layout(op: str, dtype, consts: list, options=None, version=None, in_shape=SHAPE) -> QuantSpec:
    """Ops that move raw integers (output parameters = input parameters);
    consts: the op's constant operands after its input (int32, unquantized)."""
    q = qp(dtype, 0)
    operands = [Operand(in_shape, q)] + [Operand(list(np.shape(c)), None, np.asarray(c), np.int32)
                                         for c in consts]
    if version is None:
        version = 2 if _int8(dtype) else 1
    return QuantSpec(op, op, dtype, operands, q, options=options, version=version)


def _weights(rng, shape, low=-0.6, high=0.6) -> np.ndarray:
    return rng.uniform(low, high, shape).astype(np.float32)


def _conv_like(op: str, dtype, in_shape, weight_shape, weight_axis, bias_count, options,
               version, float_version=1, leading=()) -> QuantSpec:
    rng = np.random.default_rng(case_seed(op + np.dtype(dtype).name))
    weight_type = np.int8 if _int8(dtype) else np.uint8
    in_quant = qp(dtype, 0)
    weights = _weights(rng, weight_shape)
    w_quant = weight_params(dtype, weights, weight_axis)
    bias = rng.uniform(-1, 1, [bias_count]).astype(np.float32)
    operands = list(leading) + [Operand(in_shape, in_quant),
                                Operand(list(weight_shape), w_quant, weights, weight_type),
                                Operand([bias_count], bias_params(in_quant, w_quant), bias,
                                        np.int32)]
    if op == "TRANSPOSE_CONV":  # inputs: output_shape, weights, input, bias
        operands = [operands[0], operands[2], operands[1], operands[3]]
    spec = QuantSpec(op, op, dtype, operands, None, options=options, version=version,
                     float_version=float_version)
    return with_calibrated_output(spec, zero_points(dtype)[1])


def conv_2d(dtype) -> QuantSpec:
    return _conv_like("CONV_2D", dtype, SHAPE, [7, 3, 3, 13], 0, 7,
                      {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                       "fused_activation_function": "NONE"}, 3 if _int8(dtype) else 1)


def depthwise_conv_2d(dtype) -> QuantSpec:
    return _conv_like("DEPTHWISE_CONV_2D", dtype, SHAPE, [1, 3, 3, 13], 3, 13,
                      {"padding": "SAME", "stride_w": 2, "stride_h": 2, "depth_multiplier": 1,
                       "fused_activation_function": "RELU6"}, 3 if _int8(dtype) else 1)


def fully_connected(dtype) -> QuantSpec:
    return _conv_like("FULLY_CONNECTED", dtype, [5, 37], [11, 37], 0, 11,
                      {"fused_activation_function": "NONE"}, 4 if _int8(dtype) else 1)


def transpose_conv(dtype) -> QuantSpec:
    shape = Operand([4], None, np.array([1, 18, 22, 7]), np.int32)
    # Version 3: the bias input (op_version.cc checks it before the types).
    return _conv_like("TRANSPOSE_CONV", dtype, SHAPE, [7, 3, 3, 13], 0, 7,
                      {"padding": "SAME", "stride_w": 2, "stride_h": 2}, 3, 3,
                      leading=[shape])


def average_pool_2d(dtype) -> QuantSpec:
    return _layout("AVERAGE_POOL_2D", dtype, [],
                   {"padding": "SAME", "stride_w": 2, "stride_h": 2, "filter_width": 3,
                    "filter_height": 3, "fused_activation_function": "NONE"})


def max_pool_2d(dtype) -> QuantSpec:
    return _layout("MAX_POOL_2D", dtype, [],
                   {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2,
                    "filter_height": 2, "fused_activation_function": "NONE"})


def concatenation(dtype) -> QuantSpec:
    """uint8 rescales each input to the output's parameters; int8 takes one
    set of parameters for all (see the float-twin check)."""
    if _int8(dtype):
        q = qp(dtype, 0)
        inputs, out = [q, q], q
    else:
        inputs, out = [qp(dtype, 0), qp(dtype, 1)], qp(dtype, 1, 3)
    return QuantSpec("CONCATENATION", "CONCATENATION", dtype,
                     [Operand([1, 9, 11, 5], inputs[0]), Operand([1, 9, 11, 6], inputs[1])],
                     out, options={"axis": 3, "fused_activation_function": "NONE"},
                     version=2 if _int8(dtype) else 1)


def prelu(dtype) -> QuantSpec:
    rng = np.random.default_rng(case_seed("PRELU" + np.dtype(dtype).name))
    alpha = rng.uniform(0.05, 0.6, [1, 1, 13]).astype(np.float32)
    alpha_quant = calibrated(dtype, zero_points(dtype)[0], np.concatenate([alpha.ravel(), [-0.1]]),
                             headroom=1.0)
    spec = QuantSpec("PRELU", "PRELU", dtype,
                     [Operand(SHAPE, qp(dtype, 1)), Operand([1, 1, 13], alpha_quant, alpha, dtype)],
                     None)
    return with_calibrated_output(spec, zero_points(dtype)[0])


def mean(dtype) -> QuantSpec:
    spec = QuantSpec("MEAN", "MEAN", dtype,
                     [Operand(SHAPE, qp(dtype, 0)),
                      Operand([2], None, np.array([1, 2]), np.int32)], None,
                     options={"keep_dims": True}, version=2 if _int8(dtype) else 1)
    return with_calibrated_output(spec, zero_points(dtype)[1])


def resize_bilinear(dtype) -> QuantSpec:
    # half_pixel_centers (what current converters emit) is version 3.
    return _layout("RESIZE_BILINEAR", dtype, [np.array([14, 17])],
                   {"align_corners": False, "half_pixel_centers": True}, version=3)


def quantize(dtype) -> QuantSpec:
    q = qp(dtype, 1, 0)
    info = np.iinfo(dtype)
    # Slightly beyond the representable range at both ends: clamping too.
    low, high = q.dequantize(info.min - 3), q.dequantize(info.max + 3)
    return QuantSpec("QUANTIZE", "QUANTIZE", dtype, [Operand(SHAPE, None, dtype=np.float32)],
                     q, float_input_range=(float(low), float(high)), half_way_inputs=True)


def dequantize(dtype) -> QuantSpec:
    return QuantSpec("DEQUANTIZE", "DEQUANTIZE", dtype, [Operand(SHAPE, qp(dtype, 1))], None,
                     version=2 if _int8(dtype) else 1, output_dtype=np.float32)


# op -> builder(dtype) of its spec
BUILDERS: dict[str, Callable] = {
    "ADD": lambda d: _binary("ADD", d),
    "SUB": lambda d: _binary("SUB", d),
    "MUL": lambda d: _binary("MUL", d),
    "CONV_2D": conv_2d,
    "DEPTHWISE_CONV_2D": depthwise_conv_2d,
    "FULLY_CONNECTED": fully_connected,
    "AVERAGE_POOL_2D": average_pool_2d,
    "MAX_POOL_2D": max_pool_2d,
    "CONCATENATION": concatenation,
    "RESHAPE": lambda d: _layout("RESHAPE", d, [np.array([1, 99, 13])], version=1),
    "PAD": lambda d: _layout("PAD", d, [np.array([[0, 0], [1, 2], [2, 1], [0, 3]])]),
    "SOFTMAX": lambda d: _fixed_output_unary("SOFTMAX", d, {"beta": 1.0}),
    "LOGISTIC": lambda d: _fixed_output_unary("LOGISTIC", d),
    "RELU": lambda d: _unary("RELU", d, 2),
    "RELU6": lambda d: _unary("RELU6", d, 2 if _int8(d) else 1),
    "MAXIMUM": lambda d: _same_params_binary("MAXIMUM", d),
    "MINIMUM": lambda d: _same_params_binary("MINIMUM", d),
    "RESIZE_BILINEAR": resize_bilinear,
    "STRIDED_SLICE": lambda d: _layout(
        "STRIDED_SLICE", d, [np.array([0, 1, 2, 1]), np.array([1, 8, 11, 12]),
                             np.array([1, 2, 3, 2])],
        {"begin_mask": 0, "end_mask": 0, "shrink_axis_mask": 0}),
    "TRANSPOSE_CONV": transpose_conv,
    "PRELU": prelu,
    "MEAN": mean,
    "HARD_SWISH": lambda d: _unary("HARD_SWISH", d, 1, output_zero_point_index=1),
    "QUANTIZE": quantize,
    "DEQUANTIZE": dequantize,
}

DTYPES = {"uint8": np.uint8, "int8": np.int8}


def build_spec(op: str, type_name: str) -> QuantSpec:
    spec = BUILDERS[op](DTYPES[type_name])
    spec.name = f"{op}-{type_name}"
    return spec
