"""Our declarations of the TFLite C ABI (delegate/abi/tflite_abi.h and
tflite_builtin.h) against the real runtime.

The delegate writes what it reads through those structs (tensors, nodes,
decoded builtin parameters) when TFLITE_GLES_DUMP_GRAPH is set; every field
is compared with what the interpreter reports and what the model file says.
A wrong offset or enum value anywhere shows up as a mismatch here."""

import json

import numpy as np
import pytest
from gles_testing import interpreter, make_delegate, single_op_model
from tflite_runtimes import schema

TYPE_CODES = {np.dtype(np.float32): 1, np.dtype(np.int32): 2, np.dtype(np.uint8): 3,
              np.dtype(np.int64): 4, np.dtype(np.bool_): 6, np.dtype(np.int16): 7,
              np.dtype(np.int8): 9, np.dtype(np.float16): 10}

rng = np.random.default_rng(0)


def weights(*shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


# op, input shapes, options, constants, the dump's expected params (in the
# runtime's enums: padding SAME=1 VALID=2; activation RELU=1 RELU_N1_TO_1=2
# RELU6=3 TANH=4).
CASES = [
    ("CONV_2D", [[1, 9, 8, 3]],
     {"padding": "VALID", "stride_w": 2, "stride_h": 1, "dilation_w_factor": 1,
      "dilation_h_factor": 2, "fused_activation_function": "RELU6"},
     {1: weights(4, 3, 2, 3), 2: weights(4)},
     {"padding": 2, "stride_w": 2, "stride_h": 1, "activation": 3,
      "dilation_w": 1, "dilation_h": 2}),
    ("DEPTHWISE_CONV_2D", [[1, 7, 6, 3]],
     {"padding": "SAME", "stride_w": 1, "stride_h": 2, "depth_multiplier": 2,
      "dilation_w_factor": 2, "dilation_h_factor": 1,
      "fused_activation_function": "RELU_N1_TO_1"},
     {1: weights(1, 3, 3, 6), 2: weights(6)},
     {"padding": 1, "stride_w": 1, "stride_h": 2, "depth_multiplier": 2, "activation": 2,
      "dilation_w": 2, "dilation_h": 1}),
    ("AVERAGE_POOL_2D", [[1, 8, 9, 5]],
     {"padding": "SAME", "stride_w": 2, "stride_h": 1, "filter_width": 3,
      "filter_height": 2, "fused_activation_function": "RELU"}, None,
     {"padding": 1, "stride_w": 2, "stride_h": 1, "filter_w": 3, "filter_h": 2,
      "activation": 1}),
    ("MAX_POOL_2D", [[2, 6, 6, 4]],
     {"padding": "VALID", "stride_w": 1, "stride_h": 3, "filter_width": 2,
      "filter_height": 3, "fused_activation_function": "TANH"}, None,
     {"padding": 2, "stride_w": 1, "stride_h": 3, "filter_w": 2, "filter_h": 3,
      "activation": 4}),
    ("FULLY_CONNECTED", [[2, 3, 8]],
     {"fused_activation_function": "RELU", "keep_num_dims": True},
     {1: weights(5, 8), 2: weights(5)},
     {"activation": 1, "weights_format": 0, "keep_num_dims": True}),
    ("SUB", [[1, 4, 4, 3], [1, 4, 4, 3]], {"fused_activation_function": "RELU6"}, None,
     {"activation": 3}),
    ("MUL", [[1, 4, 4, 3], [1, 4, 4, 3]], {"fused_activation_function": "TANH"}, None,
     {"activation": 4}),
    ("DIV", [[1, 4, 4, 3], [1, 4, 4, 3]], {"fused_activation_function": "RELU"}, None,
     {"activation": 1}),
    # The CPU kernel refuses fused activations on float CONCATENATION.
    ("CONCATENATION", [[1, 2, 3, 4], [1, 2, 3, 5]],
     {"axis": -1, "fused_activation_function": "NONE"}, None,
     {"axis": -1, "activation": 0}),
    ("RESHAPE", [[1, 6, 4]], {"new_shape": [2, 3, 4]}, {1: np.array([2, 3, 4], np.int32)},
     {"shape": [2, 3, 4]}),
    ("SOFTMAX", [[2, 7]], {"beta": 0.75}, None, {"beta": 0.75}),
    ("RESIZE_BILINEAR", [[1, 3, 4, 2]], {"align_corners": True, "half_pixel_centers": False},
     {1: np.array([6, 5], np.int32)}, {"align_corners": True, "half_pixel_centers": False}),
    ("STRIDED_SLICE", [[1, 8, 6, 4]],
     {"begin_mask": 1, "end_mask": 2, "ellipsis_mask": 0, "new_axis_mask": 0,
      "shrink_axis_mask": 0},
     {1: np.array([0, 1, 0, 0], np.int32), 2: np.array([1, 7, 6, 4], np.int32),
      3: np.array([1, 2, 1, 1], np.int32)},
     {"begin_mask": 1, "end_mask": 2, "ellipsis_mask": 0, "new_axis_mask": 0,
      "shrink_axis_mask": 0}),
    ("MEAN", [[1, 5, 6, 3]], {"keep_dims": True}, {1: np.array([1, 2], np.int32)},
     {"keep_dims": True}),
    ("LEAKY_RELU", [[1, 3, 3, 2]], {"alpha": 0.3}, None, {"alpha": 0.3}),
    ("SQUEEZE", [[1, 4, 1, 3]], {"squeeze_dims": [0, 2]}, None, {"squeeze_dims": [0, 2]}),
    ("SPLIT", [[1, 4, 6, 2]], {"num_splits": 3}, {0: np.array(2, np.int32)},
     {"num_splits": 3}),
    ("DEPTH_TO_SPACE", [[1, 2, 3, 8]], {"block_size": 2}, None, {"block_size": 2}),
    ("MIRROR_PAD", [[1, 4, 5, 2]], {"mode": "SYMMETRIC"},
     {1: np.array([[0, 0], [1, 2], [2, 1], [0, 0]], np.int32)},
     {"mode": 2}),  # the runtime's own enum: REFLECT=1, SYMMETRIC=2
    ("TRANSPOSE_CONV", [[1, 4, 5, 3]],
     {"padding": "SAME", "stride_w": 2, "stride_h": 2, "fused_activation_function": "NONE"},
     {0: np.array([1, 8, 10, 2], np.int32), 1: weights(2, 3, 3, 3)},
     {"padding": 1, "stride_w": 2, "stride_h": 2, "activation": 0}),
]


def dump_for(model: bytes, tmp_path, monkeypatch) -> dict:
    path = tmp_path / "graph.json"
    monkeypatch.setenv("TFLITE_GLES_DUMP_GRAPH", str(path))
    interp = interpreter(model, make_delegate({"log_level": "warning"}))
    dump = json.loads(path.read_text())
    return dump, interp


@pytest.mark.parametrize("op, shapes, options, consts, expected", CASES,
                         ids=[case[0] for case in CASES])
def test_delegate_reads_tensors_nodes_and_params_like_the_runtime(
        op, shapes, options, consts, expected, tmp_path, monkeypatch):
    num_outputs = options.get("num_splits", 1) if op == "SPLIT" else 1
    model = single_op_model(op, shapes, options, consts, num_outputs=num_outputs)
    dump, interp = dump_for(model, tmp_path, monkeypatch)

    # Tensors: names, types, shapes, byte sizes, constness, quantization.
    details = {d["index"]: d for d in interp.get_tensor_details()}
    assert len(dump["tensors"]) >= len(details)
    for tensor in dump["tensors"]:
        if tensor["index"] not in details:
            continue
        detail = details[tensor["index"]]
        assert tensor["name"] == detail["name"]
        assert tensor["type"] == TYPE_CODES[np.dtype(detail["dtype"])]
        assert tensor["dims"] == detail["shape"].tolist()
        assert tensor["bytes"] == int(np.prod(detail["shape"])) * np.dtype(detail["dtype"]).itemsize
        assert tensor["scale"] == pytest.approx(detail["quantization"][0])
        assert tensor["zero_point"] == detail["quantization"][1]

    # The node: op code, version, inputs/outputs as in the model file.
    model_t = schema.ModelT.InitFromPackedBuf(model, 0)
    op_t = model_t.subgraphs[0].operators[0]
    code = model_t.operatorCodes[op_t.opcodeIndex]
    (node,) = dump["nodes"]
    assert node["builtin_code"] == max(code.builtinCode, code.deprecatedBuiltinCode)
    assert node["version"] == code.version
    assert node["inputs"] == list(op_t.inputs)
    assert node["outputs"] == list(op_t.outputs)
    # Constant tensors are read-only allocations with data.
    for position in (consts or {}):
        tensor = dump["tensors"][op_t.inputs[position]]
        assert tensor["allocation_type"] in (1, 5) and tensor["has_data"], tensor

    # Builtin parameters decoded through our structs.
    params = node["params"]
    for key, value in expected.items():
        if isinstance(value, float):
            assert params[key] == pytest.approx(value), (key, params)
        else:
            assert params[key] == value, (key, params)


def test_quantized_tensor_params_are_read_at_the_right_offsets(tmp_path, monkeypatch):
    from tflite_builder import ModelBuilder, QuantParams
    b = ModelBuilder()
    x = b.add_input([1, 4, 4, 3], np.int8, quant=QuantParams(0.125, -3))
    y = b.add_tensor([1, 4, 4, 3], np.float32)
    b.add_op("DEQUANTIZE", [x], [y])
    dump, _ = dump_for(b.build(), tmp_path, monkeypatch)
    tensor = dump["tensors"][x]
    assert tensor["type"] == 9 and tensor["scale"] == pytest.approx(0.125)
    assert tensor["zero_point"] == -3 and tensor["quantization_type"] == 1


@pytest.mark.parametrize("axis", [0, 3])
def test_per_channel_scales_and_zero_points_are_read_through_the_arrays(axis):
    """TfLiteAffineQuantization's scale (TfLiteFloatArray) and zero_point
    (TfLiteIntArray) arrays: the delegate folds a per-channel int8 constant
    into floats at init from them, so a wrong array layout in either runtime
    gives wrong numbers (or a refused model) here."""
    from tflite_builder import ModelBuilder, QuantParams
    from gles_testing import assert_close, assert_fully_delegated, random_inputs, run_cpu_and_gpu
    shape = [3, 2, 4, 5]
    rng = np.random.default_rng(axis)
    channels = shape[axis]
    quant = QuantParams(scale=list(rng.uniform(0.01, 0.1, channels)),
                        zero_point=list(rng.integers(-5, 6, channels)),
                        quantized_dimension=axis)
    b = ModelBuilder()
    x = b.add_input(shape)
    w = b.add_const(rng.integers(-127, 128, shape).astype(np.int8), quant=quant)
    wf = b.add_tensor(shape)
    b.add_op("DEQUANTIZE", [w], [wf])
    y = b.add_tensor(shape)
    b.add_op("ADD", [x, wf], [y], {"fused_activation_function": "NONE"})
    cpu, gpu, stats = run_cpu_and_gpu(b.build(), random_inputs([shape], seed=axis))
    assert_fully_delegated(stats)
    assert_close(gpu, cpu)
