"""Quantized models on the GPU: the float view with a quantization simulator
(issue 15), whole models in the real LiteRT interpreter against its CPU
integer kernels, on the real photographs of tools/sample_images.py.

Models (tools/quant_models.py derives the last three from the shared ones):
  uint8:   ../shared/models/mobilenet_v1_0.25_224_quant (TF1, uint8 asymmetric)
  int8:    its TF2 full-integer twin (int8 activations, per-channel int8
           weights, QUANTIZE at the input, DEQUANTIZE at the output)
  dynamic: mobilenet_v1_0.25_224 with int8 per-channel weights and float
           activations, as hybrid ops and as DEQUANTIZE + float ops.

Criteria (issue 15): fully delegated in one partition (fp32 and fp16); per
photograph top-1 identical to the CPU's, top-5 sharing >= 4 classes; the
outputs within 2 quantization steps of the CPU's on >= 99 % of elements.
Dynamic range: fp32 relative L2 <= 1e-4 against the CPU's float kernels with
the same dequantized weights.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import gles_testing as gt
import model_catalog as mc
import quant_models as qm
from sample_images import IMAGES, load_rgb, model_input

IMAGE_NAMES = list(IMAGES)
SIZE = 224
STEP_BOUND = 2          # quantization steps
STEP_AGREEMENT = 0.99   # share of elements within STEP_BOUND
FP32_TOLERANCE = 1e-4


@functools.lru_cache(maxsize=None)
def model_bytes(kind: str) -> bytes:
    uint8 = (mc.SHARED_MODELS / "mobilenet_v1_0.25_224_quant.tflite").read_bytes()
    float_model = (mc.SHARED_MODELS / "mobilenet_v1_0.25_224.tflite").read_bytes()
    return {
        "uint8": lambda: uint8,
        "int8": lambda: qm.int8_full_integer(uint8),
        "dynamic_hybrid": lambda: qm.dynamic_range(float_model, hybrid=True),
        "dynamic_dequantize": lambda: qm.dynamic_range(float_model, hybrid=False),
        "float": lambda: float_model,
    }[kind]()


def image_input(kind: str, image: str) -> np.ndarray:
    if kind == "uint8":
        return load_rgb(image, SIZE, SIZE)[np.newaxis]
    return model_input(image, [1, SIZE, SIZE, 3], (-1.0, 1.0))


@functools.lru_cache(maxsize=None)
def cpu_outputs(kind: str) -> dict:
    interp = gt.interpreter(model_bytes(kind))
    return {image: gt.invoke(interp, [image_input(kind, image)])[0] for image in IMAGE_NAMES}


def gpu_outputs(kind: str, options: dict) -> tuple[dict, dict]:
    delegate = gt.make_delegate(options)
    interp = gt.interpreter(model_bytes(kind), delegate)
    outputs = {image: gt.invoke(interp, [image_input(kind, image)])[0]
               for image in IMAGE_NAMES}
    stats = gt.stats(delegate)
    del interp
    return outputs, stats


def steps_apart(gpu: np.ndarray, cpu: np.ndarray, scale: float) -> np.ndarray:
    """|gpu - cpu| in quantization steps (integers for integer outputs)."""
    if np.issubdtype(cpu.dtype, np.integer):
        return np.abs(gpu.astype(np.int64) - cpu.astype(np.int64))
    return np.rint(np.abs(gpu.astype(np.float64) - cpu.astype(np.float64)) / scale)


def agreement(kind: str, gpu: dict, scale: float) -> dict:
    """Per photograph: top-1 equal, top-5 overlap, step histogram."""
    result = {}
    for image in IMAGE_NAMES:
        c = cpu_outputs(kind)[image].reshape(-1).astype(np.float64)
        g = gpu[image].reshape(-1).astype(np.float64)
        # Stable sort: ties resolve to the lower class index on both sides.
        top_c = np.argsort(-c, kind="stable")[:5]
        top_g = np.argsort(-g, kind="stable")[:5]
        steps = steps_apart(gpu[image].reshape(-1), cpu_outputs(kind)[image].reshape(-1), scale)
        result[image] = {
            "top1": (int(top_g[0]), int(top_c[0])),
            "top5_shared": len(set(top_g) & set(top_c)),
            "within": float(np.mean(steps <= STEP_BOUND)),
            "histogram": {int(k): int(v) for k, v in zip(*np.unique(steps, return_counts=True))},
        }
    return result


def assert_agreement(kind: str, report: dict) -> None:
    for image, r in report.items():
        print(f"{kind} {image}: top-1 GPU/CPU {r['top1']}, top-5 shared {r['top5_shared']}, "
              f"within {STEP_BOUND} steps {r['within']:.4f}, steps {r['histogram']}")
    for image, r in report.items():
        assert r["top1"][0] == r["top1"][1], f"{kind} {image}: top-1 {r['top1']} (GPU, CPU)"
        assert r["top5_shared"] >= 4, f"{kind} {image}: top-5 share {r['top5_shared']} classes"
        assert r["within"] >= STEP_AGREEMENT, (
            f"{kind} {image}: {r['within']:.4f} of elements within {STEP_BOUND} steps; "
            f"histogram {r['histogram']}")


def output_scale(kind: str) -> float:
    """The quantization step of the classifier's output (softmax: 1/256)."""
    return 1.0 / 256.0


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("kind", ["uint8", "int8"])
def test_quantized_mobilenet_is_delegated_whole_and_agrees_with_the_cpu(kind, fp16):
    gpu, stats = gpu_outputs(kind, {"precision_loss_allowed": fp16})
    assert stats["nodes_delegated"] == stats["nodes_total"] and stats["partitions"] == 1, (
        f"{stats['nodes_delegated']} of {stats['nodes_total']} nodes in "
        f"{stats['partitions']} partitions")
    assert_agreement(f"{kind} {'fp16' if fp16 else 'fp32'}", agreement(kind, gpu, output_scale(kind)))


