"""Option egl_device: which GPU of the EGL device platform runs a delegate,
by index or by DRM device file; a name that matches no device is refused
with the list of devices, never silently replaced by another GPU."""

from __future__ import annotations

import numpy as np
import pytest

import gles_testing as gt
import model_catalog as mc

NAME = "mobilenet_v1_0.25_224"


def run(options: dict):
    spec = mc.CATALOG[NAME]
    delegate = gt.make_delegate(options)
    interp = gt.interpreter(str(spec.path), delegate)
    outputs = gt.invoke(interp, mc.model_inputs(spec, interp.get_input_details()))
    return outputs, gt.stats(delegate)


def test_device_zero_by_index_runs_on_the_device_platform_and_matches_the_default():
    default_outputs, _ = run({})
    outputs, stats = run({"egl_device": "0"})
    assert "EGL device platform (device 0 of" in stats["egl_display"], stats["egl_display"]
    np.testing.assert_allclose(outputs[0], default_outputs[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("selector", ["99", "/dev/dri/no-such-node"])
def test_a_device_that_does_not_exist_is_refused(selector):
    with pytest.raises((RuntimeError, ValueError)):
        run({"egl_device": selector})


def test_a_device_with_another_platform_is_refused():
    with pytest.raises((RuntimeError, ValueError)):
        run({"egl_device": "0", "egl_platform": "surfaceless"})
