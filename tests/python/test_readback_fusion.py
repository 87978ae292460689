"""Readback fusion (delegate/passes/readback_fusion.h, runtime_readback_fusion.cc):
a model output's producer, a transposed convolution of 1 or 2 output
channels, writes the output's readback staging as BHWC floats itself
(shaders/transpose_conv.comp BHWC_OUTPUT) and the layout conversion after it
does not run. On by default on NVIDIA; forced here on llvmpipe with
TFLITE_GLES_X_FUSE_READBACK=1 (and TFLITE_GLES_X_CPU_READBACK_RELAYOUT=0, or
llvmpipe reads the tensor back itself and there is no conversion to fold).

Checked against LiteRT's CPU kernels over several invokes with new inputs
(a pixel the fused store misses shows as a stale one) and against the
unfused pair: bit for bit in fp32 (the kernel computes the same sums); in
fp16 within one rounding to half (the unfused pair stores halves, the fused
kernel its floats); one dispatch fewer, whole or in row bands of the
output; outputs that must keep their conversion keep it; a GPU binding of a
fused output runs the unfused pair and the fusion comes back when it is
unbound.
"""

import struct
import sys

import numpy as np
import pytest

import gles_testing as gt
from gles_testing import ModelBuilder, assert_close, assert_fully_delegated

SWITCH = "TFLITE_GLES_X_FUSE_READBACK"


def staged_outputs(monkeypatch):
    monkeypatch.setenv("TFLITE_GLES_X_CPU_READBACK_RELAYOUT", "0")


def transpose_model(in_shape, out_c, kernel, stride, padding="SAME", mediapipe=False,
                    logistic=False, second_reader=False, seed=3):
    """One transposed convolution (TRANSPOSE_CONV, or MediaPipe's
    Convolution2DTransposeBias), optionally followed by LOGISTIC (selfie's
    last layers) or with its output also read by an ADD (both outputs)."""
    rng = np.random.default_rng(seed)
    n, h, w, in_c = in_shape

    def size(i):  # SAME: i * stride (MediaPipe's rule may drop a column); VALID
        if padding != "SAME":
            return (i - 1) * stride + kernel
        if not mediapipe:
            return i * stride
        return stride * (i - 1) + kernel - max(0, kernel - (i - 1) % stride - 1)

    out_shape = [n, size(h), size(w), out_c]
    b = ModelBuilder()
    weights = b.add_const(rng.uniform(-0.5, 0.5, [out_c, kernel, kernel, in_c]).astype(np.float32))
    bias = b.add_const(rng.uniform(-1, 1, [out_c]).astype(np.float32))
    x = b.add_input(in_shape)
    t = b.add_tensor(out_shape)
    if mediapipe:
        b.add_op("CUSTOM", [x, weights, bias], [t], custom_code="Convolution2DTransposeBias",
                 custom_options=struct.pack("<3i", 1 if padding == "SAME" else 2, stride, stride))
    else:
        shape = b.add_const(np.array(out_shape, np.int32))
        b.add_op("TRANSPOSE_CONV", [shape, weights, x, bias], [t],
                 {"padding": padding, "stride_h": stride, "stride_w": stride}, version=3)
    outputs = [t]
    if logistic:
        o = b.add_tensor(out_shape)
        b.add_op("LOGISTIC", [t], [o])
        outputs = [o]
    if second_reader:
        o = b.add_tensor(out_shape)
        b.add_op("ADD", [t, t], [o], {"fused_activation_function": "NONE"})
        outputs = [t, o]
    b.set_outputs(outputs)
    return b.build(), out_shape


def assert_same(plain, fused, fp16):
    """The fused outputs are the unfused pair's, but for the halves' rounding."""
    for a, b in zip(plain, fused):
        if fp16:
            np.testing.assert_allclose(b[0], a[0], rtol=2.0**-10, atol=2.0**-24)
        else:
            np.testing.assert_array_equal(b[0], a[0])


