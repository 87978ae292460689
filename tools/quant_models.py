"""Quantized twins of the shared MobileNets, made without TensorFlow.

The shared models hold one TF1 uint8 model (mobilenet_v1_0.25_224_quant) and
its float twin (mobilenet_v1_0.25_224). The other kinds of quantized models
the delegate must run are derived from them here, with real trained weights,
so that whole-model tests judge classes on real photographs:

  int8_full_integer(uint8 model): the TF2 full-integer form. Activations
    int8 (same scale, zero point - 128), weights re-quantized per output
    channel, symmetric (zero point 0; the uint8 step where a channel's
    weights fit in +-127 steps of it, so they stay exact, else max|w|/127:
    the closest int8 twin of the uint8 model), int32 biases with
    scale input_scale * weight_scale[c], a float input QUANTIZEd to int8 and
    the int8 softmax DEQUANTIZEd to a float output. Op versions as TFLite's
    op_version.cc gives them for int8 (CONV_2D 3, DEPTHWISE_CONV_2D 3,
    AVERAGE_POOL_2D 2, SOFTMAX 2, QUANTIZE 1, DEQUANTIZE 2).
  dynamic_range(float model, hybrid): weights of CONV_2D and
    DEPTHWISE_CONV_2D int8 per output channel, fed straight into the ops
    (TFLite's "hybrid" kernels: CONV_2D v5, DEPTHWISE_CONV_2D v6); float
    activations, no QUANTIZE.
  dynamic_range(float model, hybrid=False): the same int8 weights behind
    DEQUANTIZE nodes and float ops: the float computation with exactly the
    dequantized weights, which LiteRT's CPU runs in float (the reference the
    GPU's float view must match to fp32 accuracy).
"""

from __future__ import annotations

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as schema

from tflite_builder import FILE_IDENTIFIER, builtin_op_code

_T = schema.TensorType


def _load(data: bytes):
    return schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(data, 0))


def _save(model) -> bytes:
    builder = flatbuffers.Builder(1 << 20)
    builder.Finish(model.Pack(builder), file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def _op_name(model, op) -> str:
    code = model.operatorCodes[op.opcodeIndex]
    number = max(code.builtinCode, code.deprecatedBuiltinCode)
    for name, value in vars(schema.BuiltinOperator).items():
        if value == number and not name.startswith("_"):
            return name
    raise KeyError(number)


def _buffer(model, tensor) -> np.ndarray:
    data = model.buffers[tensor.buffer].data
    return np.asarray(data, np.uint8) if data is not None else np.zeros(0, np.uint8)


def _set_buffer(model, tensor, array: np.ndarray) -> None:
    buffer = schema.BufferT()
    buffer.data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    model.buffers.append(buffer)
    tensor.buffer = len(model.buffers) - 1


def _opcode(model, op: str, version: int) -> int:
    code = builtin_op_code(op)
    for index, existing in enumerate(model.operatorCodes):
        if (max(existing.builtinCode, existing.deprecatedBuiltinCode) == code
                and existing.version == version):
            return index
    model.operatorCodes.append(schema.OperatorCodeT(
        deprecatedBuiltinCode=min(code, 127), builtinCode=code, version=version))
    return len(model.operatorCodes) - 1


def _quant(scale, zero_point, dim=0):
    scale = np.atleast_1d(np.asarray(scale, np.float32))
    zero_point = np.broadcast_to(np.atleast_1d(np.asarray(zero_point, np.int64)), scale.shape)
    return schema.QuantizationParametersT(scale=scale.tolist(), zeroPoint=zero_point.tolist(),
                                          quantizedDimension=dim)


def _per_channel_int8(weights: np.ndarray, axis: int, step: float | None = None):
    """Symmetric int8 per channel along `axis`: (q, scales). The scale of a
    channel is max|w| / 127, or, given the `step` of weights that are
    already quantized (a uint8 model's), that step wherever the channel's
    values fit in [-127, 127] steps (then the int8 weights are exactly the
    uint8 ones), else max|w| / 127."""
    moved = np.moveaxis(weights.astype(np.float64), axis, 0)
    peak = np.abs(moved.reshape(moved.shape[0], -1)).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0)
    if step is not None:
        scales = np.where(peak <= 127 * step * (1 + 1e-6), step, scales)
    scales = scales.astype(np.float32)
    shape = [1] * weights.ndim
    shape[axis] = -1
    q = np.clip(np.round(weights / scales.reshape(shape)), -127, 127).astype(np.int8)
    return q, scales


def _dequantized(model, tensor) -> np.ndarray:
    q = tensor.quantization
    raw = _buffer(model, tensor)
    dtype = {_T.UINT8: np.uint8, _T.INT8: np.int8, _T.INT32: np.int32}[tensor.type]
    values = raw.view(dtype).astype(np.float64).reshape(tensor.shape)
    scale = np.asarray(q.scale, np.float64)
    zero = np.asarray(q.zeroPoint, np.float64)
    return (values - zero) * scale


