"""GL buffers bound to model inputs and outputs (issue 16, buffers; docs/gpu_io.md).

Every run here is real: an EGL context made by the test (the application's),
the real interpreter, the delegate applied in that context, GL buffers
written and read through libGLESv2. Bound runs are compared with the TFLite
CPU kernels and with the copy path of the same delegate, across the runtime's
transfer paths (staging buffers, direct transfers, upload fused into the
first convolution, half staging, SSBO reads) that decide how a binding is
carried out (delegate/runtime/runtime_gpu_io.cc)."""

from __future__ import annotations

import ctypes
import sys
import threading

import numpy as np
import pytest

import gles_testing as gt

sys.path.insert(0, str(gt.REPO / "python"))
from tflite_gles import gpu_io  # noqa: E402

FP32, FP16 = 1e-5, 5e-3
rng = np.random.default_rng(16)

# Switches that pick the runtime path a binding lands on (they are llvmpipe's
# non-defaults; NVIDIA runs direct transfers and fused uploads by default).
PATHS = {  # name: (environment switches, delegate options)
    "staging": ({}, {}),
    "direct": ({"TFLITE_GLES_X_DIRECT_TRANSFERS": "1"}, {}),
    "fused_upload": ({"TFLITE_GLES_FUSE_UPLOAD": "1"}, {}),
    "ssbo_reads": ({}, {"storage": "ssbo"}),
}


def conv_model(channels_in=3, channels_out=5, h=17, w=13):
    weights = rng.uniform(-1, 1, (channels_out, 3, 3, channels_in)).astype(np.float32)
    bias = rng.uniform(-1, 1, channels_out).astype(np.float32)
    return gt.single_op_model("CONV_2D", [[1, h, w, channels_in]],
                              {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                               "fused_activation_function": "NONE"}, {1: weights, 2: bias})


def to_layout(x: np.ndarray, layout: str) -> np.ndarray:
    """A BHWC array as the bound buffer holds it (PHWC4: padded lanes NaN,
    which the delegate must ignore)."""
    if layout == "bhwc":
        return x.reshape(-1)
    b, h, w, c = x.shape
    s = (c + 3) // 4
    padded = np.full((b, h, w, s * 4), np.nan, np.float32)
    padded[..., :c] = x
    return padded.reshape(b, h, w, s, 4).transpose(0, 3, 1, 2, 4).reshape(-1)


def from_layout(flat: np.ndarray, layout: str, shape) -> np.ndarray:
    if layout == "bhwc":
        return flat.reshape(shape)
    b, h, w, c = shape
    s = (c + 3) // 4
    phwc4 = flat.reshape(b, s, h, w, 4)
    assert np.all(phwc4.transpose(0, 2, 3, 1, 4).reshape(b, h, w, s * 4)[..., c:] == 0), \
        "padded lanes of a PHWC4 output must be written as zero"
    return phwc4.transpose(0, 2, 3, 1, 4).reshape(b, h, w, s * 4)[..., :c]


@pytest.fixture
def app():
    """The application's EGL context, current on this thread for the test."""
    with gpu_io.EglContext() as context:
        context.make_current()
        yield context


def bound_interpreter(model, options=None):
    delegate = gt.make_delegate(options)
    interp = gt.interpreter(model, delegate)
    interp.allocate_tensors()
    return delegate, interp, gpu_io.GpuIo(delegate, gt.LIB)


def cpu_outputs(model, x):
    return gt.invoke(gt.interpreter(model), [x])[0]