def test_uint8_output_is_quantized_as_tflite_quantize_would():
    """The partition's uint8 output holds integers on the grid of the output
    tensor, every value in [0, 255] (the CPU-side quantization clamps), and
    dequantized it is a probability distribution like the CPU's."""
    gpu, _ = gpu_outputs("uint8", {})
    for image, output in gpu.items():
        assert output.dtype == np.uint8
        total = output.astype(np.float64).sum() / 256.0
        cpu_total = cpu_outputs("uint8")[image].astype(np.float64).sum() / 256.0
        assert abs(total - cpu_total) <= 0.05, f"{image}: sum {total:.3f} vs CPU {cpu_total:.3f}"


def test_dynamic_range_model_matches_the_cpu_float_kernels():
    """int8 weights behind DEQUANTIZE: the CPU runs float ops on exactly the
    dequantized weights, so fp32 on the GPU must match to 1e-4."""
    gpu, stats = gpu_outputs("dynamic_dequantize", {})
    assert stats["nodes_delegated"] == stats["nodes_total"] and stats["partitions"] == 1
    for image in IMAGE_NAMES:
        error = gt.relative_error(gpu[image], cpu_outputs("dynamic_dequantize")[image])
        assert error <= FP32_TOLERANCE, f"{image}: relative L2 {error:.3g}"


def test_hybrid_ops_run_the_float_view_of_their_int8_weights():
    """int8 weights straight into CONV_2D v5 / DEPTHWISE_CONV_2D v6 (TFLite's
    hybrid kernels): the GPU computes in float with the dequantized weights,
    i.e. what the DEQUANTIZE form computes on the CPU (1e-4). The CPU's
    hybrid kernels quantize the activations too; the distance to them is
    printed, and their top-1 must agree."""
    gpu, stats = gpu_outputs("dynamic_hybrid", {})
    assert stats["nodes_delegated"] == stats["nodes_total"] and stats["partitions"] == 1
    for image in IMAGE_NAMES:
        reference = cpu_outputs("dynamic_dequantize")[image]
        error = gt.relative_error(gpu[image], reference)
        hybrid = cpu_outputs("dynamic_hybrid")[image]
        print(f"{image}: relative L2 to float-kernel CPU {error:.3g}, to the CPU's hybrid "
              f"kernels {gt.relative_error(gpu[image], hybrid):.3g}")
        assert error <= FP32_TOLERANCE, f"{image}: relative L2 {error:.3g}"
        assert int(np.argmax(gpu[image])) == int(np.argmax(hybrid)), image


