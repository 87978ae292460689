"""Mutation fuzzer: valid single-op models, mutated in shapes, parameters,
types and versions, run through the real runtime with and without the
delegate. Every case must agree with the CPU, be declined by the delegate's
support check, or be rejected by the CPU interpreter too (model_check.py).

    python3 tests/python/fuzz_models.py --cases 300 --seed 1   # a run
    python3 tests/python/fuzz_models.py --seed 1 --only 17     # replay case 17

Ops come from BASE_MODELS (op -> builder of a valid spec); the mutation
kinds are in fuzz_mutations.py (MUTATION_KINDS, one function per kind). Ops whose base
model the delegate runs are fuzzed most; ops it does not (yet) run get a
small share, so a kernel that lands is fuzzed from the next run on without
editing this file beyond its table entry.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import struct
import sys
import time
from pathlib import Path

import flatbuffers
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import model_catalog  # noqa: E402
from gles_testing import interpreter  # noqa: E402
from fuzz_mutations import pick_mutation  # noqa: E402
from model_check import ACCEPTABLE, check_model, random_value  # noqa: E402
from ai_edge_litert import schema_py_generated as schema  # noqa: E402
from tflite_builder import _TENSOR_TYPES as TENSOR_TYPES  # noqa: E402
from tflite_builder import ModelBuilder, tensor_type  # noqa: E402


@dataclasses.dataclass
class Operand:
    shape: list
    dtype: type = np.float32
    const: np.ndarray | None = None  # data of a constant operand
    # A constant's declared shape where a mutation made it disagree with the
    # number of values it holds.
    declared_shape: list | None = None


@dataclasses.dataclass
class Spec:
    op: str
    inputs: list
    options: dict
    version: int = 1
    outputs: int = 1
    # The true output shapes, for ops whose delegate kernels check them
    # against the model (layout ops); None: the first input's shape.
    output_shapes: list | None = None
    declared_outputs: list | None = None  # set by a mutation: a wrong declaration
    # Set by the mutation kinds below (None / empty: as the base model is).
    output_dtype: type | None = None      # the graph outputs' type
    # The op's output 0 feeds a RELU whose output is the graph output, so
    # that the op writes an intermediate tensor (declared type and shape).
    tail: bool = False
    intermediate_dtype: type | None = None
    intermediate_shape: list | None = None
    # Tensors that carry constant data although nothing makes them constant:
    # ("input", k), ("output", j) or ("intermediate",).
    data_on: list = dataclasses.field(default_factory=list)
    # Operator input edits after building: (position, -1) or (position,
    # "output") / (position, "other"): another tensor of the model.
    index_edits: list = dataclasses.field(default_factory=list)
    custom_code: str | None = None        # op == "CUSTOM"
    custom_options: bytes = b""

    @property
    def outputs_dtype(self):
        # Outputs take the type of the first non-constant input (SPLIT's
        # first input is its constant axis).
        return next((o.dtype for o in self.inputs if o.const is None), self.inputs[0].dtype)

    def describe(self) -> str:
        def operand(o):
            kind = "const" if o.const is not None else "in"
            return f"{kind}{list(o.shape)}:{np.dtype(o.dtype).name}"
        options = {k: (round(v, 3) if isinstance(v, float) else v)
                   for k, v in self.options.items()}
        if self.custom_code:
            options = {"custom": self.custom_code,
                       "options": list(np.frombuffer(self.custom_options, np.int32))}
        return (f"{self.op} v{self.version} ({', '.join(operand(o) for o in self.inputs)}) "
                f"{options}")

    def build(self) -> bytes:
        """The model, with output shapes as TFLite's CPU kernels compute them
        (the delegate sees declared shapes: they must be right unless a
        mutation says otherwise); where the CPU cannot, the spec's
        output_shapes or the first input's shape."""
        model = self._build(None)
        if self.declared_outputs is not None:
            return self._build(self.declared_outputs)
        try:
            probe = interpreter(model)
            probe.allocate_tensors()
            shapes = [list(d["shape"]) for d in probe.get_output_details()]
        except (RuntimeError, ValueError):
            return model
        return self._build(shapes)

    def _build(self, output_shapes) -> bytes:
        b = ModelBuilder(description="fuzz")
        indices = []
        for operand in self.inputs:
            if operand.const is not None:
                indices.append(b.add_const(operand.const))
                if operand.declared_shape is not None:  # data and shape disagree
                    b._tensors[indices[-1]].shape = list(operand.declared_shape)
            else:
                indices.append(b.add_input(operand.shape, operand.dtype))
        first = self.inputs[0]
        shapes = output_shapes or self.output_shapes or [first.shape] * self.outputs
        dtype = self.output_dtype or self.outputs_dtype
        outputs = [b.add_tensor(shape, dtype) for shape in shapes]
        b.add_op(self.op, indices, outputs, self.options or None, version=self.version,
                 custom_code=self.custom_code, custom_options=self.custom_options)
        graph_outputs = list(outputs)
        if self.tail:
            middle = b._tensors[outputs[0]]
            tail_out = b.add_tensor(list(middle.shape), dtype)
            if self.intermediate_shape is not None:
                middle.shape = list(self.intermediate_shape)
            if self.intermediate_dtype is not None:
                middle.type = tensor_type(self.intermediate_dtype)
            b.add_op("RELU", [outputs[0]], [tail_out])
            graph_outputs[0] = tail_out
        rng = np.random.default_rng(len(b._tensors))
        for role in self.data_on:
            index = {"input": lambda k: indices[k], "output": lambda j: graph_outputs[j],
                     "intermediate": lambda: outputs[0]}[role[0]](*role[1:])
            give_data(b, index, rng)
        operator = b._operators[0]
        for position, value in self.index_edits:
            if position >= len(operator.inputs):
                continue
            if value == "output":
                value = outputs[0]
            elif value == "other":
                value = indices[(position + 1) % len(indices)]
            operator.inputs[position] = int(value)
        b.set_outputs(graph_outputs)
        return b.build()