@pytest.mark.parametrize("layout", ["bhwc", "phwc4"])
@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
def test_bound_buffers_match_cpu_and_copy_path(app, monkeypatch, layout, path, fp16):
    switches, options = PATHS[path]
    for name, value in switches.items():
        monkeypatch.setenv(name, value)
    options = dict(options, **({"precision_loss_allowed": "true"} if fp16 else {}))
    model = conv_model()
    delegate, interp, io = bound_interpreter(model, options)
    copy_delegate, copy_interp, _ = bound_interpreter(model, options)
    gl = gpu_io.Gl()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    in_buffer = gl.create_buffer(io.buffer_bytes(inp["index"], layout))
    out_buffer = gl.create_buffer(io.buffer_bytes(out["index"], layout))
    io.bind_buffer(inp["index"], in_buffer, layout)
    io.bind_buffer(out["index"], out_buffer, layout)
    out_floats = io.buffer_bytes(out["index"], layout) // 4
    for seed in range(3):  # changing inputs: no stale data
        x = gt.random_inputs([inp["shape"]], seed=seed)[0]
        gl.write_buffer(in_buffer, to_layout(x, layout))
        # The host input is not read: NaN there would show.
        interp.set_tensor(inp["index"], np.full(inp["shape"], np.nan, np.float32))
        # Nor is the host output written by the delegate's run: what is there
        # after invoke came through the interpreter's CopyFromBufferHandle
        # call (its offsets in TfLiteDelegate/TfLiteTensor proven by that).
        interp.set_tensor(out["index"], np.full(out["shape"], np.nan, np.float32))
        interp.invoke()
        bound = from_layout(gl.read_buffer(out_buffer, out_floats), layout, out["shape"])
        cpu = cpu_outputs(model, x)
        copied = gt.invoke(copy_interp, [x])[0]
        tolerance = FP16 if fp16 else FP32
        assert gt.relative_error(bound, cpu) <= tolerance, (seed, gt.relative_error(bound, cpu))
        assert gt.relative_error(bound, copied) <= tolerance
        # The interpreter copied the output back through CopyFromBufferHandle.
        np.testing.assert_array_equal(interp.get_tensor(out["index"]), bound)
    del interp, copy_interp


def test_one_input_bound_one_on_host(app):
    """ADD with one bound input, the other set on the host."""
    model = gt.single_op_model("ADD", [[1, 9, 7, 6], [1, 9, 7, 6]])
    delegate, interp, io = bound_interpreter(model)
    gl = gpu_io.Gl()
    a_detail, b_detail = interp.get_input_details()
    out = interp.get_output_details()[0]
    buffer = gl.create_buffer(io.buffer_bytes(a_detail["index"]))
    io.bind_buffer(a_detail["index"], buffer)
    for seed in range(2):
        a, b = gt.random_inputs([a_detail["shape"], b_detail["shape"]], seed=seed)
        gl.write_buffer(buffer, a)
        interp.set_tensor(b_detail["index"], b)
        interp.invoke()
        np.testing.assert_allclose(interp.get_tensor(out["index"]), a + b, rtol=1e-6)
    io.unbind(a_detail["index"])  # back to the host upload
    a, b = gt.random_inputs([a_detail["shape"], b_detail["shape"]], seed=5)
    interp.set_tensor(a_detail["index"], a)
    interp.set_tensor(b_detail["index"], b)
    interp.invoke()
    np.testing.assert_allclose(interp.get_tensor(out["index"]), a + b, rtol=1e-6)
    del interp


def test_half_staging_input(app, monkeypatch):
    """fp16 with the input staged as halves (read through an R16F view, which
    the bound float buffer replaces with an R32F one)."""
    monkeypatch.setenv("TFLITE_GLES_X_HALF_UPLOAD", "1")
    model = conv_model(4, 8)
    delegate, interp, io = bound_interpreter(model, {"precision_loss_allowed": "true",
                                                     "storage": "texture_buffer"})
    gl = gpu_io.Gl()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    x = gt.random_inputs([inp["shape"]], seed=3)[0]
    buffer = gl.create_buffer(x.nbytes, x)
    io.bind_buffer(inp["index"], buffer)
    interp.invoke()
    assert gt.relative_error(interp.get_tensor(out["index"]), cpu_outputs(model, x)) <= FP16
    del interp