def test_simulator_off_drifts_from_the_integer_kernels():
    """Without the simulator the GPU computes the float model the quantized
    one approximates: it is further from the CPU's integer kernels than with
    the simulator (mean steps over all photographs), and still fully
    delegated."""
    on, _ = gpu_outputs("uint8", {})
    off, stats = gpu_outputs("uint8", {"quantization_simulator": False})
    assert stats["nodes_delegated"] == stats["nodes_total"]
    mean_on, mean_off = [], []
    for image in IMAGE_NAMES:
        cpu = cpu_outputs("uint8")[image]
        mean_on.append(steps_apart(on[image], cpu, 1).mean())
        mean_off.append(steps_apart(off[image], cpu, 1).mean())
    report = agreement("uint8", off, 1.0)
    for image, r in report.items():
        print(f"simulator off, {image}: top-1 GPU/CPU {r['top1']}, top-5 shared "
              f"{r['top5_shared']}, within {STEP_BOUND} steps {r['within']:.4f}, "
              f"steps {r['histogram']}")
    print(f"mean steps from the CPU: simulator on {np.mean(mean_on):.4f}, "
          f"off {np.mean(mean_off):.4f}")
    assert np.mean(mean_on) < np.mean(mean_off)


def test_quantized_models_can_be_declined(capfd):
    """quantized_models_allowed=false: quantized tensors stay on the CPU, with
    a reason, as before issue 15; the model still runs (on the CPU)."""
    delegate = gt.make_delegate({"quantized_models_allowed": False})
    interp = gt.interpreter(model_bytes("uint8"), delegate)
    stats = gt.stats(delegate)
    outputs = gt.invoke(interp, [image_input("uint8", "chelsea")])
    assert stats["nodes_delegated"] == 0
    assert "quantized_models_allowed=false" in capfd.readouterr().err
    np.testing.assert_array_equal(outputs[0], cpu_outputs("uint8")["chelsea"])


def test_c_api_v2_options_keep_the_old_struct_and_grow_by_size(capfd):
    """TfLiteGlesDelegateOptions has no size field, so the quantization
    options live in TfLiteGlesDelegateOptionsV2 (base struct + size): the
    defaults turn both on, a caller built against a shorter V2 gets defaults
    for the fields it lacks, and a size below the base struct is refused."""
    import ctypes
    from test_reliability import CDelegateOptions

    class CDelegateOptionsV2(ctypes.Structure):
        _fields_ = [("size", ctypes.c_size_t), ("base", CDelegateOptions),
                    ("quantized_models_allowed", ctypes.c_int32),
                    ("quantization_simulator", ctypes.c_int32),
                    ("device_profile", ctypes.c_int32),
                    ("egl_device", ctypes.c_char_p)]

    lib = ctypes.CDLL(str(gt.LIB))
    lib.TfLiteGlesDelegateOptionsV2Default.restype = CDelegateOptionsV2
    lib.TfLiteGlesDelegateCreateV2.argtypes = [ctypes.POINTER(CDelegateOptionsV2)]
    lib.TfLiteGlesDelegateCreateV2.restype = ctypes.c_void_p
    lib.TfLiteGlesDelegateDelete.argtypes = [ctypes.c_void_p]
    options = lib.TfLiteGlesDelegateOptionsV2Default()
    assert options.size == ctypes.sizeof(CDelegateOptionsV2)
    assert options.quantized_models_allowed == 1 and options.quantization_simulator == 1
    assert options.base.max_delegated_partitions >= 1  # the V1 defaults inside
    for size in (ctypes.sizeof(CDelegateOptionsV2),
                 CDelegateOptionsV2.quantization_simulator.offset,  # an older V2
                 CDelegateOptionsV2.device_profile.offset):
        options.size = size
        created = lib.TfLiteGlesDelegateCreateV2(ctypes.byref(options))
        assert created, f"size {size} refused: {capfd.readouterr().err}"
        lib.TfLiteGlesDelegateDelete(created)
    options.size = CDelegateOptionsV2.base.offset + 8
    assert not lib.TfLiteGlesDelegateCreateV2(ctypes.byref(options))
    assert "TfLiteGlesDelegateOptionsV2.size" in capfd.readouterr().err
    created = lib.TfLiteGlesDelegateCreateV2(None)  # NULL: the defaults
    assert created
    lib.TfLiteGlesDelegateDelete(created)


