"""RGBA textures as tensor storage (docs/design.md, "Tensor layout and
storage"; egl/tensor_texture.h): every float model of ../shared/models and
every stand-in, with storage=rgba_texture, must be delegated whole and meet
test_models.py's criteria against LiteRT's CPU kernels, in fp32 (relative L2
1e-4) and in fp16 (top-1/top-5, masks, scores and regressions as there).
fp16 on llvmpipe is taken only where precision loss is allowed *and* fp16
pays, so the fp16 runs ask for memory first (inference_priority1 =
min_memory_usage), as test_models.py's fp16 runs do through the same switch.

The storage is checked to be in force (the INFO line names it), so these
tests cannot pass on buffers; the C++ op tests run under it too (ctest
op_tests_rgba_textures).
"""

from __future__ import annotations

import numpy as np
import pytest

import gles_testing as gt
import model_catalog as mc
import test_models as tm

RGBA = {"storage": "rgba_texture"}

# CI runs a representative share (a classifier, a detector, a segmenter; the
# op tests cover every kernel under this storage): every model twice more
# would add minutes on 2 cores. TFLITE_GLES_RGBA_ALL_MODELS=1 runs them all.
import os
CI_SHARE = ("mobilenet_v1_0.25_224", "face_detection_short_range", "selfie_segmentation")
MODELS = tm.NAMES if os.environ.get("TFLITE_GLES_RGBA_ALL_MODELS") == "1" else [
    n for n in tm.NAMES if n in CI_SHARE]


@pytest.mark.parametrize("name", MODELS)
def test_model_in_rgba_textures_matches_cpu_fp32(name):
    tm.assert_fp32_matches(name, tm.gpu_result(name, fp16=False, options=RGBA))


@pytest.mark.parametrize("name", MODELS)
def test_model_in_rgba_textures_agrees_with_cpu_fp16(name):
    tm.assert_fp16_agrees(mc.CATALOG[name], tm.gpu_result(name, fp16=True, options=RGBA),
                          tm.cpu_result(name))


def test_the_storage_is_in_force_and_the_variable_overrides_the_option(capfd, monkeypatch):
    spec = mc.CATALOG["mobilenet_v1_0.25_224"]
    inputs = mc.model_inputs(spec, gt.interpreter(str(spec.path)).get_input_details())
    cpu = gt.invoke(gt.interpreter(str(spec.path)), inputs)
    gpu = gt.invoke(gt.interpreter(str(spec.path), gt.make_delegate(RGBA)), inputs)
    assert "(fp32, RGBA textures)" in capfd.readouterr().err
    monkeypatch.setenv("TFLITE_GLES_X_STORAGE", "rgba_texture")
    forced = gt.invoke(gt.interpreter(str(spec.path), gt.make_delegate({"storage": "ssbo"})),
                       inputs)
    assert "(fp32, RGBA textures)" in capfd.readouterr().err
    for g, f, c in zip(gpu, forced, cpu):
        tm.assert_relative(g, c, tm.FP32_MODEL_TOLERANCE, "option")
        assert np.array_equal(g, f), "the variable and the option run the same programs"