def test_output_without_host_copy(app):
    """host_copy=False: the interpreter's tensor is never written."""
    model = conv_model(4, 4)
    delegate, interp, io = bound_interpreter(model)
    gl = gpu_io.Gl()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    buffer = gl.create_buffer(io.buffer_bytes(out["index"]))
    io.bind_buffer(out["index"], buffer, host_copy=False)
    x = gt.random_inputs([inp["shape"]], seed=1)[0]
    interp.set_tensor(inp["index"], x)
    interp.set_tensor(out["index"], np.full(out["shape"], np.nan, np.float32))
    interp.invoke()
    assert np.isnan(interp.get_tensor(out["index"])).all()
    bound = gl.read_buffer(buffer, int(np.prod(out["shape"]))).reshape(out["shape"])
    assert gt.relative_error(bound, cpu_outputs(model, x)) <= FP32
    io.unbind(out["index"])  # back to the readback
    interp.invoke()
    np.testing.assert_array_equal(interp.get_tensor(out["index"]), bound)
    del interp


def test_quantized_model_float_contract(app):
    """uint8 MobileNet: bound buffers hold the float view (scale * (q - zero_point))."""
    model = str(gt.REPO.parent / "shared" / "models" / "mobilenet_v1_0.25_224_quant.tflite")
    delegate, interp, io = bound_interpreter(model)
    copy_delegate, copy_interp, _ = bound_interpreter(model)
    gl = gpu_io.Gl()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    (in_scale, in_zero), (out_scale, out_zero) = inp["quantization"], out["quantization"]
    in_buffer = gl.create_buffer(io.buffer_bytes(inp["index"]))
    out_buffer = gl.create_buffer(io.buffer_bytes(out["index"]))
    assert io.buffer_bytes(inp["index"]) == 4 * int(np.prod(inp["shape"]))
    io.bind_buffer(inp["index"], in_buffer)
    io.bind_buffer(out["index"], out_buffer)
    for seed in range(2):
        q = np.random.default_rng(seed).integers(0, 256, inp["shape"], dtype=np.uint8)
        gl.write_buffer(in_buffer, in_scale * (q.astype(np.float32) - in_zero))
        interp.invoke()
        bound = gl.read_buffer(out_buffer, int(np.prod(out["shape"])))
        copied = gt.invoke(copy_interp, [q])[0].reshape(-1).astype(np.float32)
        copied_float = out_scale * (copied - out_zero)
        # The copy path quantizes the same floats: within half a step, and
        # the interpreter's copy-back (CopyFromBufferHandle) is that uint8.
        assert np.max(np.abs(bound - copied_float)) <= 0.5 * out_scale + 1e-6
        np.testing.assert_array_equal(interp.get_tensor(out["index"]).reshape(-1), copied)
        cpu = cpu_outputs(model, q).reshape(-1).astype(np.float32)
        assert np.mean(np.abs(copied - cpu) <= 2) >= 0.99
    del interp, copy_interp


@pytest.mark.parametrize("path", ["staging", "fused_upload", "ssbo_reads"])
@pytest.mark.parametrize("layout", ["bhwc", "phwc4"])
def test_bound_float_view_of_a_byte_staged_input(app, monkeypatch, path, layout):
    """A uint8 input large enough to be staged crosses as raw bytes on the
    copy path (dequantized on the GPU); bound, its buffer holds the float
    view, so the steps that read the bytes read floats while it is bound and
    the bytes again once unbound. A pass-through convolution shows the input
    the model saw: it must be the bound values' grid points, exactly."""
    from test_quantized_inputs import passthrough_model
    switches, options = PATHS[path]
    for name, value in switches.items():
        monkeypatch.setenv(name, value)
    scale, zero_point, shape = 0.0291, 201, [1, 97, 91, 3]
    model = passthrough_model(np.uint8, shape, scale, zero_point)
    delegate, interp, io = bound_interpreter(model, options)
    gl = gpu_io.Gl()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    in_buffer = gl.create_buffer(io.buffer_bytes(inp["index"], layout))
    q = np.random.default_rng(5).integers(0, 256, shape).astype(np.uint8)
    for bound in (True, False, True):
        if bound:
            io.bind_buffer(inp["index"], in_buffer, layout)
            real = np.float32(scale) * (q.astype(np.float32) - np.float32(zero_point))
            gl.write_buffer(in_buffer, to_layout(real, layout))
            interp.set_tensor(inp["index"], np.zeros(shape, np.uint8))  # not read
        else:
            io.unbind(inp["index"])
            interp.set_tensor(inp["index"], q)
        interp.invoke()
        np.testing.assert_array_equal(interp.get_tensor(out["index"]), q, err_msg=str(bound))
        q = q[:, ::-1].copy()  # new values each round
    del interp