def test_info_line_counts_what_was_dequantized(capfd):
    """The INFO line at init: quantized constants dequantized (every weight
    and bias of the uint8 MobileNet, counted here from the flatbuffer),
    activations given a simulator step (every op output but the RESHAPE's,
    which keeps its input's grid) and the partition's uint8 input and output."""
    from ai_edge_litert import schema_py_generated as schema
    model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(model_bytes("uint8"), 0))
    graph = model.subgraphs[0]
    constants = sum(1 for t in graph.tensors
                    if model.buffers[t.buffer].data is not None and t.quantization is not None
                    and t.quantization.scale is not None and len(t.quantization.scale) > 0)
    outputs = sum(len(op.outputs) for op in graph.operators) - 1  # RESHAPE
    _, stats = gpu_outputs("uint8", {})
    err = capfd.readouterr().err
    expected = (f"{constants} quantized constants dequantized at init, {outputs} activations "
                f"rounded to their grid on the GPU (quantization_simulator=true), 2 quantized "
                f"partition inputs/outputs converted per invoke")
    assert expected in err, err


@pytest.mark.parametrize("dtype,zero_point", [(np.int8, -3), (np.uint8, 128)])
def test_quantize_of_a_float_input_equals_tflite_on_exact_ties(dtype, zero_point):
    """An image scaled to [-1, 1] at scale 1/127.5 lies on exact ties of
    QUANTIZE. TFLite's kernel rounds them to even in whole groups of 8
    elements and away from zero in the tail (checked here against the
    runtime, as the delegate's QuantizeElementLikeTflite assumes); the
    delegate rounds a float input that only QUANTIZE reads on the CPU at
    upload that way, so its output equals the CPU's element for element."""
    from tflite_builder import ModelBuilder, QuantParams
    count = 8 * 5 + 3
    b = ModelBuilder()
    x = b.add_input([1, count])
    y = b.add_tensor([1, count], dtype=dtype, quant=QuantParams(0.5, zero_point))
    b.add_op("QUANTIZE", [x], [y])
    model = b.build()
    ties = ((np.arange(count) % 13) - 6).astype(np.float32) * 0.5 + 0.25  # x / s = k + 0.5
    cpu = gt.invoke(gt.interpreter(model), [ties[np.newaxis]])[0][0].astype(int) - zero_point
    k = np.floor(ties / 0.5)  # the tie is k + 0.5
    to_even = np.where(k % 2 == 0, k, k + 1)
    away = np.where(k >= 0, k + 1, k)
    expected = np.where(np.arange(count) < count // 8 * 8, to_even, away)
    np.testing.assert_array_equal(cpu, expected)  # the runtime's rule
    gpu, stats = gt.run_gpu(model, [ties[np.newaxis]])
    assert stats["nodes_delegated"] == 1
    np.testing.assert_array_equal(gpu[0][0].astype(int) - zero_point, cpu)


@pytest.mark.parametrize("fp16", [False, True])
def test_image_quantized_on_the_gpu_equals_tflite(monkeypatch, fp16):
    """An image input of 101x99x3 floats (staged: the conversion, or the
    first convolution reading the staging itself with TFLITE_GLES_FUSE_UPLOAD
    =1, rounds it to the QUANTIZE's grid on the GPU), made of the exact ties
    an image scaled to [-1, 1] at scale 1/127.5 hits, with values beyond the
    range and a tail of 5 elements after the groups of 8. An int8 3x3
    convolution that passes its input through (one tap of 1 per channel, the
    output's params the input's) shows the quantized input: it must equal
    TFLite's element for element, with and without the fusion, and the
    fusion must save the conversion dispatch."""
    from tflite_builder import ModelBuilder, QuantParams
    shape = [1, 101, 99, 3]
    grid = QuantParams(1 / 127.5, -3)
    b = ModelBuilder()
    x = b.add_input(shape)
    q = b.add_tensor(shape, dtype=np.int8, quant=grid)
    b.add_op("QUANTIZE", [x], [q])
    weights = np.zeros([3, 3, 3, 3], np.int8)
    for c in range(3):
        weights[c, 1, 1, c] = 1
    w = b.add_const(weights, quant=QuantParams([1.0] * 3, [0] * 3, 0))
    bias = b.add_const(np.zeros(3, np.int32), quant=QuantParams([grid.scale] * 3, [0] * 3, 0))
    y = b.add_tensor(shape, dtype=np.int8, quant=grid)
    b.add_op("CONV_2D", [q, w, bias], [y], {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                                             "fused_activation_function": "NONE"}, version=3)
    model = b.build()
    rng = np.random.default_rng(15)
    pixels = rng.integers(0, 256, shape).astype(np.float32) / np.float32(127.5) - np.float32(1)
    wide = rng.uniform(-1.2, 1.2, shape).astype(np.float32)
    image = np.where(rng.random(shape) < 0.7, pixels, wide).astype(np.float32)
    cpu, (plain, plain_stats), (fused, fused_stats) = gt.run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_FUSE_UPLOAD", model, [image],
        {"precision_loss_allowed": fp16})
    assert plain_stats["nodes_delegated"] == plain_stats["nodes_total"] == 2, plain_stats
    np.testing.assert_array_equal(plain[0], cpu[0])
    np.testing.assert_array_equal(fused[0], cpu[0])
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1, (fused_stats, plain_stats)