def run(monkeypatch, model, in_shape, fp16, invokes=3):
    """Outputs of `invokes` invokes with the switch off and on, each checked
    against the CPU (XNNPACK: MediaPipe's op is not among the builtins);
    returns (off outputs, off stats), (on outputs, on stats)."""
    staged_outputs(monkeypatch)
    options = {"precision_loss_allowed": "true"} if fp16 else {}
    cpu_interp = gt.interpreter(model, use_xnnpack=True)
    runs = []
    for value in ("0", "1"):
        monkeypatch.setenv(SWITCH, value)
        delegate = gt.make_delegate(options)
        interp = gt.interpreter(model, delegate)
        outputs = []
        for i in range(invokes):
            inputs = gt.random_inputs([in_shape], seed=20 + i)
            gpu = gt.invoke(interp, inputs)
            assert_close(gpu, gt.invoke(cpu_interp, inputs), fp16)
            outputs.append([o.copy() for o in gpu])
        stats = gt.stats(delegate)
        assert_fully_delegated(stats)
        runs.append((outputs, stats))
        del interp
    return runs[0], runs[1]


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("in_shape,out_c,kernel,stride,padding,mediapipe", [
    ([1, 16, 16, 16], 2, 3, 2, "SAME", False),   # hair's last layer, smaller
    ([1, 9, 13, 8], 1, 3, 2, "SAME", True),      # odd sizes: phases of unequal widths
    ([1, 6, 5, 16], 2, 2, 2, "SAME", True),      # MediaPipe's SAME drops a column
    ([2, 5, 7, 4], 2, 4, 3, "VALID", False),     # two batches, stride 3
    ([1, 7, 6, 5], 1, 3, 1, "SAME", False),      # stride 1: one phase
], ids=["hair-like", "odd", "mediapipe", "batches", "stride1"])
@pytest.mark.parametrize("min_invocations", ["0", "4096"], ids=["tiles", "many-core"])
def test_fused_output_matches_cpu_and_the_unfused_pair(monkeypatch, fp16, in_shape, out_c,
                                                       kernel, stride, padding, mediapipe,
                                                       min_invocations):
    """llvmpipe's 4-pixel tiles (their pixels GROUPS_PER_PHASE apart when
    fused), and many-core GPUs' (TFLITE_GLES_MIN_INVOCATIONS: 1-pixel tiles
    on these small maps, as NVIDIA runs the hair stand-in's last layer)."""
    monkeypatch.setenv("TFLITE_GLES_MIN_INVOCATIONS", min_invocations)
    model, _ = transpose_model(in_shape, out_c, kernel, stride, padding, mediapipe)
    (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, model, in_shape, fp16)
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == 1
    assert_same(plain, fused, fp16)


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("in_shape,bands", [([1, 19, 16, 8], 4), ([2, 5, 9, 4], 3)],
                         ids=["19-rows", "two-batches"])
def test_fused_output_in_row_bands(monkeypatch, capfd, fp16, in_shape, bands):
    """TFLITE_GLES_X_FUSED_READBACK_BANDS (off by default): the fused kernel
    dispatched in row bands of its output (its pixel groups' BAND_BEGIN/END),
    each band fenced and copied while the next one runs (runtime_bands.cc);
    forced on these small outputs: uneven bands, a band edge across the
    batches, 1 and 3 copy threads."""
    monkeypatch.setenv("TFLITE_GLES_X_FUSED_READBACK_BANDS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_READBACK_BANDS", str(bands))
    monkeypatch.setenv("TFLITE_GLES_X_TRANSFER_BAND_MIN_KB", "1")
    monkeypatch.setenv("TFLITE_GLES_X_COPY_MIN_PART_KB", "1")
    monkeypatch.setenv("TFLITE_GLES_X_COPY_THREADS", "3" if fp16 else "1")
    monkeypatch.setenv("TFLITE_GLES_X_PHASES", "1")
    model, _ = transpose_model(in_shape, 2, 3, 2)
    (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, model, in_shape, fp16)
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == 1
    assert_same(plain, fused, fp16)
    assert f"crosses in {bands} row bands (readback, fused)" in capfd.readouterr().err


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
def test_epilogue_moves_with_the_store(monkeypatch, fp16):
    """selfie's last layers: the LOGISTIC folded into the transposed
    convolution's store, the store into the staging."""
    model, _ = transpose_model([1, 12, 12, 16], 1, 2, 2, mediapipe=True, logistic=True)
    (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, model, [1, 12, 12, 16], fp16)
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == 1
    assert_same(plain, fused, fp16)