# --- errors: each a status with a message, the process alive ---------------

def error_of(call) -> str:
    with pytest.raises(gpu_io.GpuIoError) as caught:
        call()
    return str(caught.value)


def test_errors(app):
    model = conv_model(4, 4)
    delegate, interp, io = bound_interpreter(model)
    gl = gpu_io.Gl()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    good = gl.create_buffer(io.buffer_bytes(inp["index"]))
    assert "unknown tensor index 9999" in error_of(lambda: io.bind_buffer(9999, good))
    assert "unknown tensor index -1" in error_of(lambda: io.bind_buffer(-1, good))
    weights_index = next(t["index"] for t in interp.get_tensor_details()
                         if t["index"] not in (inp["index"], out["index"]))
    assert "not an input or output of a GPU partition" in error_of(
        lambda: io.bind_buffer(weights_index, good))
    wrong = gl.create_buffer(io.buffer_bytes(inp["index"]) + 4)
    message = error_of(lambda: io.bind_buffer(inp["index"], wrong))
    assert "holds" in message and "needs" in message, message
    deleted = gl.create_buffer(64)
    gl.delete_buffer(deleted)
    assert "not a buffer object" in error_of(lambda: io.bind_buffer(inp["index"], deleted))
    assert "not a buffer object" in error_of(lambda: io.bind_buffer(inp["index"], 123456))
    assert "not bound" in error_of(lambda: io.unbind(inp["index"]))
    raw = io._lib.TfLiteGlesDelegateBindBuffer(io._delegate, inp["index"], good, 7, 0)
    assert raw == 1 and b"unknown buffer layout 7" in io._lib.TfLiteGlesDelegateLastError(
        io._delegate)
    # A context that shares nothing: its first name is one of the delegate's.
    with gpu_io.EglContext() as other:
        other.make_current()
        foreign = gpu_io.Gl().create_buffer(io.buffer_bytes(inp["index"]))
        app.make_current()
        message = error_of(lambda: io.bind_buffer(inp["index"], foreign))
        assert "delegate's own buffers" in message or "not a buffer object" in message, message
        other.make_current()
        assert "not current on this thread" in error_of(
            lambda: io.bind_buffer(inp["index"], good))
    app.make_current()
    # Another thread (no context current there).
    errors = []
    thread = threading.Thread(target=lambda: errors.append(
        error_of(lambda: io.bind_buffer(inp["index"], good))))
    thread.start()
    thread.join()
    assert "not current on this thread" in errors[0]
    # Still alive and correct, now bound.
    io.bind_buffer(inp["index"], good)
    x = gt.random_inputs([inp["shape"]], seed=2)[0]
    gl.write_buffer(good, x)
    interp.invoke()
    assert gt.relative_error(interp.get_tensor(out["index"]), cpu_outputs(model, x)) <= FP32
    del interp


def test_bind_before_modify_graph(app):
    delegate = gt.make_delegate()
    io = gpu_io.GpuIo(delegate, gt.LIB)
    buffer = gpu_io.Gl().create_buffer(64)
    assert "bind after ModifyGraphWithDelegate" in error_of(lambda: io.bind_buffer(0, buffer))