def test_int8_float_input_cannot_be_bound_on_the_gpu():
    """The int8 full-integer model's float input is put on its QUANTIZE's grid
    as it is uploaded; a GPU buffer bound to it would skip that rounding, so
    the binding is refused with the reason, and the copy path still agrees
    with the CPU afterwards (docs/gpu_io.md)."""
    import sys

    sys.path.insert(0, str(gt.REPO / "python"))
    from tflite_gles import gpu_io

    model = model_bytes("int8")
    with gpu_io.EglContext() as context:
        context.make_current()
        delegate = gt.make_delegate({})
        interp = gt.interpreter(model, delegate)
        interp.allocate_tensors()
        io = gpu_io.GpuIo(delegate, gt.LIB)
        inp = interp.get_input_details()[0]
        assert inp["dtype"] == np.float32
        buffer = gpu_io.Gl().create_buffer(io.buffer_bytes(inp["index"]))
        with pytest.raises(gpu_io.GpuIoError) as caught:
            io.bind_buffer(inp["index"], buffer)
        assert "rounded to the grid of the QUANTIZE" in str(caught.value), caught.value
        x = np.random.default_rng(3).uniform(-1, 1, inp["shape"]).astype(np.float32)
        gpu = gt.invoke(interp, [x])[0]
        cpu = gt.invoke(gt.interpreter(model), [x])[0]
        # The softmax's int8 grid is 1/256: within 2 steps, as the model tests ask.
        assert np.mean(np.abs(gpu - cpu) <= 2 / 256 + 1e-6) >= 0.99, np.abs(gpu - cpu).max()
        del interp
