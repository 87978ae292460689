"""Hostile quantization: quantized tensors whose parameters are missing,
inconsistent or out of range, for the hostile-model suite
(test_hostile_models.py registers QUANT_CASES) and the mutation fuzzer
(fuzz_mutations.py registers mutate_quantization).

Expected of the delegate: decline the node with a reason, or fail with a
clear message where TFLite itself refuses the model; never crash, never an
answer that differs from the CPU's where the CPU runs the model.
"""

from __future__ import annotations

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as schema

from tflite_builder import FILE_IDENTIFIER, ModelBuilder, QuantParams

SHAPE = [1, 4, 5, 3]
U8 = QuantParams(0.0137, 37)
U8_B = QuantParams(0.0291, 201)
I8 = QuantParams(0.0137, -91)
I8_B = QuantParams(0.0291, 77)


def _raw(scale, zero_point, dimension=0) -> schema.QuantizationParametersT:
    """Parameters exactly as given, without QuantParams' checks."""
    return schema.QuantizationParametersT(scale=list(scale), zeroPoint=list(zero_point),
                                          quantizedDimension=dimension)


def quantized_binary(op="ADD", dtype=np.uint8, params=(U8, U8_B, U8), version=1) -> ModelBuilder:
    b = ModelBuilder()
    x = b.add_input(SHAPE, dtype, quant=params[0])
    y = b.add_input(SHAPE, dtype, quant=params[1])
    o = b.add_tensor(SHAPE, dtype, quant=params[2])
    b.add_op(op, [x, y], [o], {"fused_activation_function": "NONE"}, version=version)
    return b


def with_raw_params(builder: ModelBuilder, tensor: int, scale, zero_point,
                    dimension=0) -> bytes:
    builder._tensors[tensor].quantization = _raw(scale, zero_point, dimension)
    return builder.build()


def quantized_conv(dtype=np.int8, weight_scales=None, weight_dimension=0,
                   bias_scale_factor=1.0, out_channels=5) -> ModelBuilder:
    """A 3x3 CONV_2D on int8 (per-channel weights) or uint8; weight_scales
    overrides the weights' scale list (any length)."""
    rng = np.random.default_rng(7)
    b = ModelBuilder()
    in_q = I8 if dtype == np.int8 else U8
    x = b.add_input([1, 6, 7, 3], dtype, quant=in_q)
    info = np.iinfo(np.int8 if dtype == np.int8 else np.uint8)
    weights = rng.integers(info.min + 1, info.max + 1, (out_channels, 3, 3, 3)).astype(
        np.int8 if dtype == np.int8 else np.uint8)
    scales = weight_scales if weight_scales is not None else \
        list(np.linspace(0.004, 0.009, out_channels))
    w = b.add_const(weights)
    b._tensors[w].quantization = _raw(scales, [0 if dtype == np.int8 else 151] * len(scales),
                                      weight_dimension)
    bias_scales = [in_q.scale * s * bias_scale_factor for s in
                   (list(scales) * out_channels)[:out_channels]]
    bias = b.add_const(rng.integers(-500, 500, out_channels).astype(np.int32),
                       quant=QuantParams(bias_scales, 0))
    o = b.add_tensor([1, 6, 7, out_channels], dtype,
                     quant=I8_B if dtype == np.int8 else U8_B)
    b.add_op("CONV_2D", [x, w, bias], [o],
             {"padding": "SAME", "stride_w": 1, "stride_h": 1,
              "fused_activation_function": "NONE"}, version=3 if dtype == np.int8 else 1)
    return b


def quantized_unary(op, dtype, in_q, out_q, options=None, version=1, out_shape=None):
    b = ModelBuilder()
    x = b.add_input(SHAPE, dtype, quant=in_q)
    o = b.add_tensor(out_shape or SHAPE, dtype, quant=out_q)
    b.add_op(op, [x], [o], options, version=version)
    return b