def test_resize_drops_binding_with_message(app, capfd):
    model = gt.single_op_model("ADD", [[1, 4, 4, 4], [1, 4, 4, 4]])
    delegate, interp, io = bound_interpreter(model, {"reapply_on_resize": "true"})
    gl = gpu_io.Gl()
    index = interp.get_input_details()[0]["index"]
    io.bind_buffer(index, gl.create_buffer(io.buffer_bytes(index)))
    interp.resize_tensor_input(index, [1, 8, 4, 4])
    interp.resize_tensor_input(interp.get_input_details()[1]["index"], [1, 8, 4, 4])
    interp.allocate_tensors()
    assert "GPU binding of tensor" in capfd.readouterr().err
    assert "not bound" in error_of(lambda: io.unbind(index))
    a, b = gt.random_inputs([[1, 8, 4, 4]] * 2, seed=4)
    interp.set_tensor(index, a)
    interp.set_tensor(interp.get_input_details()[1]["index"], b)
    interp.invoke()
    np.testing.assert_allclose(interp.get_tensor(interp.get_output_details()[0]["index"]),
                               a + b, rtol=1e-6)
    del interp


# --- TfLiteDelegate's buffer-handle callbacks, called as the runtime would ----

class Tensor(ctypes.Structure):
    """TfLiteTensor up to `bytes` (delegate/abi/tflite_abi.h), 112 bytes in all."""
    _fields_ = [("type", ctypes.c_int), ("data", ctypes.c_void_p), ("dims", ctypes.c_void_p),
                ("scale", ctypes.c_float), ("zero_point", ctypes.c_int32),
                ("allocation_type", ctypes.c_int), ("bytes", ctypes.c_size_t),
                ("rest", ctypes.c_byte * 64)]


class Delegate(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("prepare", ctypes.c_void_p),
                ("copy_from", ctypes.c_void_p), ("copy_to", ctypes.c_void_p),
                ("free", ctypes.c_void_p), ("flags", ctypes.c_int64),
                ("builder", ctypes.c_void_p)]


