"""Build TensorFlow Lite models in memory, without TensorFlow.

Tests and architecture stand-ins need small, exactly specified graphs; the TF
converter would pull in TensorFlow and rewrite them.  Instead this fills in the
flatbuffer object API shipped with ai-edge-litert (schema_py_generated).

Typical use:

    b = ModelBuilder()
    x = b.add_input([1, 8, 8, 3])
    w = b.add_const(weights)                    # [8, 3, 3, 3], OHWI
    bias = b.add_const(np.zeros(8, np.float32))
    y = b.add_tensor([1, 4, 4, 8])
    b.add_op("CONV_2D", [x, w, bias], [y],
             {"padding": "SAME", "stride_w": 2, "stride_h": 2,
              "fused_activation_function": "RELU6"})
    outputs = run_tflite(b.build(), [image])

Option dicts use the schema's field names, in snake_case ("stride_w") or the
object API's camelCase ("strideW"); enum fields take names ("SAME") or ints.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping, Sequence

import flatbuffers
import numpy as np
from tflite_runtimes import Interpreter, OpResolverType, schema

SCHEMA_VERSION = 3
FILE_IDENTIFIER = b"TFL3"
# Constant data is placed at this alignment, as the TFLite converter does, so
# that runtimes may map it directly as typed (and SIMD-loaded) arrays.
BUFFER_ALIGNMENT = 16

# NumPy and TensorType share the names of the types we support.
_TENSOR_TYPES = {
    np.dtype(name): getattr(schema.TensorType, name.upper())
    for name in ("float32", "float16", "int32", "int64", "int16", "int8", "uint8", "bool")
}

# Ops whose options table is not named after the op itself; every other op is
# matched to "<OpNameInCamelCase>Options" if such a table exists.
_IRREGULAR_OPTIONS = {
    **dict.fromkeys(["AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"], "Pool2DOptions"),
    **dict.fromkeys(["MAXIMUM", "MINIMUM"], "MaximumMinimumOptions"),
    **dict.fromkeys(["MEAN", "SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN",
                     "REDUCE_ANY", "REDUCE_ALL"], "ReducerOptions"),
    **dict.fromkeys(["RANDOM_STANDARD_NORMAL", "RANDOM_UNIFORM", "MULTINOMIAL"],
                    "RandomOptions"),
    "L2_NORMALIZATION": "L2NormOptions",
    "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
    "CONV_3D_TRANSPOSE": "Conv3DOptions",
}

# Option fields (object API names) that hold enum values, so that callers can
# write {"padding": "SAME"} instead of looking up the integer.
_ENUM_FIELDS = {
    "padding": schema.Padding, "fusedActivationFunction": schema.ActivationFunctionType,
    "mode": schema.MirrorPadMode, "weightsFormat": schema.FullyConnectedOptionsWeightsFormat,
    "kernelType": schema.LSTMKernelType, "combiner": schema.CombinerType,
    "type": schema.LSHProjectionType, "reduceFunction": schema.ReduceWindowFunction,
    **{field: schema.TensorType for field in (
        "outType", "outputType", "inDataType", "outDataType", "idxOutType",
        "keyDtype", "valueDtype", "quantizedBiasType")},
}


def _enum_members(enum_class) -> dict[str, int]:
    return {k: v for k, v in vars(enum_class).items() if not k.startswith("_")}


def _squash(name: str) -> str:
    """Canonical form for matching op names to table names: CONV_2D ~ Conv2D."""
    return name.replace("_", "").lower()


# squashed table name -> (OperatorT union field holding it, union type code, name)
_OPTIONS_TABLES = {
    _squash(name): (union_field, code, name)
    for union_field, union in (("builtinOptions", schema.BuiltinOptions),
                               ("builtinOptions2", schema.BuiltinOptions2))
    for name, code in _enum_members(union).items() if name != "NONE"
}


def tensor_type(dtype) -> int:
    """TensorType value for a NumPy dtype."""
    try:
        return _TENSOR_TYPES[np.dtype(dtype)]
    except KeyError:
        raise ValueError(f"unsupported tensor dtype {np.dtype(dtype)}") from None


def builtin_op_code(op: str) -> int:
    """BuiltinOperator value for an op name such as "CONV_2D"."""
    try:
        return _enum_members(schema.BuiltinOperator)[op]
    except KeyError:
        raise ValueError(f"unknown TFLite builtin op {op!r}") from None


def options_table_for(op: str) -> tuple[str, int, type] | None:
    """Where op's options go: (OperatorT union field, union type code, *OptionsT class).

    Returns None for ops that take no options (RELU, LOGISTIC, CUSTOM, ...).
    """
    builtin_op_code(op)  # reject unknown ops rather than silently omit options
    table = _IRREGULAR_OPTIONS.get(op, op + "Options")
    entry = _OPTIONS_TABLES.get(_squash(table))
    if entry is None:
        return None
    union_field, code, name = entry
    return union_field, code, getattr(schema, name + "T")


def _camel_case(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _enum_value(field: str, value):
    """Turns enum names ("SAME") and, for TensorType fields, NumPy dtypes into ints."""
    enum_class = _ENUM_FIELDS.get(field)
    if enum_class is schema.TensorType and not isinstance(value, (str, int, np.integer)):
        return tensor_type(value)
    if not isinstance(value, str):
        return value
    if enum_class is None:
        raise ValueError(f"option {field!r} is not an enum; give a value, not {value!r}")
    members = _enum_members(enum_class)
    if value.upper() not in members:
        raise ValueError(f"{value!r} is not one of {enum_class.__name__} {sorted(members)}")
    return members[value.upper()]


def make_options(op: str, options: Mapping | None):
    """Builds the *OptionsT object for op, or None for ops without options.

    An op with an options table always gets one (schema defaults where not
    given): a missing table makes TFLite use zeroed parameters, which for
    e.g. CONV_2D means stride 0.
    """
    table = options_table_for(op)
    if table is None:
        if options:
            raise ValueError(f"{op} takes no builtin options, got {dict(options)}")
        return None
    result = table[2]()
    for key, value in (options or {}).items():
        field = _camel_case(key)
        if field not in vars(result):
            raise ValueError(f"{table[2].__name__} has no field {key!r}; "
                             f"fields are {sorted(vars(result))}")
        if isinstance(value, np.ndarray):  # Pack would write its dtype, not the field's
            value = value.tolist()
        setattr(result, field, _enum_value(field, value))
    return result


@dataclasses.dataclass(frozen=True)
class QuantParams:
    """Affine quantization: real = scale * (q - zero_point).

    Give sequences for per-channel quantization along quantized_dimension.
    """
    scale: float | Sequence[float]
    zero_point: int | Sequence[int] = 0
    quantized_dimension: int = 0

    def to_schema(self) -> schema.QuantizationParametersT:
        scale = np.atleast_1d(np.asarray(self.scale, np.float32))
        # One zero point may serve all channels; a mismatched list raises here.
        zero_point = np.broadcast_to(np.asarray(self.zero_point, np.int64), scale.shape)
        return schema.QuantizationParametersT(
            scale=scale.tolist(), zeroPoint=zero_point.tolist(),
            quantizedDimension=self.quantized_dimension)


    def _broadcast(self, value, rank: int) -> np.ndarray:
        """scale or zero_point shaped to broadcast along quantized_dimension."""
        value = np.asarray(value, np.float64)
        if value.size == 1:
            return value.reshape(())
        if not 0 <= self.quantized_dimension < rank:
            raise ValueError(f"quantized_dimension {self.quantized_dimension} does not fit "
                             f"rank {rank}")
        shape = [1] * rank
        shape[self.quantized_dimension] = value.size
        return value.reshape(shape)

    def quantize(self, real, dtype) -> np.ndarray:
        """real values -> dtype as TFLite's QUANTIZE does (round half away from
        zero, then add the zero point, then clamp to dtype's range)."""
        real = np.asarray(real, np.float64)
        scale = self._broadcast(self.scale, real.ndim)
        zero_point = self._broadcast(self.zero_point, real.ndim)
        scaled = real / scale
        rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
        info = np.iinfo(dtype)
        return np.clip(rounded + zero_point, info.min, info.max).astype(dtype)

    def dequantize(self, quantized) -> np.ndarray:
        """Quantized values -> float32 real values."""
        quantized = np.asarray(quantized)
        scale = self._broadcast(self.scale, quantized.ndim)
        zero_point = self._broadcast(self.zero_point, quantized.ndim)
        return ((quantized.astype(np.float64) - zero_point) * scale).astype(np.float32)


