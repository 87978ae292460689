"""The real models and stand-ins the project runs end to end: where each one
is, what photograph it gets, in which value range, and how its outputs are
judged (classification, segmentation, detection, pose, image).

Shared by tools/run_model.py, tools/segment_demo.py and tests/python/test_models.py.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
from tflite_runtimes import schema

import build_standins
from sample_images import load_rgb, model_input
from tflite_builder import FILE_IDENTIFIER, builtin_op_code, make_options, options_table_for

import flatbuffers

REPO = Path(__file__).resolve().parents[1]


def _shared_models() -> Path:
    """The shared models: $TFLITE_GLES_MODELS, else shared/models inside the
    checkout (how it travels to the GPU machine), else ../shared/models
    beside it (developer machines and CI)."""
    if os.environ.get("TFLITE_GLES_MODELS"):
        return Path(os.environ["TFLITE_GLES_MODELS"])
    inside = REPO / "shared" / "models"
    return inside if inside.is_dir() else REPO.parent / "shared" / "models"


SHARED_MODELS = _shared_models()
STANDIN_DIR = REPO / "build" / "models"


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    name: str
    # "classification" (probabilities), "segmentation_argmax" (class logits
    # per pixel), "segmentation_threshold" (probability per pixel),
    # "detection" (box regressors, score logits), "ssd" (post-processed
    # detections), "pose" (heatmap logits, offsets, displacements), "image".
    kind: str
    image: str                      # a sample_images photograph
    value_range: tuple[float, float]
    standin: bool = False
    # Node count that stays on the CPU by design (SSD's post-process op).
    cpu_nodes: int = 0
    # A quantized model (uint8 input and output): judged by
    # tests/python/test_quantized_models.py, not by the float criteria.
    quantized: bool = False
    # Tested in fp32 under the native profile only: a model whose fp16 and
    # ES-minimum runs cost tens of seconds each on llvmpipe (CI's budget).
    fp32_native_only: bool = False

    @property
    def path(self) -> Path:
        if self.standin:
            return build_standins.build(STANDIN_DIR, [self.name])[self.name]
        path = SHARED_MODELS / f"{self.name}.tflite"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing; see {SHARED_MODELS}/README.md")
        return path


CATALOG = {spec.name: spec for spec in [
    ModelSpec("mobilenet_v1_1.0_224", "classification", "chelsea", (-1, 1), standin=True),
    ModelSpec("mobilenet_ssd_v2_300", "ssd", "motorcycle_left", (-1, 1), standin=True,
              cpu_nodes=1),
    ModelSpec("posenet_mobilenet_v1_075_257", "pose", "astronaut", (-1, 1), standin=True),
    # MediaPipe's custom ops: its CPU reference is the builtin twin computing
    # the same function (build_standins.CPU_REFERENCES); four-channel input,
    # so seeded uniform values, not a photograph.
    # fp16 (mask agreement) and the ES-minimum profile passed once on llvmpipe
    # (80 s and 48 s on a loaded box); bench/device_hair.sh checks fp16 too.
    ModelSpec("hair_segmentation_512", "segmentation_argmax", "astronaut", (-1, 1),
              standin=True, fp32_native_only=True),
    ModelSpec("mobilenet_v1_0.25_224", "classification", "chelsea", (-1, 1)),
    ModelSpec("mobilenet_v1_0.25_224_quant", "classification", "chelsea", (-1, 1),
              quantized=True),
    ModelSpec("deeplabv3_257_mv_gpu", "segmentation_argmax", "astronaut", (-1, 1)),
    ModelSpec("selfie_segmentation", "segmentation_threshold", "astronaut", (0, 1)),
    ModelSpec("face_detection_short_range", "detection", "astronaut", (-1, 1)),
    ModelSpec("palm_detection_full", "detection", "astronaut", (0, 1)),
    ModelSpec("style_transfer_f16_384", "image", "coffee", (0, 1)),
]}
DEFAULT_MODEL = "mobilenet_v1_1.0_224"


def model_inputs(spec: ModelSpec, input_details, seed: int = 0) -> list[np.ndarray]:
    """The photograph for each 1xHxWx3 input; seeded uniform values without
    zeros for any other input (style transfer's 100-wide style vector)."""
    rng = np.random.default_rng(seed)
    inputs = []
    for detail in input_details:
        shape = [int(d) for d in detail["shape"]]
        if len(shape) == 4 and shape[3] == 3 and shape[1] > 1:
            if np.dtype(detail["dtype"]) == np.uint8:  # a quantized model: the pixels
                inputs.append(load_rgb(spec.image, shape[1], shape[2])[np.newaxis])
            else:
                inputs.append(model_input(spec.image, shape, spec.value_range))
        else:
            values = rng.uniform(-1, 1, shape).astype(np.float32)
            values[np.abs(values) < 1e-3] = 1e-3
            inputs.append(values)
    return inputs


def cpu_reference_model(spec: ModelSpec) -> bytes:
    """The model as LiteRT's CPU kernels can run it.

    selfie_segmentation ends in MediaPipe's custom op
    Convolution2DTransposeBias, which LiteRT's CPU op set lacks; it is a
    TRANSPOSE_CONV with a bias input, so the reference replaces it with the
    builtin (version 3 takes the bias) and leaves the model otherwise as is.
    A stand-in with MediaPipe's argmax pooling has a twin in builtins.
    """
    twin = build_standins.CPU_REFERENCES.get(spec.name) if spec.standin else None
    if twin is not None:
        return build_standins.build(STANDIN_DIR, [twin])[twin].read_bytes()
    data = spec.path.read_bytes()
    model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(data, 0))
    replaced = _replace_transpose_conv_bias(model)
    if not replaced:
        return data
    builder = flatbuffers.Builder(len(data) + 1024)
    builder.Finish(model.Pack(builder), file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def _replace_transpose_conv_bias(model) -> int:
    """Rewrites every Convolution2DTransposeBias node of model (object API)
    into TRANSPOSE_CONV v3; returns how many it rewrote."""
    codes = model.operatorCodes
    custom = [i for i, c in enumerate(codes)
              if c.customCode and bytes(c.customCode) == b"Convolution2DTransposeBias"]
    if not custom:
        return 0
    code = builtin_op_code("TRANSPOSE_CONV")
    codes.append(schema.OperatorCodeT(deprecatedBuiltinCode=min(code, 127),
                                      builtinCode=code, version=3))
    transpose_conv = len(codes) - 1
    graph = model.subgraphs[0]
    count = 0
    for op in graph.operators:
        if op.opcodeIndex not in custom:
            continue
        # Custom options: the raw TfLiteTransposeConvParams struct
        # {padding (1 = SAME, 2 = VALID), stride_width, stride_height}.
        padding, stride_w, stride_h = np.frombuffer(bytes(op.customOptions), np.int32)[:3]
        data, weights, bias = op.inputs
        output = graph.tensors[op.outputs[0]]
        model.buffers.append(schema.BufferT(
            data=np.array(output.shape, np.int32).view(np.uint8)))
        graph.tensors.append(schema.TensorT(
            shape=[len(output.shape)], type=schema.TensorType.INT32,
            buffer=len(model.buffers) - 1, name=b"transpose_conv_output_shape"))
        op.opcodeIndex = transpose_conv
        op.inputs = [len(graph.tensors) - 1, weights, data, bias]
        op.customOptions = None
        field, union_code, _ = options_table_for("TRANSPOSE_CONV")
        setattr(op, field, make_options("TRANSPOSE_CONV", {
            "padding": "SAME" if padding == 1 else "VALID",
            "stride_w": int(stride_w), "stride_h": int(stride_h)}))
        setattr(op, field + "Type", union_code)
        count += 1
    return count


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, np.float64)))