def max_pool_rescaling():
    """MAX_POOL_2D whose output parameters differ from its input's: TFLite's
    integer kernel copies raw values (ignores the output parameters)."""
    return quantized_unary("MAX_POOL_2D", np.int8, I8, I8_B,
                           {"padding": "VALID", "stride_w": 2, "stride_h": 2,
                            "filter_width": 2, "filter_height": 2}, version=2,
                           out_shape=[1, 2, 2, 3]).build()


def averaging_rescaling(op, dtype=np.uint8):
    """AVERAGE_POOL_2D / RESIZE_BILINEAR whose output params differ from the
    input's: TFLite's integer kernels write the averaged stored integers as
    they are, without the output's params (fuzz seed 2, cases 4617, 3414)."""
    in_q, out_q = (U8, U8_B) if dtype == np.uint8 else (I8, I8_B)
    b = ModelBuilder()
    x = b.add_input(SHAPE, dtype, quant=in_q)
    if op == "AVERAGE_POOL_2D":
        inputs, out_shape = [x], [1, 2, 2, 3]
        options = {"padding": "VALID", "stride_w": 2, "stride_h": 2,
                   "filter_width": 2, "filter_height": 2}
    else:
        inputs, out_shape = [x, b.add_const(np.array([7, 9], np.int32))], [1, 7, 9, 3]
        options = {"align_corners": False, "half_pixel_centers": False}
    o = b.add_tensor(out_shape, dtype, quant=out_q)
    b.add_op(op, inputs, [o], options, version=1 if dtype == np.uint8 else 2)
    return b.build()


def int8_concat_rescaling():
    """An int8 CONCATENATION whose second input has other params than the
    output: TFLite's int8 kernel refuses to rescale (fuzz seed 2, 12423)."""
    b = ModelBuilder()
    x = b.add_input(SHAPE, np.int8, quant=I8)
    y = b.add_input(SHAPE, np.int8, quant=I8_B)
    o = b.add_tensor(SHAPE[:3] + [6], np.int8, quant=I8)
    b.add_op("CONCATENATION", [x, y], [o], {"axis": 3}, version=2)
    return b.build()


def int16_add():
    q = QuantParams(0.0003, 0)
    return quantized_binary("ADD", np.int16, (q, QuantParams(0.0005, 0), q), version=3).build()


def int16_conv():
    """16x8 convolution: int16 activations, int8 weights, int64 bias."""
    rng = np.random.default_rng(9)
    b = ModelBuilder()
    x = b.add_input([1, 5, 5, 3], np.int16, quant=QuantParams(0.0004, 0))
    w_q = QuantParams([0.01, 0.02], 0)
    w = b.add_const(rng.integers(-127, 128, (2, 3, 3, 3)).astype(np.int8), quant=w_q)
    bias = b.add_const(np.array([1000, -2000], np.int64),
                       quant=QuantParams([0.000004, 0.000008], 0))
    o = b.add_tensor([1, 5, 5, 2], np.int16, quant=QuantParams(0.0007, 0))
    b.add_op("CONV_2D", [x, w, bias], [o], {"padding": "SAME", "stride_w": 1, "stride_h": 1},
             version=4)
    return b.build()


def _add(params=(U8, U8_B, U8), dtype=np.uint8, version=1) -> ModelBuilder:
    return quantized_binary("ADD", dtype, params, version)


