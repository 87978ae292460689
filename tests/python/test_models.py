"""Real models and architecture stand-ins end to end, through the delegate in
the real LiteRT interpreter, on real photographs, against LiteRT's CPU kernels.

Every float model of ../shared/models (not the uint8 one) and every stand-in
of tools/build_standins.py must be delegated whole (one partition; SSD: all
but its TFLite_Detection_PostProcess, which stays on the CPU by design), and:
  fp32: every output within relative L2 1e-4 of the CPU;
  fp16: classification: top-1 identical, top-5 the same set;
        segmentation: masks (argmax, or threshold 0.5) agree on >= 99.5% of pixels;
        detection: scores (sigmoid of the score logits) within 1e-2, boxes
        within relative L2 1e-2; pose: keypoint scores within 1e-2, offsets
        and displacements within relative L2 1e-2; images: relative L2 1e-2.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import gles_testing as gt
import model_catalog as mc

FP32_MODEL_TOLERANCE = 1e-4
FP16_SCORE_TOLERANCE = 1e-2       # absolute, on probabilities
FP16_REGRESSION_TOLERANCE = 1e-2  # relative L2, on boxes, offsets, images
MASK_AGREEMENT = 0.995

# SSD's post-process inputs: the delegated partition's outputs, read back
# from the interpreter so that fp16 is judged before NMS picks boxes.
SSD_RAW = ("raw_outputs/box_encodings", "raw_outputs/class_predictions")

# Quantized models have their own criteria (test_quantized_models.py).
NAMES = [name for name, spec in mc.CATALOG.items() if not spec.quantized]
# fp16 and the device profiles: all of them but the slowest (model_catalog.py).
OTHER_PATH_NAMES = [name for name in NAMES if not mc.CATALOG[name].fp32_native_only]


def _run(spec, interp) -> dict:
    inputs = mc.model_inputs(spec, interp.get_input_details())
    outputs = gt.invoke(interp, inputs)
    raw = {}
    if spec.kind == "ssd":
        by_name = {d["name"]: d["index"] for d in interp.get_tensor_details()}
        raw = {name: interp.get_tensor(by_name[name]).copy() for name in SSD_RAW}
    return {"outputs": outputs, "raw": raw}


@functools.lru_cache(maxsize=None)
def cpu_result(name: str) -> dict:
    spec = mc.CATALOG[name]
    return _run(spec, gt.interpreter(mc.cpu_reference_model(spec)))


def gpu_result(name: str, fp16: bool, options: dict | None = None) -> dict:
    spec = mc.CATALOG[name]
    delegate = gt.make_delegate({"precision_loss_allowed": fp16, **(options or {})})
    interp = gt.interpreter(str(spec.path), delegate)
    result = _run(spec, interp)
    result["stats"] = gt.stats(delegate)
    del interp
    return result


def assert_delegated(spec, stats):
    expected = stats["nodes_total"] - spec.cpu_nodes
    assert stats["nodes_delegated"] == expected and stats["partitions"] == 1, (
        f"{spec.name}: {stats['nodes_delegated']} of {stats['nodes_total']} nodes in "
        f"{stats['partitions']} partitions; expected {expected} in 1")


def assert_same_shapes_and_finite(gpu_outputs, cpu_outputs):
    assert len(gpu_outputs) == len(cpu_outputs)
    for i, (gpu, cpu) in enumerate(zip(gpu_outputs, cpu_outputs)):
        assert gpu.shape == cpu.shape, f"output {i}: shape {gpu.shape} != {cpu.shape}"
        bad = ~np.isfinite(gpu) & np.isfinite(cpu)
        assert not bad.any(), f"output {i}: {bad.sum()} NaN/Inf the CPU does not produce"


def assert_relative(gpu, cpu, bound, what):
    error = gt.relative_error(gpu, cpu)
    assert error <= bound, f"{what}: relative L2 error {error:.3g} > {bound:.3g}"


def assert_scores(gpu_logits_or_probs, cpu, what, logits=True):
    to_prob = mc.sigmoid if logits else (lambda x: np.asarray(x, np.float64))
    error = float(np.max(np.abs(to_prob(gpu_logits_or_probs) - to_prob(cpu))))
    assert error <= FP16_SCORE_TOLERANCE, (
        f"{what}: score error {error:.3g} > {FP16_SCORE_TOLERANCE}")


def assert_mask_agreement(gpu_mask, cpu_mask, what):
    agreement = float(np.mean(gpu_mask == cpu_mask))
    assert agreement >= MASK_AGREEMENT, (
        f"{what}: masks agree on {agreement:.4%} of pixels < {MASK_AGREEMENT:.1%}")


# Numbers are checked before delegation so that a model some of whose ops
# are not yet on the GPU still shows whether the delegated part is right.
@pytest.mark.parametrize("name", NAMES)
def test_model_fp32_matches_cpu(name):
    assert_fp32_matches(name, gpu_result(name, fp16=False))


def assert_fp32_matches(name, gpu):
    """fp32's criterion (also test_rgba_textures.py's, under another storage)."""
    spec = mc.CATALOG[name]
    cpu = cpu_result(name)
    assert_same_shapes_and_finite(gpu["outputs"], cpu["outputs"])
    for i, (g, c) in enumerate(zip(gpu["outputs"], cpu["outputs"])):
        assert_relative(g, c, FP32_MODEL_TOLERANCE, f"{name} output {i}")
    for tensor in gpu["raw"]:
        assert_relative(gpu["raw"][tensor], cpu["raw"][tensor], FP32_MODEL_TOLERANCE, tensor)
    assert_delegated(spec, gpu["stats"])


@pytest.mark.parametrize("name", OTHER_PATH_NAMES)
def test_model_fp16_agrees_with_cpu(name):
    spec = mc.CATALOG[name]
    cpu, gpu = cpu_result(name), gpu_result(name, fp16=True)
    assert_fp16_agrees(spec, gpu, cpu)


def assert_fp16_agrees(spec, gpu: dict, cpu: dict):
    """The fp16 criteria of the module docstring, per model kind (also used
    by test_device_profiles.py under the device profiles and
    test_rgba_textures.py under another storage)."""
    name = spec.name
    assert_same_shapes_and_finite(gpu["outputs"], cpu["outputs"])
    g, c = gpu["outputs"], cpu["outputs"]
    if spec.kind == "classification":
        gpu_rank, cpu_rank = np.argsort(-g[0][0]), np.argsort(-c[0][0])
        assert gpu_rank[0] == cpu_rank[0], f"top-1 {gpu_rank[0]} != CPU {cpu_rank[0]}"
        assert set(gpu_rank[:5]) == set(cpu_rank[:5]), (
            f"top-5 {sorted(gpu_rank[:5])} != CPU {sorted(cpu_rank[:5])}")
    elif spec.kind == "segmentation_argmax":
        assert_mask_agreement(g[0].argmax(-1), c[0].argmax(-1), name)
    elif spec.kind == "segmentation_threshold":
        assert_mask_agreement(g[0] > 0.5, c[0] > 0.5, name)
    elif spec.kind == "detection":         # regressors, score logits
        assert_relative(g[0], c[0], FP16_REGRESSION_TOLERANCE, f"{name} boxes")
        assert_scores(g[1], c[1], f"{name} scores")
    elif spec.kind == "ssd":
        boxes, scores = SSD_RAW
        assert_relative(gpu["raw"][boxes], cpu["raw"][boxes], FP16_REGRESSION_TOLERANCE, boxes)
        assert_scores(gpu["raw"][scores], cpu["raw"][scores], scores, logits=False)
        assert_scores(g[2], c[2], f"{name} detection scores", logits=False)
    elif spec.kind == "pose":              # heatmaps, offsets, displacements
        assert_scores(g[0], c[0], f"{name} keypoint scores")
        for i in range(1, len(g)):
            assert_relative(g[i], c[i], FP16_REGRESSION_TOLERANCE, f"{name} output {i}")
    else:
        assert spec.kind == "image", spec.kind
        assert_relative(g[0], c[0], FP16_REGRESSION_TOLERANCE, f"{name} image")
    assert_delegated(spec, gpu["stats"])


def test_real_inputs_give_sensible_cpu_answers():
    """The photographs reach the models as they expect (size, range, RGB
    order): the trained models see what is in them. Guards the image path,
    without which every comparison above could agree on garbage."""
    tabby, tiger_cat, egyptian_cat = 282, 283, 286   # ImageNet labels, 1001-class
    top1 = int(np.argmax(cpu_result("mobilenet_v1_0.25_224")["outputs"][0]))
    assert top1 in (tabby, tiger_cat, egyptian_cat), f"the cat photo is class {top1}"
    person = 15                                      # PASCAL VOC
    labels = cpu_result("deeplabv3_257_mv_gpu")["outputs"][0][0].argmax(-1)
    assert 0.25 < np.mean(labels == person) < 0.75, "the astronaut is not found as a person"
    mask = cpu_result("selfie_segmentation")["outputs"][0]
    assert 0.25 < np.mean(mask > 0.5) < 0.75, "the astronaut is not segmented"
    faces = mc.sigmoid(cpu_result("face_detection_short_range")["outputs"][1])
    assert faces.max() > 0.5, "no face found in the astronaut portrait"


def _op_counts_and_outputs(model: bytes):
    from tflite_runtimes import schema
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    m = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(model, 0))
    graph = m.subgraphs[0]
    counts = {}
    for op in graph.operators:
        code = m.operatorCodes[op.opcodeIndex]
        name = code.customCode.decode() if code.customCode else names[code.builtinCode]
        counts[name] = counts.get(name, 0) + 1
    return counts, [list(graph.tensors[i].shape) for i in graph.outputs]


def test_standins_are_deterministic_and_have_the_originals_layers(tmp_path):
    """Same seed, same bytes; and the op mix and output shapes of the models
    they stand in for (MobileNet v1 1.0 224, COCO SSD MobileNet v2 with its
    1917 anchors, PoseNet at output stride 32, MediaPipe's hair segmentation)."""
    first = mc.build_standins.build(tmp_path / "a")
    second = mc.build_standins.build(tmp_path / "b")
    expected = {
        "mobilenet_v1_1.0_224": (
            {"CONV_2D": 15, "DEPTHWISE_CONV_2D": 13, "AVERAGE_POOL_2D": 1, "RESHAPE": 1,
             "SOFTMAX": 1}, [[1, 1001]]),
        "mobilenet_ssd_v2_300": (
            {"CONV_2D": 55, "DEPTHWISE_CONV_2D": 17, "ADD": 10, "RESHAPE": 12,
             "CONCATENATION": 2, "LOGISTIC": 1, "TFLite_Detection_PostProcess": 1},
            [[1, 10, 4], [1, 10], [1, 10], [1]]),
        "posenet_mobilenet_v1_075_257": (
            {"CONV_2D": 18, "DEPTHWISE_CONV_2D": 13},
            [[1, 9, 9, 17], [1, 9, 9, 34], [1, 9, 9, 32], [1, 9, 9, 32]]),
    }
    # Hair segmentation: 87 convolutions (3 transposed), argmax pooling and
    # unpooling as MediaPipe's custom ops, and its two builtin twins.
    hair = {"CONV_2D": 84, "CONCATENATION": 1, "PRELU": 82, "ADD": 27}
    expected.update({
        "hair_segmentation_512": (
            {**hair, "MaxPoolingWithArgmax2D": 3, "MaxUnpooling2D": 2,
             "Convolution2DTransposeBias": 3}, [[1, 512, 512, 2]]),
        "hair_segmentation_512_builtin": (
            {**hair, "MAX_POOL_2D": 3, "RESIZE_NEAREST_NEIGHBOR": 2, "TRANSPOSE_CONV": 3},
            [[1, 512, 512, 2]]),
        "hair_segmentation_512_exact": (
            {**hair, "MAX_POOL_2D": 3, "RESIZE_NEAREST_NEIGHBOR": 4, "EQUAL": 2, "CAST": 2,
             "MUL": 2, "TRANSPOSE_CONV": 3}, [[1, 512, 512, 2]]),
    })
    assert set(first) == set(expected)
    for name, (ops, outputs) in expected.items():
        data = first[name].read_bytes()
        assert data == second[name].read_bytes(), f"{name} is not deterministic"
        assert _op_counts_and_outputs(data) == (ops, outputs), name
    anchors = mc.build_standins.ssd_anchors([19, 10, 5, 3, 2, 1], [3, 6, 6, 6, 6, 6])
    assert anchors.shape == (1917, 4)
