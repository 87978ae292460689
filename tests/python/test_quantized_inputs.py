"""uint8/int8 partition inputs cross to the GPU as their raw bytes, 4 per
uint, and the GPU dequantizes them (float(q - zero_point) * scale, as
TFLite's DEQUANTIZE): in the upload conversion (layout_convert.comp
STAGED_BYTES), or in the first convolution's read where the upload is fused
into it (conv2d.comp BHWC_BYTES_INPUT, TFLITE_GLES_FUSE_UPLOAD=1, NVIDIA's
default). New ways to be wrong: a byte taken from the wrong word or lane
(element counts that are not multiples of 4, pixels of 3 and 5 channels that
straddle words), int8's sign, a zero point far from 0 and 128, the scale's
bits, the minimum profile's SSBO staging reads.

Inputs are large enough to be staged (over the 64 KB of a direct upload,
which the CPU still dequantizes). A convolution that passes its input
through (one tap of 1 per channel, output params = input params) shows the
dequantized input itself: TFLite's integer kernel returns the input, so the
delegate must return it element for element (fp32 and fp16: |q - zp| <= 255
survives a half). A MobileNet-like first layer with random weights is held
to the quantized tests' bound (99 % within 1 step, none beyond 2).
"""

from __future__ import annotations

import numpy as np
import pytest

import gles_testing as gt
from quantized_cases import _conv_like, step_counts
from tflite_builder import ModelBuilder, QuantParams

# (type, shape, scale, zero point): element counts 26481 (uint8) and 27063
# (int8) leave 1 and 3 bytes in the last word; 5 channels straddle slices.
CASES = {
    "uint8-c3": (np.uint8, [1, 97, 91, 3], 0.0291, 201),
    "int8-c3": (np.int8, [1, 97, 93, 3], 0.0137, -91),
    "uint8-c5": (np.uint8, [1, 63, 67, 5], 0.00617, 37),
    "int8-c5": (np.int8, [1, 65, 67, 5], 0.0419, 77),
}
PRECISIONS = {"fp32": {}, "fp16": {"precision_loss_allowed": "true"}}


def passthrough_model(dtype, shape, scale, zero_point) -> bytes:
    """CONV_2D 3x3 SAME whose centre tap copies channel k to channel k."""
    c = shape[3]
    grid = QuantParams(scale, zero_point)
    b = ModelBuilder()
    x = b.add_input(shape, dtype=dtype, quant=grid)
    if np.dtype(dtype) == np.int8:
        weights = np.zeros([c, 3, 3, c], np.int8)
        for k in range(c):
            weights[k, 1, 1, k] = 1
        w = b.add_const(weights, quant=QuantParams([1.0] * c, [0] * c, 0))
        bias = b.add_const(np.zeros(c, np.int32), quant=QuantParams([scale] * c, [0] * c, 0))
        version = 3
    else:  # uint8 weights: per tensor, asymmetric (zero point 128: 129 is 1.0)
        weights = np.full([c, 3, 3, c], 128, np.uint8)
        for k in range(c):
            weights[k, 1, 1, k] = 129
        w = b.add_const(weights, quant=QuantParams(1.0, 128))
        bias = b.add_const(np.zeros(c, np.int32), quant=QuantParams(scale, 0))
        version = 1
    y = b.add_tensor(shape, dtype=dtype, quant=grid)
    b.add_op("CONV_2D", [x, w, bias], [y], {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                                             "fused_activation_function": "NONE"},
             version=version)
    return b.build()


def random_input(dtype, shape, seed):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, shape).astype(dtype)


@pytest.mark.parametrize("precision", list(PRECISIONS))
@pytest.mark.parametrize("case", list(CASES))
def test_staged_bytes_are_dequantized_exactly(monkeypatch, case, precision):
    dtype, shape, scale, zero_point = CASES[case]
    model = passthrough_model(dtype, shape, scale, zero_point)
    x = random_input(dtype, shape, sum(map(ord, case)))
    cpu, (plain, plain_stats), (fused, fused_stats) = gt.run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_FUSE_UPLOAD", model, [x], PRECISIONS[precision])
    np.testing.assert_array_equal(cpu[0], x)  # the reference passes it through
    for outputs, stats in ((plain, plain_stats), (fused, fused_stats)):
        assert stats["nodes_delegated"] == stats["nodes_total"] == 1, stats
        assert outputs[0].dtype == np.dtype(dtype)
        np.testing.assert_array_equal(outputs[0], cpu[0])
    # 3 channels: one slice, so the convolution reads the bytes itself.
    expected_saved = 1 if shape[3] <= 4 else 0
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - expected_saved


@pytest.mark.parametrize("fuse", ["0", "1"])
def test_staged_bytes_at_the_gles31_minimum(monkeypatch, fuse):
    """SSBO staging reads (a uint array) and 4 buffers per dispatch."""
    monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", fuse)
    for case in ("uint8-c3", "int8-c5"):
        dtype, shape, scale, zero_point = CASES[case]
        model = passthrough_model(dtype, shape, scale, zero_point)
        x = random_input(dtype, shape, 7)
        gpu, stats = gt.run_gpu(model, [x], {"device_profile": "gles31-minimum"})
        assert stats["nodes_delegated"] == 1, stats
        np.testing.assert_array_equal(gpu[0], x)


@pytest.mark.parametrize("precision", list(PRECISIONS))
@pytest.mark.parametrize("type_name", ["uint8", "int8"])
def test_first_layer_matches_tflite(monkeypatch, type_name, precision):
    """A MobileNet-like first layer (3x3 stride 2, 3 -> 8 channels, ReLU6)
    on an image of odd size, random weights, the quantized cases' awkward
    params; with and without the fused read."""
    dtype = np.uint8 if type_name == "uint8" else np.int8
    shape = [1, 97, 91, 3]
    spec = _conv_like("CONV_2D", dtype, shape, [8, 3, 3, 3], 0, 8,
                      {"padding": "SAME", "stride_w": 2, "stride_h": 2,
                       "fused_activation_function": "RELU6"}, 3 if type_name == "int8" else 1)
    model = spec.quantized_model()
    x = random_input(dtype, shape, 3)
    cpu, (plain, plain_stats), (fused, fused_stats) = gt.run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_FUSE_UPLOAD", model, [x], PRECISIONS[precision])
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1
    for outputs, stats in ((plain, plain_stats), (fused, fused_stats)):
        assert stats["nodes_delegated"] == stats["nodes_total"] == 1, stats
        counts = step_counts(outputs[0], cpu[0], None)
        within_one = (counts["0"] + counts["1"]) / counts["total"]
        assert within_one >= 0.99 and counts["more"] == 0, counts
