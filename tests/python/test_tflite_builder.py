"""Self-check of tools/tflite_builder.py against the real TFLite CPU interpreter.

Models are built with the builder, run on TFLite's builtin CPU kernels and
compared with the independent NumPy references in reference_ops.py, so a
mistake in how the builder encodes an op (layout, options, padding) shows up
as a numeric mismatch rather than going unnoticed.
"""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import reference_ops  # noqa: E402
from tflite_runtimes import Interpreter, schema  # noqa: E402
from tflite_builder import (  # noqa: E402
    ModelBuilder, QuantParams, make_options, options_table_for, run_tflite,
    single_op_model)

# float32 kernels vs. float64 references: a few ulps per accumulated term.
FLOAT_TOLERANCE = dict(rtol=1e-5, atol=1e-5)


@pytest.fixture
def rng():
    return np.random.default_rng(seed=20240601)


def parse(model_bytes) -> schema.ModelT:
    return schema.ModelT.InitFromPackedBuf(model_bytes, 0)


@pytest.mark.parametrize("op, table", [
    ("CONV_2D", "Conv2DOptionsT"),
    ("DEPTHWISE_CONV_2D", "DepthwiseConv2DOptionsT"),
    ("AVERAGE_POOL_2D", "Pool2DOptionsT"),
    ("MAX_POOL_2D", "Pool2DOptionsT"),
    ("MEAN", "ReducerOptionsT"),
    ("MAXIMUM", "MaximumMinimumOptionsT"),
    ("MINIMUM", "MaximumMinimumOptionsT"),
    ("LSTM", "LSTMOptionsT"),
    ("PADV2", "PadV2OptionsT"),
    ("MIRROR_PAD", "MirrorPadOptionsT"),
    ("RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighborOptionsT"),
    ("LOGICAL_AND", "LogicalAndOptionsT"),
    ("DILATE", "DilateOptionsT"),  # lives in the second options union
])
def test_options_table_lookup(op, table):
    assert options_table_for(op)[2].__name__ == table


@pytest.mark.parametrize("op", ["RELU", "LOGISTIC", "TANH", "CUSTOM"])
def test_ops_without_options(op):
    assert options_table_for(op) is None
    with pytest.raises(ValueError):
        make_options(op, {"alpha": 1.0})


def test_option_values_accept_names_ints_and_both_spellings():
    options = make_options("CONV_2D", {"padding": "same", "strideW": 2, "stride_h": 3,
                                       "fused_activation_function": 3})
    assert options.padding == schema.Padding.SAME
    assert (options.strideW, options.strideH) == (2, 3)
    assert options.fusedActivationFunction == schema.ActivationFunctionType.RELU6
    assert make_options("CAST", {"out_data_type": np.int32}).outDataType == (
        schema.TensorType.INT32)
    with pytest.raises(ValueError, match="no field"):
        make_options("CONV_2D", {"stride": 2})
    with pytest.raises(ValueError, match="not one of"):
        make_options("CONV_2D", {"padding": "FULL"})
    with pytest.raises(ValueError, match="unknown"):
        options_table_for("CONV2D")


def test_flatbuffer_layout():
    builder = ModelBuilder()
    x = builder.add_input([2, 3])
    w = builder.add_const(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = builder.add_tensor([2, 3])
    z = builder.add_tensor([2, 3])
    builder.add_op("ADD", [x, w], [y])
    builder.add_op("GELU", [y], [z])  # builtin code 150 does not fit an int8
    model_bytes = builder.build()

    assert model_bytes[4:8] == b"TFL3"
    model = parse(model_bytes)
    assert model.version == 3
    assert model.buffers[0].data is None
    assert model.subgraphs[0].inputs.tolist() == [x]
    assert model.subgraphs[0].outputs.tolist() == [z]
    gelu = model.operatorCodes[1]
    assert (gelu.builtinCode, gelu.deprecatedBuiltinCode) == (
        schema.BuiltinOperator.GELU, schema.BuiltinOperator.PLACEHOLDER_FOR_GREATER_OP_CODES)

    # Constant data must start on a 16-byte boundary of the file.
    base = np.frombuffer(model_bytes, np.uint8).ctypes.data
    reader = schema.Model.GetRootAs(model_bytes, 0)
    const_buffer = reader.Buffers(model.subgraphs[0].tensors[w].buffer)
    assert (const_buffer.DataAsNumpy().ctypes.data - base) % 16 == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64,
                                   np.int8, np.uint8, np.bool_])