@pytest.mark.parametrize("out_c,second_reader", [(3, False), (5, False), (2, True)],
                         ids=["3-channels", "two-slices", "read-by-another-op"])
def test_outputs_that_keep_their_conversion(monkeypatch, out_c, second_reader):
    """3 or more channels (a pixel's floats would not be one store), or the
    tensor also read by another dispatch: unchanged, still right."""
    model, _ = transpose_model([1, 8, 8, 8], out_c, 3, 2, second_reader=second_reader)
    (plain, plain_stats), (fused, fused_stats) = run(monkeypatch, model, [1, 8, 8, 8], False,
                                                     invokes=1)
    assert plain_stats["dispatches"] == fused_stats["dispatches"]


@pytest.mark.parametrize("name,fp16", [("selfie_segmentation", False),
                                       ("selfie_segmentation", True),
                                       ("hair_segmentation_512", False)])
def test_models_with_the_fusion_forced(monkeypatch, name, fp16):
    """The real selfie model and the hair stand-in (their masks are the
    outputs this fuses) under the models' own criteria."""
    import test_models as tm
    staged_outputs(monkeypatch)
    monkeypatch.setenv(SWITCH, "1")
    gpu = tm.gpu_result(name, fp16=fp16)
    if fp16:
        tm.assert_fp16_agrees(tm.mc.CATALOG[name], gpu, tm.cpu_result(name))
    else:
        tm.assert_fp32_matches(name, gpu)
    monkeypatch.setenv(SWITCH, "0")
    assert tm.gpu_result(name, fp16=fp16)["stats"]["dispatches"] == \
        gpu["stats"]["dispatches"] + 1


@pytest.fixture
def app():
    sys.path.insert(0, str(gt.REPO / "python"))
    from tflite_gles import gpu_io
    with gpu_io.EglContext() as context:
        context.make_current()
        yield gpu_io


@pytest.mark.parametrize("layout", ["bhwc", "phwc4"])
def test_bound_output_runs_the_unfused_pair(app, monkeypatch, layout):
    """A fused output bound to a GL buffer is written there (the binding
    runs the producer and conversion it planned against); unbound, the
    fused readback answers again."""
    from test_gpu_io_buffers import from_layout
    gpu_io = app
    staged_outputs(monkeypatch)
    monkeypatch.setenv(SWITCH, "1")
    in_shape = [1, 10, 9, 8]
    model, out_shape = transpose_model(in_shape, 2, 3, 2)
    delegate = gt.make_delegate({})
    interp = gt.interpreter(model, delegate)
    interp.allocate_tensors()
    io = gpu_io.GpuIo(delegate, gt.LIB)
    cpu_interp = gt.interpreter(model, use_xnnpack=True)
    gl = gpu_io.Gl()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    x = gt.random_inputs([in_shape], seed=1)[0]
    np.testing.assert_allclose(gt.invoke(interp, [x])[0], gt.invoke(cpu_interp, [x])[0],
                               rtol=1e-5, atol=1e-5)
    buffer = gl.create_buffer(io.buffer_bytes(out["index"], layout))
    io.bind_buffer(out["index"], buffer, layout)
    for seed in range(2, 4):
        x = gt.random_inputs([in_shape], seed=seed)[0]
        interp.set_tensor(inp["index"], x)
        interp.invoke()
        floats = io.buffer_bytes(out["index"], layout) // 4
        bound = from_layout(gl.read_buffer(buffer, floats), layout, out_shape)
        assert gt.relative_error(bound, gt.invoke(cpu_interp, [x])[0]) <= 1e-5
    io.unbind(out["index"])
    x = gt.random_inputs([in_shape], seed=5)[0]
    np.testing.assert_allclose(gt.invoke(interp, [x])[0], gt.invoke(cpu_interp, [x])[0],
                               rtol=1e-5, atol=1e-5)
    del interp