class _AlignedBufferT(schema.BufferT):
    """BufferT whose data starts at a BUFFER_ALIGNMENT boundary of the file.

    The stock Pack aligns only to the element size (1 byte).  Flatbuffers are
    built back to front and Finish pads to the largest alignment used, so
    Prep(alignment, n) right before the n data bytes aligns their start.
    """

    def Pack(self, builder):
        if self.data is not None:
            builder.Prep(BUFFER_ALIGNMENT, self.data.nbytes)
        return super().Pack(builder)


class ModelBuilder:
    """Accumulates tensors and ops of a single-subgraph model.

    All add_* methods return the new tensor's index, which is what add_op
    and set_outputs take.
    """

    def __init__(self, description: str = "tflite_builder"):
        self._description = description
        self._tensors: list[schema.TensorT] = []
        self._buffers: list[schema.BufferT] = [schema.BufferT()]  # 0: "no data"
        self._operator_codes: list[schema.OperatorCodeT] = []
        self._operators: list[schema.OperatorT] = []
        self._inputs: list[int] = []
        self._outputs: list[int] | None = None

    def _new_tensor(self, shape, dtype, name, kind, buffer=0, quant=None) -> int:
        index = len(self._tensors)
        if isinstance(quant, tuple):
            quant = QuantParams(*quant)
        self._tensors.append(schema.TensorT(
            shape=[int(d) for d in shape], type=tensor_type(dtype), buffer=buffer,
            name=name or f"{kind}_{index}",
            quantization=quant.to_schema() if quant else None))
        return index

    def add_input(self, shape, dtype=np.float32, name=None, quant=None) -> int:
        """Adds a graph input.  quant: QuantParams or a (scale, zero_point) tuple."""
        index = self._new_tensor(shape, dtype, name, "input", quant=quant)
        self._inputs.append(index)
        return index

    def add_tensor(self, shape, dtype=np.float32, name=None, quant=None) -> int:
        """Adds an intermediate or output tensor (no data; an op must produce it)."""
        return self._new_tensor(shape, dtype, name, "tensor", quant=quant)

    def add_const(self, array, name=None, dtype=None, quant=None) -> int:
        """Adds a constant tensor holding a copy of `array` (cast to dtype if given).

        Copied so that later changes by the caller cannot leak into build().
        """
        array = np.array(array, dtype=dtype, order="C")
        buffer = _AlignedBufferT()
        buffer.data = array.reshape(-1).view(np.uint8)
        self._buffers.append(buffer)
        return self._new_tensor(array.shape, array.dtype, name, "const",
                                buffer=len(self._buffers) - 1, quant=quant)

    def _opcode_index(self, op: str, version: int, custom_code: str | None) -> int:
        code = builtin_op_code(op)
        if (op == "CUSTOM") != (custom_code is not None):
            raise ValueError("custom_code is required for CUSTOM ops and only for them")
        for index, existing in enumerate(self._operator_codes):
            if (existing.builtinCode, existing.customCode, existing.version) == (
                    code, custom_code, version):
                return index
        # deprecated_builtin_code is an int8 kept for old readers; codes that do
        # not fit are stored as PLACEHOLDER_FOR_GREATER_OP_CODES there.
        placeholder = schema.BuiltinOperator.PLACEHOLDER_FOR_GREATER_OP_CODES
        self._operator_codes.append(schema.OperatorCodeT(
            deprecatedBuiltinCode=min(code, placeholder), customCode=custom_code,
            version=version, builtinCode=code))
        return len(self._operator_codes) - 1

    def add_op(self, op: str, inputs: Sequence[int], outputs: Sequence[int],
               options: Mapping | None = None, version: int = 1,
               custom_code: str | None = None, custom_options: bytes = b"") -> None:
        """Adds an op reading `inputs` and writing `outputs` (tensor indices).

        op is a BuiltinOperator name ("CONV_2D") or "CUSTOM" with custom_code.
        Use -1 in inputs for an omitted optional input.  custom_options is the
        opaque (normally flexbuffer) blob handed to a custom op's init.
        """
        self._check_tensors(inputs, allow_omitted=True)
        self._check_tensors(outputs)
        operator = schema.OperatorT(
            opcodeIndex=self._opcode_index(op, version, custom_code),
            inputs=[int(i) for i in inputs], outputs=[int(i) for i in outputs])
        option_values = make_options(op, options)
        if option_values is not None:
            union_field, code, _ = options_table_for(op)
            setattr(operator, union_field, option_values)
            setattr(operator, union_field + "Type", code)
        if custom_options:
            operator.customOptions = np.frombuffer(custom_options, np.uint8)
        self._operators.append(operator)

    def _check_tensors(self, indices: Sequence[int], allow_omitted: bool = False) -> None:
        for index in indices:
            if not (0 <= index < len(self._tensors) or (allow_omitted and index == -1)):
                raise IndexError(f"no tensor {index}; the model has {len(self._tensors)}")

    def set_outputs(self, outputs: Sequence[int]) -> None:
        """Sets the graph outputs, in order.

        Without this, the outputs are the tensors that some op writes and no op
        reads, in tensor order.
        """
        self._check_tensors(outputs)
        self._outputs = [int(i) for i in outputs]

    def build(self) -> bytes:
        """Returns the finished .tflite flatbuffer."""
        outputs = self._outputs
        if outputs is None:
            produced = {i for op in self._operators for i in op.outputs}
            consumed = {i for op in self._operators for i in op.inputs}
            outputs = sorted(produced - consumed)
        if not outputs:
            raise ValueError("the model has no outputs; add ops or call set_outputs")
        subgraph = schema.SubGraphT(
            tensors=self._tensors, inputs=self._inputs, outputs=outputs,
            operators=self._operators, name="main")
        model = schema.ModelT(
            version=SCHEMA_VERSION, operatorCodes=self._operator_codes,
            subgraphs=[subgraph], description=self._description, buffers=self._buffers)
        builder = flatbuffers.Builder(1024)
        builder.Finish(model.Pack(builder), file_identifier=FILE_IDENTIFIER)
        return bytes(builder.Output())

    def save(self, path) -> None:
        """Writes the built model to path."""
        with open(path, "wb") as f:
            f.write(self.build())