def test_const_round_trips(dtype, rng):
    array = (rng.standard_normal((2, 3, 4)) * 50).astype(dtype)
    builder = ModelBuilder()
    const = builder.add_const(array, name="weights")
    builder.set_outputs([const])
    model = parse(builder.build())
    tensor = model.subgraphs[0].tensors[const]
    assert tensor.name == b"weights"
    assert tensor.shape.tolist() == [2, 3, 4]
    data = model.buffers[tensor.buffer].data.tobytes()
    np.testing.assert_array_equal(np.frombuffer(data, dtype).reshape(2, 3, 4), array)


def test_add_with_fused_relu(rng):
    a, b = rng.standard_normal((2, 1, 5, 7, 3)).astype(np.float32)
    model = single_op_model("ADD", [a.shape, b.shape],
                            {"fused_activation_function": "RELU"})
    (result,) = run_tflite(model, [a, b])
    np.testing.assert_allclose(result, np.maximum(a + b, 0), rtol=0, atol=1e-6)


def test_single_op_model_infers_output_shapes(rng):
    image = rng.standard_normal((1, 4, 6, 2))
    model = single_op_model("RESIZE_BILINEAR", [image.shape], {"align_corners": True},
                            consts={1: np.array([7, 11], np.int32)})
    output_shape = parse(model).subgraphs[0].tensors[2].shape.tolist()
    assert output_shape == [1, 7, 11, 2]
    (result,) = run_tflite(model, [image])
    # align_corners maps corners onto corners exactly.
    np.testing.assert_allclose(result[:, ::6, ::10, :], image[:, ::3, ::5, :], atol=1e-6)


@pytest.mark.parametrize("padding, strides, dilations", [
    ("SAME", (2, 2), (1, 1)),
    ("VALID", (2, 2), (1, 1)),
    ("SAME", (1, 2), (1, 1)),
    ("SAME", (1, 1), (2, 2)),
    ("VALID", (1, 1), (2, 1)),
])
def test_conv_2d(padding, strides, dilations, rng):
    image = rng.standard_normal((2, 9, 10, 3)).astype(np.float32)
    weights = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)
    model = single_op_model("CONV_2D", [image.shape], consts={1: weights, 2: bias}, options={
        "padding": padding, "stride_h": strides[0], "stride_w": strides[1],
        "dilation_h_factor": dilations[0], "dilation_w_factor": dilations[1],
        "fused_activation_function": "RELU6"})
    (result,) = run_tflite(model, [image])
    expected = reference_ops.conv2d(image, weights, bias, strides, padding, dilations,
                                    activation="RELU6")
    assert result.shape == expected.shape
    np.testing.assert_allclose(result, expected, **FLOAT_TOLERANCE)


@pytest.mark.parametrize("padding, strides, dilations", [
    ("SAME", (1, 1), (1, 1)),
    ("SAME", (2, 2), (1, 1)),
    ("VALID", (1, 2), (1, 1)),
    ("SAME", (1, 1), (2, 3)),
])
def test_depthwise_conv_2d_with_depth_multiplier(padding, strides, dilations, rng):
    multiplier = 2
    image = rng.standard_normal((1, 8, 11, 3)).astype(np.float32)
    weights = rng.standard_normal((1, 3, 3, 3 * multiplier)).astype(np.float32)
    bias = rng.standard_normal(3 * multiplier).astype(np.float32)
    model = single_op_model("DEPTHWISE_CONV_2D", [image.shape], consts={1: weights, 2: bias},
                            options={"padding": padding, "stride_h": strides[0],
                                     "stride_w": strides[1], "depth_multiplier": multiplier,
                                     "dilation_h_factor": dilations[0],
                                     "dilation_w_factor": dilations[1]})
    (result,) = run_tflite(model, [image])
    expected = reference_ops.depthwise_conv2d(image, weights, bias, strides, padding,
                                              dilations, depth_multiplier=multiplier)
    assert result.shape == expected.shape
    np.testing.assert_allclose(result, expected, **FLOAT_TOLERANCE)


def test_omitted_optional_input(rng):
    x = rng.standard_normal((2, 6)).astype(np.float32)
    weights = rng.standard_normal((4, 6)).astype(np.float32)
    model = single_op_model("FULLY_CONNECTED", [x.shape], consts={1: weights, 2: None})
    assert parse(model).subgraphs[0].operators[0].inputs.tolist()[2] == -1
    (result,) = run_tflite(model, [x])
    np.testing.assert_allclose(result, x.astype(np.float64) @ weights.T, **FLOAT_TOLERANCE)