def give_data(b: ModelBuilder, index: int, rng) -> None:
    """Gives tensor `index` a buffer holding data of its declared shape and
    type: TFLite then treats it as read-only, whatever else it is."""
    tensor = b._tensors[index]
    dtype = next(d for d, t in TENSOR_TYPES.items() if t == tensor.type)
    data = random_value([max(int(d), 0) for d in tensor.shape], dtype, rng)
    b._buffers.append(schema.BufferT())
    b._buffers[-1].data = np.frombuffer(data.tobytes() or b"\0", np.uint8)
    tensor.buffer = len(b._buffers) - 1


def floats(rng, shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def nhwc(rng, max_hw=9, channels=None):
    return [1, int(rng.integers(1, max_hw)), int(rng.integers(1, max_hw)),
            int(channels or rng.choice([1, 3, 4, 5, 8, 13]))]


ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def binary(op):
    def make(rng):
        shape = nhwc(rng)
        other = Operand(list(shape))
        roll = rng.random()
        if roll < 0.3:
            other = Operand([shape[-1]], const=floats(rng, [shape[-1]]))
        elif roll < 0.4:
            other = Operand([], const=np.array(rng.uniform(-2, 2), np.float32))
        return Spec(op, [Operand(shape), other],
                    {"fused_activation_function": str(rng.choice(ACTIVATIONS))})
    return make


def unary(op):
    return lambda rng: Spec(op, [Operand(nhwc(rng))], {})


def conv2d(rng):
    shape = nhwc(rng, max_hw=12)
    cout, k = int(rng.choice([1, 4, 5, 8])), int(rng.choice([1, 3]))
    return Spec("CONV_2D", [Operand(shape),
                            Operand([cout, k, k, shape[3]], const=floats(rng, [cout, k, k, shape[3]])),
                            Operand([cout], const=floats(rng, [cout]))],
                {"padding": str(rng.choice(["SAME", "VALID"])),
                 "stride_w": int(rng.integers(1, 3)), "stride_h": int(rng.integers(1, 3)),
                 "dilation_w_factor": 1, "dilation_h_factor": 1,
                 "fused_activation_function": str(rng.choice(ACTIVATIONS))})


def depthwise(rng):
    shape = nhwc(rng, max_hw=12)
    k = int(rng.choice([3, 5]))
    return Spec("DEPTHWISE_CONV_2D",
                [Operand(shape), Operand([1, k, k, shape[3]], const=floats(rng, [1, k, k, shape[3]])),
                 Operand([shape[3]], const=floats(rng, [shape[3]]))],
                {"padding": str(rng.choice(["SAME", "VALID"])), "stride_w": 1, "stride_h": 1,
                 "depth_multiplier": 1, "dilation_w_factor": 1, "dilation_h_factor": 1})


def pool(op):
    def make(rng):
        size = int(rng.integers(1, 4))
        return Spec(op, [Operand(nhwc(rng, max_hw=12))],
                    {"padding": str(rng.choice(["SAME", "VALID"])), "stride_w": size,
                     "stride_h": size, "filter_width": size, "filter_height": size})
    return make


def concatenation(rng):
    shape = nhwc(rng)
    extra = int(rng.integers(1, 9))
    return Spec("CONCATENATION", [Operand(shape), Operand(shape[:3] + [extra])],
                {"axis": 3}, output_shapes=[shape[:3] + [shape[3] + extra]])


def softmax(rng):
    return Spec("SOFTMAX", [Operand([1, int(rng.integers(1, 40))])], {"beta": 1.0})


def mean(rng):
    return Spec("MEAN", [Operand(nhwc(rng)), Operand([2], np.int32, np.array([1, 2], np.int32))],
                {"keep_dims": True})


def reshape(rng):
    shape = nhwc(rng)
    target = np.array([1, shape[1] * shape[2], shape[3]], np.int32)
    return Spec("RESHAPE", [Operand(shape), Operand([3], np.int32, target)], {},
                output_shapes=[target.tolist()])


def pad(rng):
    paddings = np.array([[0, 0], [1, 2], [2, 1], [0, 0]], np.int32)
    shape = nhwc(rng)
    return Spec("PAD", [Operand(shape), Operand([4, 2], np.int32, paddings)], {},
                output_shapes=[padded(shape, paddings)])


def resize(op):
    def make(rng):
        size = np.array([int(rng.integers(1, 17)), int(rng.integers(1, 17))], np.int32)
        return Spec(op, [Operand(nhwc(rng)), Operand([2], np.int32, size)],
                    {"align_corners": False, "half_pixel_centers": bool(rng.random() < 0.5)})
    return make


def fully_connected(rng):
    n_in, n_out = int(rng.integers(1, 40)), int(rng.integers(1, 20))
    return Spec("FULLY_CONNECTED", [Operand([1, n_in]),
                                    Operand([n_out, n_in], const=floats(rng, [n_out, n_in])),
                                    Operand([n_out], const=floats(rng, [n_out]))],
                {"fused_activation_function": str(rng.choice(ACTIVATIONS))})


def transpose(rng):
    perm = np.array(rng.permutation(4), np.int32)
    shape = nhwc(rng)
    return Spec("TRANSPOSE", [Operand(shape), Operand([4], np.int32, perm)], {},
                output_shapes=[[shape[p] for p in perm]])


def padded(shape, paddings):
    return [int(d + p[0] + p[1]) for d, p in zip(shape, paddings)]


def squeeze(rng):
    shape = nhwc(rng)
    return Spec("SQUEEZE", [Operand([shape[0], shape[1], 1, shape[3]])], {"squeeze_dims": [2]},
                output_shapes=[[shape[0], shape[1], shape[3]]])


def pad_v2(rng):
    paddings = np.array([[0, 0], [1, 0], [0, 2], [1, 2]], np.int32)
    shape = nhwc(rng)
    return Spec("PADV2", [Operand(shape), Operand([4, 2], np.int32, paddings),
                          Operand([], const=np.array(rng.uniform(-2, 2), np.float32))], {},
                output_shapes=[padded(shape, paddings)])


def mirror_pad(rng):
    shape = nhwc(rng, channels=5)
    paddings = np.array([[0, 0], [0, min(1, shape[1] - 1)], [min(1, shape[2] - 1), 0],
                         [1, 2]], np.int32)
    return Spec("MIRROR_PAD", [Operand(shape), Operand([4, 2], np.int32, paddings)],
                {"mode": str(rng.choice(["REFLECT", "SYMMETRIC"]))},
                output_shapes=[padded(shape, paddings)])


def slice_op(rng):
    shape = nhwc(rng)
    begin = np.array([0, shape[1] // 2, 0, shape[3] // 2], np.int32)
    out = [shape[0], shape[1] - begin[1], 1, shape[3] - begin[3]]
    return Spec("SLICE", [Operand(shape), Operand([4], np.int32, begin),
                          Operand([4], np.int32, np.array([-1, -1, 1, -1], np.int32))], {},
                output_shapes=[[int(d) for d in out]])


def strided_slice(rng):
    shape = nhwc(rng)
    return Spec("STRIDED_SLICE", [
        Operand(shape), Operand([4], np.int32, np.array([0, 0, -1, 1], np.int32)),
        Operand([4], np.int32, np.array([1, 9, 0, 9], np.int32)),
        Operand([4], np.int32, np.array([1, 2, -1, 1], np.int32))],
        {"begin_mask": 0, "end_mask": 6, "shrink_axis_mask": 0},
        output_shapes=[[1, (shape[1] + 1) // 2, shape[2], max(0, shape[3] - 1)]])


def split(rng):
    shape = nhwc(rng, channels=int(rng.choice([2, 4, 8])))
    half = shape[:3] + [shape[3] // 2]
    return Spec("SPLIT", [Operand([], np.int32, np.array(3, np.int32)), Operand(shape)],
                {"num_splits": 2}, outputs=2, output_shapes=[half, half])


def block_op(op):
    def make(rng):
        shape = nhwc(rng)
        deep = shape[:1] + [shape[1], shape[2], 4 * shape[3]]
        wide = shape[:1] + [2 * shape[1], 2 * shape[2], shape[3]]
        if op == "DEPTH_TO_SPACE":
            return Spec(op, [Operand(deep)], {"block_size": 2}, output_shapes=[wide])
        return Spec(op, [Operand(wide)], {"block_size": 2}, output_shapes=[deep])
    return make


def transpose_conv_bias(rng):
    """MediaPipe's Convolution2DTransposeBias (selfie segmentation's last
    layer): custom options are the raw {padding, stride_w, stride_h} ints;
    the CPU reference is the same model with TRANSPOSE_CONV v3."""
    shape = nhwc(rng, max_hw=6)
    cout, k, stride = int(rng.choice([1, 2, 5])), int(rng.choice([2, 3, 4])), \
        int(rng.choice([1, 2]))
    padding = int(rng.choice([1, 2]))  # SAME, VALID
    if padding == 1:
        out = [1, shape[1] * stride, shape[2] * stride, cout]
    else:
        out = [1, (shape[1] - 1) * stride + k, (shape[2] - 1) * stride + k, cout]
    return Spec("CUSTOM", [Operand(shape),
                           Operand([cout, k, k, shape[3]], const=floats(rng, [cout, k, k, shape[3]])),
                           Operand([cout], const=floats(rng, [cout]))], {},
                output_shapes=[out], custom_code="Convolution2DTransposeBias",
                custom_options=struct.pack("<3i", padding, stride, stride))


BASE_MODELS = {
    "ADD": binary("ADD"), "SUB": binary("SUB"), "MUL": binary("MUL"),
    "RELU": unary("RELU"), "RELU6": unary("RELU6"), "LOGISTIC": unary("LOGISTIC"),
    "TANH": unary("TANH"), "HARD_SWISH": unary("HARD_SWISH"),
    "CONV_2D": conv2d, "DEPTHWISE_CONV_2D": depthwise,
    "AVERAGE_POOL_2D": pool("AVERAGE_POOL_2D"), "MAX_POOL_2D": pool("MAX_POOL_2D"),
    "CONCATENATION": concatenation, "SOFTMAX": softmax, "MEAN": mean, "RESHAPE": reshape,
    "PAD": pad, "RESIZE_BILINEAR": resize("RESIZE_BILINEAR"),
    "RESIZE_NEAREST_NEIGHBOR": resize("RESIZE_NEAREST_NEIGHBOR"),
    "FULLY_CONNECTED": fully_connected, "TRANSPOSE": transpose,
    "SQUEEZE": squeeze, "PADV2": pad_v2, "MIRROR_PAD": mirror_pad, "SLICE": slice_op,
    "STRIDED_SLICE": strided_slice, "SPLIT": split,
    "DEPTH_TO_SPACE": block_op("DEPTH_TO_SPACE"), "SPACE_TO_DEPTH": block_op("SPACE_TO_DEPTH"),
    "Convolution2DTransposeBias": transpose_conv_bias,
}


def cpu_model(spec: Spec, model: bytes) -> bytes | None:
    """The model as the CPU reference runs it, where LiteRT has no kernel for
    the op (MediaPipe's custom ops); None: the model itself."""
    if spec.custom_code != "Convolution2DTransposeBias":
        return None
    parsed = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(model, 0))
    # The raw options struct may be cut short or hold any value: the
    # rewrite reads what MediaPipe's CPU kernel reads (three int32).
    for op in parsed.subgraphs[0].operators:
        if op.customOptions is not None and len(op.customOptions) < 12:
            return model  # MediaPipe's kernel would read past the end: no reference
    if not model_catalog._replace_transpose_conv_bias(parsed):
        return None
    builder = flatbuffers.Builder(len(model) + 1024)
    builder.Finish(parsed.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())

FP16_SHARE = 0.2
# Relative L2 of an fp16-stored run vs the CPU's fp32: the op tests' bound
# (design.md) with a margin for the fuzzer's unscaled weights.
FP16_TOLERANCE = 1e-2

def landed_ops() -> set:
    """Ops whose unmutated base model the delegate runs (kernels that landed)."""
    landed = set()
    for op, make in BASE_MODELS.items():
        spec = make(np.random.default_rng(0))
        model = spec.build()
        result = check_model(model, cpu_model=cpu_model(spec, model))
        if result["outcome"] == "agree":
            landed.add(op)
    return landed


def make_case(seed: int, index: int, landed: set):
    """(description, model bytes, CPU reference model bytes or None) of case
    `index`; deterministic per seed."""
    rng = np.random.default_rng([seed, index])
    ops = sorted(BASE_MODELS)
    preferred = sorted(landed) or ops
    op = str(rng.choice(preferred if rng.random() < 0.85 else ops))
    spec = BASE_MODELS[op](rng)
    changes = []
    if rng.random() >= 0.15:  # 15% stay valid, so "agree" is exercised too
        for _ in range(int(rng.integers(1, 3))):
            changes.append(pick_mutation(rng)(spec, rng))
    description = spec.describe() + (" | " + "; ".join(changes) if changes else " | unmutated")
    try:
        model = spec.build()
        return description, model, cpu_model(spec, model)
    except (ValueError, TypeError, OverflowError, IndexError, struct.error) as error:
        return description + f" | unbuildable: {error}", None, None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="first case index")
    parser.add_argument("--only", type=int, default=None, help="run only this case index")
    parser.add_argument("--cpu-only", action="store_true",
                        help="run the cases on the CPU only (does TFLite itself crash?)")
    parser.add_argument("--landed", default=None,
                        help="comma-separated ops to treat as delegated (replays use the "
                             "list a run printed, so case numbers pick the same models)")
    parser.add_argument("--budget-s", type=float, default=170.0,
                        help="stop starting new cases after this many seconds")
    parser.add_argument("--json", action="store_true", help="one JSON line per case")
    args = parser.parse_args(argv)

    start = time.monotonic()
    landed = set(filter(None, args.landed.split(","))) if args.landed is not None \
        else landed_ops()
    if args.json:
        print(json.dumps({"landed": sorted(landed)}), flush=True)
    indices = [args.only] if args.only is not None else range(args.start, args.cases)
    counts, failures, ran, unbuildable = {}, [], 0, 0
    for index in indices:
        if time.monotonic() - start > args.budget_s:
            break
        if args.json:
            # Before building: the build probes the model on TFLite's CPU
            # kernels, which may crash on it.
            print(json.dumps({"start": index}), flush=True)
        description, model, reference = make_case(args.seed, index, landed)
        if model is None:
            unbuildable += 1
            if args.json:
                print(json.dumps({"case": index, "outcome": "unbuildable",
                                  "description": description, "detail": "", "delegated": 0}),
                      flush=True)
            continue
        if args.cpu_only:
            interp = interpreter(reference or model)
            interp.allocate_tensors()
            interp.invoke()
            continue
        # A quarter of the cases read tensors through SSBOs instead of
        # texture buffers: the other storage path must be as robust.
        storage = "ssbo" if np.random.default_rng([args.seed, index, 7]).random() < 0.25 \
            else "auto"
        options = {"storage": storage}
        # A share of the cases store tensors as float16 (forced on llvmpipe,
        # where the delegate would keep fp32), judged at fp16 tolerance.
        fp16 = np.random.default_rng([args.seed, index, 11]).random() < FP16_SHARE
        if fp16:
            options.update(precision_loss_allowed="true",
                           inference_priority1="min_memory_usage")
        result = check_model(model, seed=index, options=options, cpu_model=reference,
                             tolerance=FP16_TOLERANCE if fp16 else 1e-5)
        ran += 1
        counts[result["outcome"]] = counts.get(result["outcome"], 0) + 1
        if result["outcome"] not in ACCEPTABLE:
            failures.append((index, description, result))
        if args.json:
            print(json.dumps({"case": index, "fp16": fp16,
                              "description": f"{description} | storage={storage}"
                                             f"{' | fp16' if fp16 else ''}",
                              **result}), flush=True)
    elapsed = time.monotonic() - start
    summary = {"summary": True, "seed": args.seed, "ran": ran, "unbuildable": unbuildable,
               "outcomes": counts, "landed_ops": len(landed), "seconds": round(elapsed, 1)}
    print(json.dumps(summary) if args.json else
          f"fuzz: seed {args.seed}: {ran} cases in {elapsed:.0f} s ({len(landed)} ops "
          f"delegated in base form, {unbuildable} unbuildable mutations skipped): {counts}")
    for index, description, result in failures:
        print(f"FAILED case {index}: {description}\n    {result['outcome']}: {result['detail']}",
              file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