def _make_interpreter(model_bytes, delegates=None, num_threads=1, use_xnnpack=False):
    """Interpreter on the plain builtin kernels unless use_xnnpack is set.

    The AUTO resolver silently applies XNNPACK, which would both change the CPU
    numbers we use as reference and mix a second delegate into delegate runs.
    """
    resolver = OpResolverType.AUTO if use_xnnpack else (
        OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    return Interpreter(model_content=model_bytes, experimental_delegates=delegates,
                       num_threads=num_threads, experimental_op_resolver_type=resolver)


def run_tflite(model_bytes: bytes, inputs: Sequence, delegates=None, num_threads: int = 1,
               use_xnnpack: bool = False) -> list[np.ndarray]:
    """Runs the model once and returns its outputs, in graph output order.

    inputs are given in graph input order and must match the declared shapes.
    Values are cast to the input's dtype only if NumPy deems it same-kind
    (float64 -> float32 is fine; float -> int8 is an error, not a silent cast).
    """
    interpreter = _make_interpreter(model_bytes, delegates, num_threads, use_xnnpack)
    interpreter.allocate_tensors()
    details = interpreter.get_input_details()
    if len(inputs) != len(details):
        raise ValueError(f"model has {len(details)} inputs, got {len(inputs)}")
    for detail, value in zip(details, inputs):
        value = np.asarray(value)
        if not np.can_cast(value.dtype, detail["dtype"], "same_kind"):
            raise TypeError(f"input {detail['name']} is {np.dtype(detail['dtype'])}, "
                            f"got {value.dtype}")
        interpreter.set_tensor(detail["index"], value.astype(detail["dtype"]))
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]).copy()
            for d in interpreter.get_output_details()]