def test_buffer_handle_callbacks(app):
    """CopyToBufferHandle / CopyFromBufferHandle / FreeBufferHandle through the
    delegate's own function pointers (the Python interpreter calls only
    CopyFromBufferHandle, after Invoke, and FreeBufferHandle at teardown)."""
    assert ctypes.sizeof(Tensor) == 112 and ctypes.sizeof(Delegate) == 56
    model = conv_model(4, 8, 5, 6)
    delegate, interp, io = bound_interpreter(model)
    gl = gpu_io.Gl()
    out = interp.get_output_details()[0]
    buffer = gl.create_buffer(io.buffer_bytes(out["index"], "phwc4"))
    io.bind_buffer(out["index"], buffer, "phwc4")  # the first handle: 1
    native = Delegate.from_address(delegate._get_native_delegate_pointer())
    copy_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                 ctypes.POINTER(Tensor))
    copy_to, copy_from = copy_type(native.copy_to), copy_type(native.copy_from)
    free = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.POINTER(ctypes.c_int))(native.free)
    values = rng.uniform(-1, 1, out["shape"]).astype(np.float32)
    tensor = Tensor(type=1, data=values.ctypes.data, bytes=values.nbytes)
    pointer = delegate._get_native_delegate_pointer()
    assert copy_to(None, pointer, 1, ctypes.byref(tensor)) == 0
    np.testing.assert_array_equal(
        from_layout(gl.read_buffer(buffer, buffer_floats := io.buffer_bytes(out["index"], "phwc4")
                                   // 4), "phwc4", out["shape"]), values)
    back = np.full(out["shape"], np.nan, np.float32)
    tensor_back = Tensor(type=1, data=back.ctypes.data, bytes=back.nbytes)
    assert copy_from(None, pointer, 1, ctypes.byref(tensor_back)) == 0
    np.testing.assert_array_equal(back, values)
    assert copy_from(None, pointer, 99, ctypes.byref(tensor_back)) == 1
    assert b"buffer handle 99" in io._lib.TfLiteGlesDelegateLastError(io._delegate)
    handle = ctypes.c_int(1)
    free(None, pointer, ctypes.byref(handle))
    assert handle.value == -1
    assert "not bound" in error_of(lambda: io.unbind(out["index"]))
    assert buffer_floats > 0
    # Unbound by the free: the next invoke reads back on the host again.
    x = gt.random_inputs([interp.get_input_details()[0]["shape"]], seed=6)[0]
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    assert gt.relative_error(interp.get_tensor(out["index"]), cpu_outputs(model, x)) <= FP32
    del interp


def test_cpu_op_reading_a_bound_output_gets_it_through_the_interpreter(app):
    """ADD (GPU) -> an op only the CPU runs -> MUL (GPU): the ADD's output is
    bound, so the delegate leaves it stale; the interpreter copies it back
    (CopyFromBufferHandle) before the CPU op reads it, by its own rule."""
    shape = [1, 6, 5, 7]
    b = gt.ModelBuilder()
    x, y = b.add_input(shape), b.add_input(shape)
    s, t, o = b.add_tensor(shape), b.add_tensor(shape), b.add_tensor(shape)
    b.add_op("ADD", [x, y], [s], {"fused_activation_function": "RELU"})
    b.add_op("CUMSUM", [s, b.add_const(np.array(3, np.int32))], [t])
    b.add_op("MUL", [t, y], [o], {"fused_activation_function": "NONE"})
    model = b.build()
    delegate, interp, io = bound_interpreter(model, {"max_delegated_partitions": "2"})
    assert gt.stats(delegate)["partitions"] == 2
    gl = gpu_io.Gl()
    buffer = gl.create_buffer(io.buffer_bytes(s))
    io.bind_buffer(s, buffer)
    for seed in range(2):
        inputs = gt.random_inputs([shape, shape], seed=seed)
        got = gt.invoke(interp, inputs)[0]
        np.testing.assert_allclose(got, gt.invoke(gt.interpreter(model), inputs)[0],
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(gl.read_buffer(buffer, int(np.prod(shape))).reshape(shape),
                                      np.maximum(inputs[0] + inputs[1], 0))
    del interp


@pytest.mark.parametrize("layout", ["bhwc", "phwc4"])
def test_bound_output_of_a_resize_the_cpu_did_at_readback(app, monkeypatch, layout):
    """TFLITE_GLES_X_CPU_READBACK_RESIZE (llvmpipe's default) leaves an
    output's bilinear resize to the readback; bound on the GPU, the resize
    runs there again, also after unbinding."""
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_TRANSFERS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CPU_READBACK_RESIZE", "1")
    b = gt.ModelBuilder()
    x_id = b.add_input([1, 5, 4, 6])
    mid = b.add_tensor([1, 5, 4, 6])
    b.add_op("RELU", [x_id], [mid])
    out_id = b.add_tensor([1, 9, 7, 6])
    b.add_op("RESIZE_BILINEAR", [mid, b.add_const(np.array([9, 7], np.int32))], [out_id],
             {"align_corners": False, "half_pixel_centers": True})
    b.set_outputs([out_id])
    model = b.build()
    delegate, interp, io = bound_interpreter(model)
    gl = gpu_io.Gl()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    x = gt.random_inputs([inp["shape"]], seed=4)[0]
    cpu = cpu_outputs(model, x)
    assert gt.relative_error(gt.invoke(interp, [x])[0], cpu) <= FP32  # the CPU's resize
    buffer = gl.create_buffer(io.buffer_bytes(out["index"], layout))
    io.bind_buffer(out["index"], buffer, layout)
    x = gt.random_inputs([inp["shape"]], seed=5)[0]
    interp.set_tensor(inp["index"], x)
    interp.invoke()
    floats = io.buffer_bytes(out["index"], layout) // 4
    bound = from_layout(gl.read_buffer(buffer, floats), layout, out["shape"])
    assert gt.relative_error(bound, cpu_outputs(model, x)) <= FP32
    io.unbind(out["index"])
    x = gt.random_inputs([inp["shape"]], seed=6)[0]
    assert gt.relative_error(gt.invoke(interp, [x])[0], cpu_outputs(model, x)) <= FP32
    del interp