def test_custom_op_is_encoded_and_fails_only_when_prepared():
    blob = bytes([1, 2, 3, 250])
    model_bytes = single_op_model("CUSTOM", [[1, 4]], output_shapes=[[1, 4]],
                                  custom_code="MyGlOp", custom_options=blob)
    model = parse(model_bytes)
    assert model.operatorCodes[0].customCode == b"MyGlOp"
    assert model.operatorCodes[0].builtinCode == schema.BuiltinOperator.CUSTOM
    assert model.subgraphs[0].operators[0].customOptions.tobytes() == blob
    # The model loads; the unresolved op only fails when it is prepared.
    interpreter = Interpreter(model_content=model_bytes)
    with pytest.raises(RuntimeError, match="MyGlOp"):
        interpreter.allocate_tensors()


def test_dequantized_fp16_constant_feeds_add(rng):
    x = rng.standard_normal((1, 4, 4, 3)).astype(np.float32)
    half = rng.standard_normal((1, 4, 4, 3)).astype(np.float16)
    builder = ModelBuilder()
    x_index = builder.add_input(x.shape)
    dequantized = builder.add_tensor(half.shape)
    total = builder.add_tensor(x.shape)
    builder.add_op("DEQUANTIZE", [builder.add_const(half)], [dequantized])
    builder.add_op("ADD", [x_index, dequantized], [total])
    (result,) = run_tflite(builder.build(), [x])
    # fp16 -> fp32 is exact, so only the float32 addition rounds.
    np.testing.assert_allclose(result, x + half.astype(np.float32), rtol=1e-7, atol=0)


def test_quantize_dequantize_round_trip(rng):
    scale, zero_point = 0.05, 3
    x = rng.uniform(-5, 5, (1, 6, 6, 2)).astype(np.float32)
    builder = ModelBuilder()
    x_index = builder.add_input(x.shape)
    quantized = builder.add_tensor(x.shape, np.int8, quant=(scale, zero_point))
    restored = builder.add_tensor(x.shape)
    builder.add_op("QUANTIZE", [x_index], [quantized])
    builder.add_op("DEQUANTIZE", [quantized], [restored])
    (result,) = run_tflite(builder.build(), [x])
    q = np.clip(np.round(x / scale) + zero_point, -128, 127)
    # Rounding ties may be broken differently; allow one quantization step.
    np.testing.assert_allclose(result, (q - zero_point) * scale, rtol=0, atol=scale * 1.001)


def test_per_channel_quant_params():
    params = QuantParams(scale=[0.1, 0.2, 0.4], zero_point=0, quantized_dimension=3)
    builder = ModelBuilder()
    weights = builder.add_const(np.ones((3, 1, 1, 3), np.int8), quant=params)
    builder.set_outputs([weights])
    quantization = parse(builder.build()).subgraphs[0].tensors[weights].quantization
    np.testing.assert_allclose(quantization.scale, [0.1, 0.2, 0.4], rtol=1e-7)
    assert quantization.zeroPoint.tolist() == [0, 0, 0]
    assert quantization.quantizedDimension == 3


def test_three_op_chain_conv_mean_softmax(rng):
    image = rng.standard_normal((1, 6, 6, 4)).astype(np.float32)
    weights = rng.standard_normal((5, 3, 3, 4)).astype(np.float32)
    builder = ModelBuilder()
    image_index = builder.add_input(image.shape)
    features = builder.add_tensor([1, 6, 6, 5])
    pooled = builder.add_tensor([1, 5])
    probabilities = builder.add_tensor([1, 5], name="probabilities")
    bias = builder.add_const(np.zeros(5, np.float32))  # TFLite's CONV_2D requires a bias
    builder.add_op("CONV_2D", [image_index, builder.add_const(weights), bias], [features],
                   {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                    "fused_activation_function": "RELU"})
    builder.add_op("MEAN", [features, builder.add_const(np.array([1, 2], np.int32))],
                   [pooled], {"keep_dims": False})
    builder.add_op("SOFTMAX", [pooled], [probabilities], {"beta": 0.5})
    (result,) = run_tflite(builder.build(), [image])

    conv = reference_ops.conv2d(image, weights, padding="SAME", activation="RELU")
    logits = 0.5 * conv.mean(axis=(1, 2))
    expected = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    np.testing.assert_allclose(result, expected, **FLOAT_TOLERANCE)


