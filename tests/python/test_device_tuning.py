"""The convolution tiles chosen for many-core GPUs (DeviceProfile::
min_invocations, delegate/device/device_tuning.h) compute the same answers as the
CPU: TFLITE_GLES_MIN_INVOCATIONS forces that policy on llvmpipe, from
mid-sized tiles down to one pixel x one slice per invocation (GEMM tiles) and
1x1 depthwise blocks, on layers whose shapes leave partial tiles.
"""

import numpy as np
import pytest

from gles_testing import assert_close, assert_fully_delegated, random_inputs, run_cpu_and_gpu
from test_fusion import Chain


def layers(c):
    """1x1 conv, 3x3 stride-2 conv, depthwise 3x3 s1 and s2, 5x5 depthwise
    (gathering path), then a FULLY_CONNECTED over few rows (slices on x)."""
    y = c.conv(c.x, 20, activation="RELU6")
    y = c.depthwise(y, activation="RELU")
    y = c.conv(y, 12, kernel=3, stride=2)
    n, h, w, ch = c.shapes[y]
    out = c.b.add_tensor([n, -(-h // 2), -(-w // 2), ch])
    c.shapes[out] = [n, -(-h // 2), -(-w // 2), ch]
    c.b.add_op("DEPTHWISE_CONV_2D", [y, c.const([1, 3, 3, ch]), c.const([ch], -1, 1)], [out],
               {"padding": "SAME", "stride_h": 2, "stride_w": 2, "depth_multiplier": 1,
                "dilation_h_factor": 1, "dilation_w_factor": 1,
                "fused_activation_function": "NONE"})
    n, h, w, ch = c.shapes[out]
    wide = c.b.add_tensor([n, h, w, ch])
    c.shapes[wide] = [n, h, w, ch]
    c.b.add_op("DEPTHWISE_CONV_2D", [out, c.const([1, 5, 5, ch]), c.const([ch], -1, 1)], [wide],
               {"padding": "SAME", "stride_h": 1, "stride_w": 1, "depth_multiplier": 1,
                "dilation_h_factor": 1, "dilation_w_factor": 1,
                "fused_activation_function": "NONE"})
    flat = c.b.add_tensor([n, h * w * ch])
    c.shapes[flat] = [n, h * w * ch]
    c.b.add_op("RESHAPE", [wide, c.b.add_const(np.array([n, h * w * ch], np.int32))], [flat])
    return [c.fully_connected(flat, 9)]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("min_invocations", ["0", "300", "1000000000"])
def test_gpu_tiles_agree_with_cpu(monkeypatch, min_invocations, fp16):
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", min_invocations)
    c = Chain([2, 15, 13, 7], seed=4)
    model = c.build(layers(c))
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs(c.input_shapes, seed=9),
                                      {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


def test_precision_loss_allowed_uses_fp16_only_where_it_pays(capfd):
    """precision_loss_allowed permits fp16 storage; the delegate takes it
    where it is faster (Fp16StoragePays: not on llvmpipe, where every model
    ran about 2x slower with it) or where memory is the first priority.
    The choice shows in the INFO line and in the GPU memory, and both
    answers agree with the CPU within their precision's tolerance."""
    import gles_testing as gt
    shape = [1, 8, 8, 24]
    model = gt.single_op_model("ADD", [shape, shape], {"fused_activation_function": "RELU"})
    inputs = random_inputs([shape, shape], seed=3)
    cpu = gt.invoke(gt.interpreter(model), inputs)
    results = {}
    for name, options in (("allowed", {"precision_loss_allowed": "true"}),
                          ("memory_first", {"precision_loss_allowed": "true",
                                            "inference_priority1": "min_memory_usage"})):
        capfd.readouterr()
        delegate = gt.load_delegate(gt.LIB, options)  # not make_delegate: no forcing
        interp = gt.interpreter(model, delegate)
        gpu = gt.invoke(interp, inputs)
        line = [l for l in capfd.readouterr().err.splitlines() if "delegated" in l][0]
        renderer = gt.stats(delegate)["renderer"]
        results[name] = (line, gt.stats(delegate)["gpu_bytes"])
        assert_close(gpu, cpu, fp16=True)
        del interp
    fp16_pays = "llvmpipe" not in renderer
    assert results["allowed"][0].endswith("(fp16)" if fp16_pays else "(fp32)"), results
    assert results["memory_first"][0].endswith("(fp16)"), results
    if not fp16_pays:
        assert results["memory_first"][1] < results["allowed"][1], results


@pytest.mark.parametrize("knob", ["TFLITE_GLES_X_PHASES", "TFLITE_GLES_X_TIMELINE"])
def test_invoke_phase_reports_leave_answers_alone(monkeypatch, capfd, knob):
    """The tuning reports (delegate/runtime/invoke_timeline.h) print the mean phases
    of every 200 invokes and change nothing else; on llvmpipe, whose timer
    queries do not time compute work, the time line says so and falls back
    to the CPU phases (on NVIDIA it adds a line per dispatch)."""
    import gles_testing as gt
    monkeypatch.setenv(knob, "1")
    shape = [1, 6, 5, 8]
    model = gt.single_op_model("ADD", [shape, shape], {"fused_activation_function": "RELU6"})
    inputs = random_inputs([shape, shape], seed=5)
    cpu = gt.invoke(gt.interpreter(model), inputs)
    capfd.readouterr()
    delegate = gt.make_delegate({})
    interp = gt.interpreter(model, delegate)
    for i in range(200):
        gpu = gt.invoke(interp, random_inputs([shape, shape], seed=100 + i))
    gpu = gt.invoke(interp, inputs)
    err = capfd.readouterr().err
    assert_close(gpu, cpu, False)
    phases = [l for l in err.splitlines() if "mean of 200 invokes: upload" in l]
    assert len(phases) == 1, err
    stats = gt.stats(delegate)
    assert f"({stats['dispatches']} dispatches)" in phases[0], (phases, stats)
    renderer = stats["renderer"]
    if knob == "TFLITE_GLES_X_TIMELINE":
        if "llvmpipe" in renderer:
            assert "do not time compute work" in err, err
        else:
            assert "time line, mean of 200 invokes" in err, err


@pytest.mark.parametrize("flush_after", ["0", "1", "3", "100", "1,2,5", "-1"])
def test_early_flush_changes_no_answer(monkeypatch, flush_after):
    """DeviceProfile::early_flush_after (on for real GPUs, forced here): a
    glFlush after the Nth dispatch (0: right after the uploads; past the
    last: never) must leave every answer as it was."""
    monkeypatch.setenv("TFLITE_GLES_X_EARLY_FLUSH", flush_after)
    c = Chain([1, 9, 8, 5], seed=12)
    y = c.conv(c.x, 8, kernel=3, stride=2, activation="RELU")
    model = c.build([c.conv(c.depthwise(y), 6)])
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs(c.input_shapes, seed=2))
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, False)
