"""The device profiles (docs/device_profiles.md): the delegate planned for a
GPU at the OpenGL ES 3.1 minimums, run on llvmpipe.

Every float model of ../shared/models and every stand-in must still be
delegated whole (one partition; SSD: all but its post-process) and meet
test_models.py's fp32 criterion (every output within relative L2 1e-4 of
LiteRT's CPU kernels) with device_profile=gles31-minimum: 4 SSBOs per shader,
65536-texel texture buffers, 128 invocations per workgroup. The profile is
checked to be in force (the environment variable overrides the option, a bad
name is refused), so these tests cannot pass by running the native limits.
fp16 storage under both weak profiles: one shared model each, by the fp16
criteria of test_models.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import gles_testing as gt
import model_catalog as mc
import test_models as tm

MINIMUM = {"device_profile": "gles31-minimum"}


def profile_result(name: str, options: dict) -> dict:
    spec = mc.CATALOG[name]
    delegate = gt.make_delegate(options)
    interp = gt.interpreter(str(spec.path), delegate)
    result = tm._run(spec, interp)
    result["stats"] = gt.stats(delegate)
    del interp
    return result


@pytest.mark.parametrize("name", tm.OTHER_PATH_NAMES)
def test_model_under_the_gles31_minimum_matches_cpu(name):
    spec = mc.CATALOG[name]
    cpu, gpu = tm.cpu_result(name), profile_result(name, MINIMUM)
    tm.assert_same_shapes_and_finite(gpu["outputs"], cpu["outputs"])
    for i, (g, c) in enumerate(zip(gpu["outputs"], cpu["outputs"])):
        tm.assert_relative(g, c, tm.FP32_MODEL_TOLERANCE, f"{name} output {i}")
    for tensor in gpu["raw"]:
        tm.assert_relative(gpu["raw"][tensor], cpu["raw"][tensor],
                           tm.FP32_MODEL_TOLERANCE, tensor)
    tm.assert_delegated(spec, gpu["stats"])


# fp16 under the weak profiles (issue 17, part 1): half storage forced
# (gles_testing.make_delegate asks for min_memory_usage, so llvmpipe, where
# fp32 is the default, really stores halves), the model delegated whole and
# judged by test_models.py's fp16 criteria. One shared model per profile
# keeps CI short (every shared model under both profiles passed once, 12 of
# 12, docs/device_profiles.md): deeplabv3 under the ES minimum (the largest
# shared model, the most dispatches the profile adds: every tensor in
# half-float SSBOs) and MobileNet v1 0.25 under the Mali-G52 values.
FP16_CASES = [("deeplabv3_257_mv_gpu", "gles31-minimum"),
              ("mobilenet_v1_0.25_224", "mali-g52")]


@pytest.mark.parametrize("name,profile", FP16_CASES, ids=[f"{n}-{p}" for n, p in FP16_CASES])
def test_shared_model_in_fp16_under_the_profile_agrees_with_cpu(name, profile):
    spec = mc.CATALOG[name]
    cpu = tm.cpu_result(name)
    gpu = profile_result(name, {"device_profile": profile, "precision_loss_allowed": True})
    tm.assert_fp16_agrees(spec, gpu, cpu)
    # Halves really were stored: fp32 storage meets 1e-4 on every model
    # (the tests above), fp16 storage does not come that close.
    error = gt.relative_error(gpu["outputs"][0], cpu["outputs"][0])
    assert error > tm.FP32_MODEL_TOLERANCE, f"{name}: error {error:.3g}, not fp16 storage"


def test_the_minimum_profile_changes_the_plan_and_the_variable_overrides_the_option(
        monkeypatch):
    """SSD's residual ADDs fold into their convolution natively (5 buffers);
    at 4 SSBOs per shader they cannot, so the minimum profile runs more
    dispatches; the environment variable beats the option."""
    name = "mobilenet_ssd_v2_300"
    native = profile_result(name, {})["stats"]
    monkeypatch.setenv("TFLITE_GLES_DEVICE_PROFILE", "gles31-minimum")
    minimum = profile_result(name, {"device_profile": "native"})["stats"]
    assert minimum["dispatches"] > native["dispatches"], (native, minimum)
    assert minimum["nodes_delegated"] == native["nodes_delegated"]


def test_a_bad_profile_name_is_refused(monkeypatch):
    with pytest.raises(ValueError, match="device_profile"):
        gt.make_delegate({"device_profile": "weakest"})
    monkeypatch.setenv("TFLITE_GLES_DEVICE_PROFILE", "weakest")
    spec = mc.CATALOG["mobilenet_v1_0.25_224"]
    with pytest.raises((RuntimeError, ValueError)):
        gt.interpreter(str(spec.path), gt.make_delegate({}))


# Shapes at and past the minimum limits: a 1x256x256x8 tensor is 131072
# texels (twice a 65536-texel texture buffer); a concat whose output slices
# take channels from 4 inputs needs 5 buffers in one dispatch; a mean over
# 4096 positions wants workgroups past 128 invocations.
NEAR_LIMITS = [
    ("ADD", [[1, 256, 256, 8], [1, 256, 256, 8]], {}),
    ("CONCATENATION", [[1, 8, 8, 1]] * 6 + [[1, 8, 8, 3]], {"axis": 3}),
    ("MEAN", [[1, 64, 64, 12]], "mean"),
]


@pytest.mark.parametrize("op,shapes,options", NEAR_LIMITS, ids=[c[0] for c in NEAR_LIMITS])
def test_shapes_past_the_minimum_limits_run_on_the_gpu(op, shapes, options):
    rng = np.random.default_rng(7)
    if options == "mean":
        model = gt.single_op_model(op, shapes, {"keep_dims": True},
                                   consts={1: np.array([1, 2], np.int32)})
    else:
        model = gt.single_op_model(op, shapes, options)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    cpu, gpu, stats = gt.run_cpu_and_gpu(model, inputs, MINIMUM)
    assert stats["nodes_delegated"] == stats["nodes_total"] == 1, stats
    for g, c in zip(gpu, cpu):
        assert gt.relative_error(g, c) <= 1e-5, f"{op}: {gt.relative_error(g, c):.3g}"