def _one_per_item(dtypes, count: int) -> list:
    """Accepts one dtype for all items or a list with one per item."""
    if not isinstance(dtypes, (list, tuple)):
        return [dtypes] * count
    if len(dtypes) != count:
        raise ValueError(f"expected {count} dtypes, got {len(dtypes)}")
    return list(dtypes)


def _one_quant_per_item(quant, count: int) -> list:
    """Accepts None, one QuantParams / (scale, zero_point) tuple for all items,
    or a list with one (or None) per item."""
    if isinstance(quant, list):
        if len(quant) != count:
            raise ValueError(f"expected {count} quantization parameters, got {len(quant)}")
        return quant
    return [quant] * count


def single_op_model(op: str, input_shapes: Sequence[Sequence[int]],
                    options: Mapping | None = None,
                    consts: Mapping[int, np.ndarray | None] | None = None, *,
                    input_dtypes=np.float32, output_shapes=None, output_dtypes=None,
                    num_outputs: int = 1, version: int = 1,
                    custom_code: str | None = None, custom_options: bytes = b"",
                    input_quant=None, output_quant=None,
                    const_quant: Mapping[int, QuantParams] | None = None) -> bytes:
    """Bytes of a model made of one op.

    The op's inputs are numbered in order; consts maps input positions to
    constant arrays (None for an omitted optional input) and the remaining
    positions become graph inputs with input_shapes, in order.  input_dtypes
    and output_dtypes are one dtype or a list of one per tensor; outputs
    default to the first graph input's dtype.  Without output_shapes, the
    shapes come from TFLite's CPU kernels (which compute them in Prepare), so
    they need not be worked out by hand; that needs an op those kernels run.

    Quantized models: input_quant and output_quant are one QuantParams (or
    (scale, zero_point) tuple) for every graph input / output, or a list of
    one per tensor (None for an unquantized one); const_quant maps constant
    positions to their QuantParams (constants keep their array's dtype).
    """
    consts = dict(consts or {})
    const_quant = dict(const_quant or {})
    if not set(const_quant) <= set(consts):
        raise ValueError(f"const_quant positions {sorted(const_quant)} are not constants "
                         f"{sorted(consts)}")
    num_op_inputs = len(input_shapes) + len(consts)
    if not set(consts) <= set(range(num_op_inputs)):
        raise ValueError(f"const positions {sorted(consts)} do not fit an op with "
                         f"{num_op_inputs} inputs")
    if output_shapes is not None:
        num_outputs = len(output_shapes)
    input_dtypes = _one_per_item(input_dtypes, len(input_shapes))
    if output_dtypes is None:
        output_dtypes = input_dtypes[0] if input_dtypes else np.float32
    output_dtypes = _one_per_item(output_dtypes, num_outputs)
    input_quant = _one_quant_per_item(input_quant, len(input_shapes))
    output_quant = _one_quant_per_item(output_quant, num_outputs)

    def build(shapes) -> bytes:
        builder = ModelBuilder(description=f"single {op}")
        graph_inputs = iter(zip(input_shapes, input_dtypes, input_quant))
        op_inputs = []
        for position in range(num_op_inputs):
            if position in consts:
                value = consts[position]
                op_inputs.append(-1 if value is None else builder.add_const(
                    value, quant=const_quant.get(position)))
            else:
                shape, dtype, quant = next(graph_inputs)
                op_inputs.append(builder.add_input(shape, dtype, quant=quant))
        op_outputs = [builder.add_tensor(shape, dtype, quant=quant)
                      for shape, dtype, quant in zip(shapes, output_dtypes, output_quant)]
        builder.add_op(op, op_inputs, op_outputs, options, version=version,
                       custom_code=custom_code, custom_options=custom_options)
        builder.set_outputs(op_outputs)
        return builder.build()

    if output_shapes is None:  # build with placeholder shapes, let TFLite resize them
        probe = _make_interpreter(build([[1]] * num_outputs))
        try:
            probe.allocate_tensors()
        except RuntimeError as error:
            raise ValueError("the TFLite CPU kernels could not infer the output shapes; "
                             "pass output_shapes") from error
        output_shapes = [d["shape"].tolist() for d in probe.get_output_details()]
    return build(output_shapes)