# Weight tensor input index and its output-channel axis per conv op.
_CONV_AXES = {"CONV_2D": 0, "DEPTHWISE_CONV_2D": 3}


def int8_full_integer(uint8_model: bytes) -> bytes:
    model = _load(uint8_model)
    graph = model.subgraphs[0]
    weight_of = {}  # weight tensor -> (op name, input tensor, bias tensor)
    for op in graph.operators:
        name = _op_name(model, op)
        if name in _CONV_AXES:
            weight_of[op.inputs[1]] = (name, op.inputs[0], op.inputs[2])
    new_scales = {}
    for index, (name, _, _) in weight_of.items():
        tensor = graph.tensors[index]
        q, scales = _per_channel_int8(_dequantized(model, tensor), _CONV_AXES[name],
                                      step=float(tensor.quantization.scale[0]))
        _set_buffer(model, tensor, q)
        tensor.type = _T.INT8
        tensor.quantization = _quant(scales, 0, _CONV_AXES[name])
        new_scales[index] = scales
    for index, (name, data, bias_index) in weight_of.items():
        bias = graph.tensors[bias_index]
        real = _dequantized(model, bias)
        scales = graph.tensors[data].quantization.scale[0] * new_scales[index].astype(np.float64)
        q = np.clip(np.round(real / scales), -2**31, 2**31 - 1).astype(np.int32)
        _set_buffer(model, bias, q)
        bias.quantization = _quant(scales.astype(np.float32), 0)
    for index, tensor in enumerate(graph.tensors):
        if tensor.type != _T.UINT8:
            continue
        q = tensor.quantization
        tensor.type = _T.INT8
        tensor.quantization = _quant(q.scale, np.asarray(q.zeroPoint) - 128)
        raw = _buffer(model, tensor)
        if raw.size:
            _set_buffer(model, tensor, (raw.astype(np.int16) - 128).astype(np.int8))
    versions = {"CONV_2D": 3, "DEPTHWISE_CONV_2D": 3, "AVERAGE_POOL_2D": 2,
                "MAX_POOL_2D": 2, "SOFTMAX": 2, "ADD": 2, "CONCATENATION": 2}
    for op in graph.operators:
        name = _op_name(model, op)
        op.opcodeIndex = _opcode(model, name, versions.get(name, 1))
    # Float input -> QUANTIZE -> the int8 graph -> DEQUANTIZE -> float output.
    old_input, old_output = graph.inputs[0], graph.outputs[0]
    source, sink = graph.tensors[old_input], graph.tensors[old_output]
    graph.tensors.append(schema.TensorT(shape=list(source.shape), type=_T.FLOAT32,
                                        name=b"input_float", buffer=0))
    float_in = len(graph.tensors) - 1
    graph.tensors.append(schema.TensorT(shape=list(sink.shape), type=_T.FLOAT32,
                                        name=b"output_float", buffer=0))
    float_out = len(graph.tensors) - 1
    graph.operators.insert(0, schema.OperatorT(
        opcodeIndex=_opcode(model, "QUANTIZE", 1), inputs=[float_in], outputs=[old_input]))
    graph.operators.append(schema.OperatorT(
        opcodeIndex=_opcode(model, "DEQUANTIZE", 2), inputs=[old_output], outputs=[float_out]))
    graph.inputs = [float_in]
    graph.outputs = [float_out]
    return _save(model)


def dynamic_range(float_model: bytes, hybrid: bool = True) -> bytes:
    model = _load(float_model)
    graph = model.subgraphs[0]
    operators = []
    for op in graph.operators:
        name = _op_name(model, op)
        if name not in _CONV_AXES:
            operators.append(op)
            continue
        tensor = graph.tensors[op.inputs[1]]
        weights = _buffer(model, tensor).view(np.float32).reshape(tensor.shape)
        q, scales = _per_channel_int8(weights, _CONV_AXES[name])
        quant = _quant(scales, 0, _CONV_AXES[name])
        graph.tensors.append(schema.TensorT(shape=list(tensor.shape), type=_T.INT8,
                                            name=tensor.name + b"_int8", quantization=quant))
        int8_index = len(graph.tensors) - 1
        _set_buffer(model, graph.tensors[int8_index], q)
        if hybrid:
            op.inputs = [op.inputs[0], int8_index] + list(op.inputs[2:])
            op.opcodeIndex = _opcode(model, name, 5 if name == "CONV_2D" else 6)
        else:
            graph.tensors.append(schema.TensorT(shape=list(tensor.shape), type=_T.FLOAT32,
                                                name=tensor.name + b"_dequantized"))
            float_index = len(graph.tensors) - 1
            operators.append(schema.OperatorT(
                opcodeIndex=_opcode(model, "DEQUANTIZE", 5), inputs=[int8_index],
                outputs=[float_index]))
            op.inputs = [op.inputs[0], float_index] + list(op.inputs[2:])
        operators.append(op)
    graph.operators = operators
    return _save(model)