# name -> model factory. TFLite refuses these at load or prepare, with a
# message: the delegate must not accept them either (declined or rejected).
REFUSED_BY_TFLITE = {
    "quant_two_scales_on_an_activation": lambda: with_raw_params(_add(), 0, [0.02, 0.03],
                                                                 [37, 37]),
    "quant_scale_without_zero_point": lambda: with_raw_params(_add(), 0, [0.02], []),
    "quant_per_channel_wrong_length": lambda: quantized_conv(
        weight_scales=[0.005, 0.006, 0.007]).build(),
    "quant_per_channel_dimension_out_of_range": lambda: quantized_conv(
        weight_dimension=7).build(),
    "quant_per_channel_dimension_negative": lambda: quantized_conv(weight_dimension=-1).build(),
    "quant_uint8_per_channel_weights": lambda: quantized_conv(dtype=np.uint8).build(),
    "quant_softmax_output_not_1_over_256": lambda: quantized_unary(
        "SOFTMAX", np.int8, I8, I8_B, {"beta": 1.0}, version=2).build(),
    "quant_logistic_output_not_1_over_256": lambda: quantized_unary(
        "LOGISTIC", np.uint8, U8, U8_B).build(),
    "quant_int8_concat_params_differ": int8_concat_rescaling,
}
# TFLite's CPU kernels run these without complaint, some into meaningless
# numbers (a zero scale): the delegate may decline them, or run them and
# give the CPU's answer (within 2 quantization steps); anything else is a
# silently wrong answer.
RUN_BY_TFLITE = {
    "quant_uint8_zero_point_300": lambda: with_raw_params(_add(), 0, [0.02], [300]),
    "quant_int8_zero_point_minus_200": lambda: with_raw_params(
        _add((I8, I8_B, I8), np.int8, 2), 1, [0.02], [-200]),
    "quant_bias_scale_inconsistent": lambda: quantized_conv(bias_scale_factor=3.0).build(),
    "quant_max_pool_output_params_differ": max_pool_rescaling,
    "quant_average_pool_output_params_differ": lambda: averaging_rescaling("AVERAGE_POOL_2D"),
    "quant_int8_average_pool_output_params_differ": lambda: averaging_rescaling(
        "AVERAGE_POOL_2D", np.int8),
    "quant_resize_bilinear_output_params_differ": lambda: averaging_rescaling(
        "RESIZE_BILINEAR"),
    "quant_int8_resize_bilinear_output_params_differ": lambda: averaging_rescaling(
        "RESIZE_BILINEAR", np.int8),
    "quant_int16_add": int16_add,
    "quant_int16_conv_16x8": int16_conv,
    "quant_tiny_scale": lambda: with_raw_params(_add(), 0, [1e-30], [37]),
    "quant_zero_scale_reshape": lambda: zero_scale_unary("RESHAPE", "input"),
    "quant_zero_scale_dequantize": lambda: zero_scale_unary("DEQUANTIZE", "input"),
    "quant_negative_scale_dequantize": lambda: zero_scale_unary("DEQUANTIZE", "input",
                                                                scale=-0.5),
    "quant_zero_scale_quantize": lambda: zero_scale_unary("QUANTIZE", "output"),
    "quant_nan_scale_quantize": lambda: zero_scale_unary("QUANTIZE", "output",
                                                         scale=float("nan")),
    "quant_negative_scale_relu_input": lambda: zero_scale_unary("RELU", "input", scale=-0.5),
    "quant_zero_scale_relu_output": lambda: zero_scale_unary("RELU", "output"),
}
# TFLite's CPU kernel aborts the process on these (a TFLITE_CHECK in its
# Prepare): the delegate must decline them with a reason before that (the
# abort then is TFLite's), or refuse the model; each runs in its own child.
ABORT_TFLITE = {
    "quant_zero_scale_add_input": lambda: with_raw_params(_add(), 0, [0.0], [37]),
    "quant_zero_scale_add_output": lambda: with_raw_params(_add(), 2, [0.0], [37]),
    "quant_negative_scale_add": lambda: with_raw_params(_add(), 1, [-0.02], [37]),
    "quant_nan_scale_add": lambda: with_raw_params(_add(), 0, [float("nan")], [37]),
    "quant_inf_scale_add": lambda: with_raw_params(_add(), 0, [float("inf")], [37]),
    "quant_params_missing_on_uint8_add": lambda: with_raw_params(_add(), 0, [], []),
}


# ------------------------------------------------------------- the fuzzer

# "valid": one set of plausible parameters on every activation (what ops that
# move raw integers require); "params_differ": plausible parameters of their
# own on each (TFLite's MAX_POOL_2D, RESHAPE, RESIZE_*... then copy raw
# integers and ignore the output's).
QUANT_KINDS = ("zero_scale", "negative_scale", "zero_point_out_of_range",
               "per_channel_wrong_length", "dimension_out_of_range", "int16_activations",
               "missing_params", "params_differ", "valid")


