"""The fuzzer's mutation kinds (tests/python/fuzz_models.py): each takes a
Spec (a single-op model, as fuzz_models builds it) and a seeded generator,
changes the spec in place and returns what it did, in words. One function
per kind, registered with its weight in MUTATION_KINDS; make_case draws
1-2 kinds per case through pick_mutation."""

from __future__ import annotations

import struct

import numpy as np

from hostile_quant import mutate_quantization
from model_check import random_value
from tflite_builder import options_table_for

EDGE_INTS = [0, -1, 1, 2, 3, 7, 1 << 16, -(1 << 31), (1 << 31) - 1]
ODD_DIMS = [0, 1, 2, 3, 5, 13, 64]
ODD_TYPES = [np.float16, np.int32, np.int8, np.uint8, np.int64, np.bool_]


def mutate_shape(spec, rng):
    candidates = [o for o in spec.inputs if o.const is None] or spec.inputs
    operand = candidates[int(rng.integers(len(candidates)))]
    roll = rng.random()
    if roll < 0.5 and operand.shape:
        operand.shape[int(rng.integers(len(operand.shape)))] = int(rng.choice(ODD_DIMS))
    elif roll < 0.75:
        operand.shape = operand.shape + [int(rng.choice([1, 2, 3]))]  # rank + 1 (up to 5, 6)
    else:
        operand.shape = operand.shape[: int(rng.integers(0, max(1, len(operand.shape))))]
    if operand.const is not None:
        operand.const = random_value(operand.shape, operand.const.dtype, rng)
    return f"shape of an operand -> {operand.shape}"


def mutate_type(spec, rng):
    candidates = [o for o in spec.inputs if o.const is None]
    operand = candidates[int(rng.integers(len(candidates)))] if candidates else spec.inputs[0]
    operand.dtype = ODD_TYPES[int(rng.integers(len(ODD_TYPES)))]
    if operand.const is not None:
        operand.const = random_value(operand.shape, operand.dtype, rng)
    return f"type -> {np.dtype(operand.dtype).name}"


def mutate_param(spec, rng):
    table = options_table_for(spec.op)
    if table is None:
        return mutate_version(spec, rng)
    fields = sorted(vars(table[2]()))
    if not fields:
        return mutate_version(spec, rng)
    field = fields[int(rng.integers(len(fields)))]
    default = getattr(table[2](), field)
    if isinstance(default, bool):
        value = not default
    elif isinstance(default, float):
        value = float(rng.choice([0.0, -1.0, 1e-30, 1e30, float("nan"), float("inf")]))
    elif isinstance(default, int):
        value = int(rng.choice(EDGE_INTS))
    else:
        return mutate_version(spec, rng)
    # Keep values the flatbuffer field can hold (byte fields, enums).
    if field in ("padding", "fusedActivationFunction", "mode") or \
            field.endswith("Type"):
        value = int(value) % 128
    spec.options[snake_case(field)] = value
    return f"{field} -> {value}"


def mutate_version(spec, rng):
    spec.version = int(rng.integers(1, 9))
    return f"version -> {spec.version}"


def mutate_const_to_input(spec, rng):
    consts = [o for o in spec.inputs if o.const is not None]
    if not consts:
        return mutate_shape(spec, rng)
    consts[int(rng.integers(len(consts)))].const = None
    return "a constant operand becomes a graph input"


def mutate_declared_output(spec, rng):
    """Declares an output shape the op does not produce (the delegate sees
    declared shapes when the runtime has not prepared the graph first)."""
    shape = list(spec.inputs[0].shape) or [1]
    position = int(rng.integers(len(shape)))
    shape[position] = int(shape[position] + rng.choice([-1, 1, 2]))
    spec.declared_outputs = [shape] * spec.outputs
    return f"declared output shape -> {shape}"


def snake_case(field: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in field)


def mutate_output_type(spec, rng):
    """The graph outputs' declared type changes (the op's kernel must check
    what it writes, as TFLite's does)."""
    spec.output_dtype = ODD_TYPES[int(rng.integers(len(ODD_TYPES)))]
    return f"output type -> {np.dtype(spec.output_dtype).name}"