def test_gelu_op_code_above_127_runs(rng):
    x = rng.standard_normal((3, 7)).astype(np.float32)
    (result,) = run_tflite(single_op_model("GELU", [x.shape]), [x])
    expected = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.ravel().tolist()]
    # TFLite may evaluate erf through a lookup table or polynomial.
    np.testing.assert_allclose(result.ravel(), expected, rtol=0, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_quant_params_quantize_matches_tflite_quantize(dtype, rng):
    """QuantParams.quantize is TFLite's QUANTIZE, clamping included; values
    are random (not ties, which implementations may break differently)."""
    params = QuantParams(0.0291, 201 if dtype == np.uint8 else -91)
    x = rng.uniform(-9, 9, (1, 5, 7, 3)).astype(np.float32)
    model = single_op_model("QUANTIZE", [x.shape], input_dtypes=np.float32,
                            output_dtypes=dtype, output_quant=params)
    (result,) = run_tflite(model, [x])
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, params.quantize(x, dtype))
    info = np.iinfo(dtype)
    assert (result == info.min).any() and (result == info.max).any()  # clamped both ends


def test_quant_params_dequantize_per_channel_matches_tflite_dequantize(rng):
    params = QuantParams([0.0137, 0.0419, 0.00617], [0, 0, 0], quantized_dimension=1)
    weights = rng.integers(-127, 128, (4, 3, 2)).astype(np.int8)
    builder = ModelBuilder()
    constant = builder.add_const(weights, quant=params)
    out = builder.add_tensor(weights.shape)
    builder.add_op("DEQUANTIZE", [constant], [out], version=5)
    (result,) = run_tflite(builder.build(), [])
    np.testing.assert_allclose(result, params.dequantize(weights), rtol=1e-6, atol=0)
    expected = weights.astype(np.float64) * np.array([0.0137, 0.0419, 0.00617])[None, :, None]
    np.testing.assert_allclose(result, expected, rtol=1e-6, atol=0)


def test_quant_params_reject_a_dimension_the_array_lacks():
    with pytest.raises(ValueError, match="quantized_dimension"):
        QuantParams([0.1, 0.2], 0, quantized_dimension=3).dequantize(np.zeros((2, 2), np.int8))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_single_op_model_with_quantization_parameters(dtype, rng):
    """A quantized ADD: parameters land on the right tensors, and TFLite's
    integer kernel agrees with adding the dequantized values."""
    zero_points = (37, 201) if dtype == np.uint8 else (-91, 77)
    a, b = QuantParams(0.0137, zero_points[0]), QuantParams(0.0291, zero_points[1])
    out = QuantParams(0.0419, zero_points[0])
    info = np.iinfo(dtype)
    x, y = (rng.integers(info.min, info.max + 1, (1, 4, 5, 7)).astype(dtype)
            for _ in range(2))
    model = single_op_model("ADD", [x.shape, y.shape], {"fused_activation_function": "NONE"},
                            input_dtypes=dtype, input_quant=[a, b], output_quant=out,
                            version=2 if dtype == np.int8 else 1)
    tensors = parse(model).subgraphs[0].tensors
    assert [t.quantization.zeroPoint.tolist() for t in tensors] == [
        [zero_points[0]], [zero_points[1]], [zero_points[0]]]
    np.testing.assert_allclose([t.quantization.scale[0] for t in tensors],
                               [0.0137, 0.0291, 0.0419], rtol=1e-6)
    (result,) = run_tflite(model, [x, y])
    expected = out.quantize(a.dequantize(x).astype(np.float64) + b.dequantize(y), dtype)
    assert np.abs(result.astype(int) - expected.astype(int)).max() <= 1


def test_single_op_model_quantized_constants(rng):
    """const_quant: an int8 per-channel weight and an int32 bias."""
    w = QuantParams([0.01, 0.02], 0)
    bias = QuantParams([0.0005, 0.001], 0)
    model = single_op_model(
        "FULLY_CONNECTED", [[1, 3]], None,
        {1: np.array([[10, -20, 30], [-40, 50, -60]], np.int8),
         2: np.array([100, -200], np.int32)},
        input_dtypes=np.int8, input_quant=QuantParams(0.05, 3),
        output_quant=QuantParams(0.1, -5), const_quant={1: w, 2: bias}, version=4)
    tensors = parse(model).subgraphs[0].tensors
    assert tensors[1].type == schema.TensorType.INT8
    assert tensors[2].type == schema.TensorType.INT32
    np.testing.assert_allclose(tensors[1].quantization.scale, [0.01, 0.02], rtol=1e-6)
    x = np.array([[13, -7, 100]], np.int8)
    (result,) = run_tflite(model, [x])
    real = ((x.astype(float) - 3) * 0.05) @ (np.array([[10, -20, 30], [-40, 50, -60]])
                                             * np.array([[0.01], [0.02]])).T
    real += np.array([100 * 0.0005, -200 * 0.001])
    expected = np.clip(np.round(real / 0.1) - 5, -128, 127)
    assert np.abs(result.astype(int) - expected).max() <= 1
    with pytest.raises(ValueError, match="const_quant"):
        single_op_model("RELU", [[1, 3]], const_quant={0: w})