def _repack(model: schema.ModelT) -> bytes:
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def quantize_model(model_bytes: bytes, kind: str, rng) -> bytes:
    """The model with its float activations made uint8/int8 (int16 for
    "int16_activations") with one set of plausible parameters (each its own
    for "params_differ"), then one tensor's parameters broken as `kind`
    says (float constants stay float)."""
    model = schema.ModelT.InitFromPackedBuf(model_bytes, 0)
    graph = model.subgraphs[0]
    dtype = schema.TensorType.INT16 if kind == "int16_activations" else \
        int(rng.choice([schema.TensorType.UINT8, schema.TensorType.INT8]))
    low = {schema.TensorType.UINT8: 0, schema.TensorType.INT8: -128,
           schema.TensorType.INT16: 0}[dtype]
    activations = [i for i, t in enumerate(graph.tensors)
                   if t.type == schema.TensorType.FLOAT32 and not model.buffers[t.buffer].data]
    shared = None
    for i in activations:
        graph.tensors[i].type = dtype
        zero_point = 0 if dtype == schema.TensorType.INT16 else int(low + rng.integers(20, 230))
        params = ([float(rng.uniform(0.002, 0.05))], [zero_point])
        if kind != "params_differ":
            shared = shared or params
            params = shared
        graph.tensors[i].quantization = _raw(*params)
    if activations and kind not in ("valid", "int16_activations", "params_differ"):
        t = graph.tensors[activations[int(rng.integers(len(activations)))]]
        q = t.quantization
        if kind == "zero_scale":
            q.scale = [0.0]
        elif kind == "negative_scale":
            q.scale = [-q.scale[0]]
        elif kind == "zero_point_out_of_range":
            q.zeroPoint = [int(rng.choice([300, -300, 1 << 20]))]
        elif kind == "per_channel_wrong_length":
            count = int(rng.integers(2, 6))
            q.scale, q.zeroPoint = [q.scale[0]] * count, [q.zeroPoint[0]] * count
        elif kind == "dimension_out_of_range":
            q.scale, q.zeroPoint = [q.scale[0]] * 2, [q.zeroPoint[0]] * 2
            q.quantizedDimension = int(rng.choice([-1, 4, 7, 1 << 20]))
        elif kind == "missing_params":
            t.quantization = None
    return _repack(model)


def zero_scale_unary(op, which="input", dtype=np.uint8, scale=0.0):
    """A unary op with one zero (or other) scale on its input or output."""
    q = U8 if dtype == np.uint8 else I8
    bad = QuantParams(1.0, q.zero_point)
    out_dtype, options, version, out_shape = dtype, None, 1, None
    if op == "DEQUANTIZE":
        out_dtype = np.float32
    b = ModelBuilder()
    if op == "QUANTIZE":
        x = b.add_input(SHAPE, np.float32)
    else:
        x = b.add_input(SHAPE, dtype, quant=bad if which == "input" else q)
    inputs = [x]
    if op == "RESHAPE":
        inputs.append(b.add_const(np.array([1, 20, 3], np.int32)))
        out_shape = [1, 20, 3]
    o = b.add_tensor(out_shape or SHAPE, out_dtype,
                     quant=None if out_dtype == np.float32 else
                     (bad if which == "output" else q))
    b.add_op(op, inputs, [o], options, version=version)
    tensor = x if which == "input" else o
    b._tensors[tensor].quantization.scale = [scale]
    return b.build()


def mutate_quantization(spec, rng) -> str:
    """Fuzzer mutation: the model's float activations become quantized, and
    one tensor's parameters are broken as a random QUANT_KINDS entry says
    ("valid" keeps them plausible). Applied to the built model, so that the
    fuzzer's Spec needs no quantization fields."""
    kind = str(rng.choice(QUANT_KINDS))
    seed = int(rng.integers(1 << 30))
    build = spec.build
    spec.build = lambda: quantize_model(build(), kind, np.random.default_rng(seed))
    return f"quantized activations: {kind}"