def mutate_intermediate(spec, rng):
    """The op writes an intermediate (a RELU reads it); its declared type or
    shape may then disagree with what the op computes."""
    spec.tail = True
    roll = rng.random()
    if roll < 0.4:
        spec.intermediate_dtype = ODD_TYPES[int(rng.integers(len(ODD_TYPES)))]
        return f"intermediate type -> {np.dtype(spec.intermediate_dtype).name}"
    if roll < 0.8:
        shape = list((spec.output_shapes or [spec.inputs[0].shape])[0]) or [1]
        position = int(rng.integers(len(shape)))
        shape[position] = max(0, int(shape[position] + rng.choice([-1, 1, 2])))
        spec.intermediate_shape = shape
        return f"intermediate shape -> {shape}"
    return "the output is an intermediate"


def mutate_data_on_tensor(spec, rng):
    """A graph input, output or intermediate carries constant data: TFLite
    makes it read-only (an input the application still sets, an output
    nothing may write)."""
    roll = rng.random()
    inputs = [k for k, o in enumerate(spec.inputs) if o.const is None]
    if roll < 0.45 and inputs:
        role = ("input", inputs[int(rng.integers(len(inputs)))])
    elif roll < 0.75:
        role = ("output", int(rng.integers(spec.outputs)))
    else:
        spec.tail = True
        role = ("intermediate",)
    spec.data_on.append(role)
    return f"constant data on {role}"


def mutate_const_size(spec, rng):
    """A constant declares a shape whose size differs from the data it holds."""
    consts = [o for o in spec.inputs if o.const is not None]
    if not consts:
        return mutate_shape(spec, rng)
    operand = consts[int(rng.integers(len(consts)))]
    shape = list(operand.const.shape) or [1]
    position = int(rng.integers(len(shape)))
    shape[position] = int(rng.choice([0, max(1, shape[position] // 2), shape[position] + 1,
                                      2 * shape[position] + 3]))
    operand.declared_shape = shape
    return f"a constant of shape {list(operand.const.shape)} declares {shape}"


def mutate_input_index(spec, rng):
    """An operator input index set to -1 (omitted) or moved to another
    tensor (another input, or the op's own output)."""
    position = int(rng.integers(len(spec.inputs)))
    value = [-1, "other", "output"][int(rng.integers(3))]
    spec.index_edits.append((position, value))
    return f"input {position} -> {value}"


def mutate_custom_options(spec, rng):
    """A custom op's raw option values out of range, or cut short."""
    if not spec.custom_code:
        return mutate_param(spec, rng)
    values = list(np.frombuffer(spec.custom_options, np.int32))
    if rng.random() < 0.2:
        spec.custom_options = spec.custom_options[:4 * int(rng.integers(0, len(values)))]
        return f"custom options cut to {len(spec.custom_options)} bytes"
    field = int(rng.integers(len(values)))
    values[field] = int(rng.choice([0, -1, 3, 9, 1 << 16, -(1 << 31), (1 << 31) - 1]))
    spec.custom_options = struct.pack(f"<{len(values)}i", *values)
    return f"custom option {field} -> {values[field]}"


# name -> (mutation, weight). One function per kind; a new kind is one
# function and one entry here.
MUTATION_KINDS = {
    "shape": (mutate_shape, 2),
    "type": (mutate_type, 1),
    "param": (mutate_param, 2),
    "version": (mutate_version, 1),
    "const_to_input": (mutate_const_to_input, 1),
    "declared_output": (mutate_declared_output, 1),
    "output_type": (mutate_output_type, 1),
    "intermediate": (mutate_intermediate, 1),
    "data_on_tensor": (mutate_data_on_tensor, 1),
    "const_size": (mutate_const_size, 1),
    "input_index": (mutate_input_index, 1),
    "custom_options": (mutate_custom_options, 1),
    # Quantized tensors with broken parameters (hostile_quant.py).
    "quantization": (mutate_quantization, 1),
}


def pick_mutation(rng):
    kinds = sorted(MUTATION_KINDS)
    weights = np.array([MUTATION_KINDS[k][1] for k in kinds], np.float64)
    return MUTATION_KINDS[kinds[int(rng.choice(len(kinds), p=weights / weights.sum()))]][0]
