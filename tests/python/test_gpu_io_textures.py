"""Textures bound to a model's image input and output (docs/gpu_io.md,
"Textures"), in the real LiteRT runtime: a texture run against the copy path
(the same pixels given as a float input) and the TFLite CPU kernels, output
textures read back through a framebuffer, several invokes with changing
textures, and every refusal as an error with a message, the process alive.

The application (this test) makes its EGL context current before the
interpreter applies the delegate, so the delegate runs in it and the
textures made here are names of its context."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import egl_app_context
import gl_textures as gl
from gles_testing import (LIB, REPO, ModelBuilder, assert_close, interpreter, make_delegate,
                          relative_error, stats)

import sys
sys.path.insert(0, str(REPO / "python"))
import model_catalog  # noqa: E402  (tools/, on the path through gles_testing)
from tflite_gles import gpu_textures  # noqa: E402

SELFIE = model_catalog.CATALOG["selfie_segmentation"]


@pytest.fixture
def app_context():
    with egl_app_context.ApplicationContext() as application:
        application.make_current()
        yield application
        # The test's interpreters and delegates go while their context is
        # current, as the delegate's contract asks (docs/gpu_io.md,
        # "Lifetime"): left to a later garbage collection, they were deleted
        # during the next test, under its context, and on NVIDIA that test's
        # Invoke then failed (glUseProgram GL_INVALID_VALUE; session 9).
        gc.collect()
        egl_app_context.release_current()


def conv_model(height, width, channels_in, channels_out, seed=0, activation="NONE"):
    """One 3x3 CONV_2D (SAME): every output pixel mixes its neighbours'
    channels, so a transposed, flipped or channel-swapped image shows."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.add_input([1, height, width, channels_in], name="image")
    w = b.add_const(rng.uniform(-1, 1, (channels_out, 3, 3, channels_in)).astype(np.float32))
    bias = b.add_const(rng.uniform(-0.5, 0.5, channels_out).astype(np.float32))
    y = b.add_tensor([1, height, width, channels_out], name="out")
    b.add_op("CONV_2D", [x, w, bias], [y], {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                                            "fused_activation_function": activation})
    return b.build()


def cpu_interpreter(model):
    """LiteRT's builtin CPU kernels, allocated."""
    interp = interpreter(model)
    interp.allocate_tensors()
    return interp


def run(interp, image):
    interp.set_tensor(interp.get_input_details()[0]["index"], image)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"])


def input_index(interp):
    return interp.get_input_details()[0]["index"]


def output_index(interp):
    return interp.get_output_details()[0]["index"]


def as_tensor(texels, fmt, scale, offset, channels):
    """What the binding promises: texel (RGBA8 as byte / 255) * scale + offset."""
    values = texels.astype(np.float32) / 255.0 if fmt == "rgba8" else texels.astype(np.float32)
    picked = values[..., list(channels)]
    return (picked * np.float32(scale) + np.float32(offset))[None].astype(np.float32)


def random_texels(rng, height, width, fmt):
    if fmt == "rgba8":
        return rng.integers(0, 256, (height, width, 4), dtype=np.uint8)
    values = rng.uniform(-2, 2, (height, width, 4)).astype(np.float32)
    if fmt == "rgba16f":  # exactly representable, so the CPU sees what the GPU reads
        values = values.astype(np.float16).astype(np.float32)
    return values


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("fmt,channels,scale,offset", [
    ("rgba8", (0, 1, 2), 2.0, -1.0),                       # camera bytes to [-1, 1]
    ("rgba8", (2, 1, 0), (1.0, 0.5, 0.25), (0.0, 0.1, 0.2)),  # BGR, per channel
    ("rgba16f", (0, 1, 2, 3), 1.0, 0.0),                   # all four
    ("rgba32f", (3, 0, 1, 2), 0.5, 0.25),
])
def test_input_texture_matches_the_copy_path_and_the_cpu(app_context, fp16, fmt, channels,
                                                         scale, offset):
    height, width = 11, 17  # not square: a transposed read fails
    model = conv_model(height, width, len(channels), 5, seed=1)
    options = {"precision_loss_allowed": True} if fp16 else {}
    delegate = make_delegate(options)
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    rng = np.random.default_rng(2)
    texels = random_texels(rng, height, width, fmt)
    image = as_tensor(texels, fmt, scale, offset, channels)
    cpu = run(cpu_interpreter(model), image)
    copy_path = run(interp, image)
    texture = gl.make_texture(texels, fmt)
    gpu_textures.bind_input_texture(delegate, input_index(interp), texture, scale=scale,
                                    offset=offset, channels=channels)
    # The input tensor holds other data now: only the texture can give the answer.
    interp.set_tensor(input_index(interp), np.full_like(image, 7.0))
    interp.invoke()
    bound = interp.get_tensor(output_index(interp))
    assert_close([bound], [cpu], fp16=fp16)
    assert_close([bound], [copy_path], fp16=fp16)
    gl.delete_texture(texture)


def test_a_mutable_texture_without_mipmaps_is_read(app_context):
    """glTexImage2D with GL's default filter (NEAREST_MIPMAP_LINEAR) and one
    level is incomplete for a plain sampler (texelFetch would give
    (0, 0, 0, 1)); the delegate's sampler object reads it."""
    model = conv_model(8, 6, 3, 2)
    delegate = make_delegate()
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    texels = random_texels(np.random.default_rng(3), 8, 6, "rgba8")
    texture = gl.make_texture(texels, "rgba8", immutable=False)
    gpu_textures.bind_input_texture(delegate, input_index(interp), texture)
    interp.invoke()
    expected = run(cpu_interpreter(model), as_tensor(texels, "rgba8", 1.0, 0.0, (0, 1, 2)))
    assert_close([interp.get_tensor(output_index(interp))], [expected])


@pytest.mark.parametrize("fmt", ["rgba32f", "rgba16f", "rgba8"])
@pytest.mark.parametrize("channels_out", [1, 2, 3, 4])
def test_output_texture_holds_the_cpu_output(app_context, fmt, channels_out):
    height, width = 9, 14
    activation = "RELU_N1_TO_1" if fmt == "rgba8" else "NONE"
    model = conv_model(height, width, 3, channels_out, seed=channels_out, activation=activation)
    delegate = make_delegate()
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    image = np.random.default_rng(4).uniform(-1, 1, (1, height, width, 3)).astype(np.float32)
    cpu = run(cpu_interpreter(model), image)[0]
    # rgba8 stores [0, 1]: [-1, 1] maps there with scale 0.5, offset 0.5.
    scale, offset = (0.5, 0.5) if fmt == "rgba8" else (2.0, -0.5)
    target = gl.empty_texture(width, height, fmt)
    gpu_textures.bind_output_texture(delegate, output_index(interp), target, scale=scale,
                                     offset=offset)
    interp.set_tensor(input_index(interp), image)
    interp.invoke()
    # The interpreter's buffer-handle rules copied it back as well (from the
    # binding's float buffer, before the texture's scale and offset).
    assert_close([interp.get_tensor(output_index(interp))[0]], [cpu])
    texels = gl.read_texture(target, width, height, fmt)
    expected = np.zeros((height, width, 4), np.float32)
    expected[..., 3] = 1.0  # lanes past the tensor's channels: (0, 0, 1)
    expected[..., :channels_out] = cpu * scale + offset
    if fmt == "rgba8":
        # One rounding to 8 bits (GLES: the nearest step or the next).
        got = texels.astype(np.float32) / 255.0
        assert np.abs(got - expected).max() <= 1.0 / 255.0 + 1e-6
    else:
        assert_close([texels[..., :channels_out]], [expected[..., :channels_out]],
                     fp16=fmt == "rgba16f")
        assert np.array_equal(texels[..., channels_out:], expected[..., channels_out:])
    gl.delete_texture(target)


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
def test_changing_textures_over_several_invokes_leave_no_stale_data(app_context, fp16):
    height, width = 12, 10
    model = conv_model(height, width, 3, 3, seed=5)
    delegate = make_delegate({"precision_loss_allowed": True} if fp16 else {})
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    cpu = cpu_interpreter(model)
    rng = np.random.default_rng(6)
    source = gl.make_texture(random_texels(rng, height, width, "rgba8"))
    target = gl.empty_texture(width, height, "rgba32f")
    gpu_textures.bind_input_texture(delegate, input_index(interp), source, scale=2, offset=-1)
    # No host copy: the TFLite tensor keeps what it held.
    gpu_textures.bind_output_texture(delegate, output_index(interp), target, host_copy=False)
    interp.set_tensor(output_index(interp), np.full((1, height, width, 3), 42.0, np.float32))
    previous = None
    for frame in range(4):
        texels = random_texels(rng, height, width, "rgba8")
        if frame == 2:  # a new texture object replaces the bound one
            gl.delete_texture(source)
            source = gl.make_texture(texels)
            gpu_textures.bind_input_texture(delegate, input_index(interp), source, scale=2,
                                            offset=-1)
        else:
            gl.update_texture(source, texels)
        interp.invoke()
        got = gl.read_texture(target, width, height, "rgba32f")[..., :3]
        expected = run(cpu, as_tensor(texels, "rgba8", 2.0, -1.0, (0, 1, 2)))[0]
        assert_close([got], [expected], fp16=fp16)
        if previous is not None:
            assert relative_error(got, previous) > 0.1, "the output did not change"
        previous = got
        assert (interp.get_tensor(output_index(interp)) == 42.0).all(), "copied to the CPU"
    # Unbound: the copies come back, both ways.
    gpu_textures.unbind_texture(delegate, input_index(interp))
    gpu_textures.unbind_texture(delegate, output_index(interp))
    image = rng.uniform(-1, 1, (1, height, width, 3)).astype(np.float32)
    assert_close([run(interp, image)], [run(cpu, image)], fp16=fp16)
    assert stats(delegate)["invokes"] == 5
    gl.delete_texture(source)
    gl.delete_texture(target)


def test_selfie_segmentation_texture_in_texture_out_matches_the_cpu(app_context):
    """The pipeline of the example: an RGBA8 photograph in, the mask out."""
    model = str(SELFIE.path)
    delegate = make_delegate()
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    _, height, width, _ = interp.get_input_details()[0]["shape"]
    rng = np.random.default_rng(7)
    texels = random_texels(rng, height, width, "rgba8")
    source = gl.make_texture(texels)
    target = gl.empty_texture(width, height, "rgba32f")
    gpu_textures.bind_input_texture(delegate, input_index(interp), source)  # [0, 1]
    gpu_textures.bind_output_texture(delegate, output_index(interp), target, host_copy=False)
    interp.invoke()
    mask = gl.read_texture(target, width, height, "rgba32f")[..., :1]
    # LiteRT's CPU lacks MediaPipe's last op: its builtin twin (model_catalog).
    expected = run(cpu_interpreter(model_catalog.cpu_reference_model(SELFIE)),
                   as_tensor(texels, "rgba8", 1.0, 0.0, (0, 1, 2)))[0]
    # Probabilities: their largest difference (as test_hostile_real_models).
    assert np.abs(mask - expected).max() <= 1e-4


# --- Refusals: each an error with a message, the delegate still usable -------

def refused(call, pattern):
    with pytest.raises(gpu_textures.TextureError, match=pattern) as info:
        call()
    return str(info.value)


def test_every_refusal_says_why_and_changes_nothing(app_context):
    height, width = 8, 6
    model = conv_model(height, width, 3, 2)
    delegate = make_delegate()
    early = refused(lambda: gpu_textures.bind_input_texture(delegate, 0, 1),
                    "after ModifyGraphWithDelegate")
    assert "no GPU partition" in early
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    image, out = input_index(interp), output_index(interp)
    texels = random_texels(np.random.default_rng(8), height, width, "rgba8")
    good = gl.make_texture(texels)
    wrong_size = gl.make_texture(random_texels(np.random.default_rng(9), width, height, "rgba8"))
    message = refused(lambda: gpu_textures.bind_input_texture(delegate, image, wrong_size),
                      "is 8x6 but the tensor is 6x8")
    assert "does not resize" in message
    integer = gl.integer_texture(width, height)
    refused(lambda: gpu_textures.bind_input_texture(delegate, image, integer),
            "internal format GL_RGBA8UI")
    cube = gl.cube_map()
    refused(lambda: gpu_textures.bind_input_texture(delegate, image, cube),
            "not a GL_TEXTURE_2D")
    deleted = gl.make_texture(texels)
    gl.delete_texture(deleted)
    refused(lambda: gpu_textures.bind_input_texture(delegate, image, deleted),
            "is not a texture of the delegate's GL context")
    refused(lambda: gpu_textures.bind_input_texture(delegate, image, 123456),
            "is not a texture")
    refused(lambda: gpu_textures.bind_input_texture(delegate, 10_000, good),
            "unknown tensor index 10000")
    weights = next(i for i in range(len(interp.get_tensor_details()))
                   if i not in (image, out))
    refused(lambda: gpu_textures.bind_input_texture(delegate, weights, good),
            "is not an input or output of a GPU partition")
    refused(lambda: gpu_textures.bind_input_texture(delegate, out, good),
            "is a GPU partition's output, not its input")
    refused(lambda: gpu_textures.bind_output_texture(delegate, image, good),
            "is a GPU partition's input, not its output")
    refused(lambda: gpu_textures.bind_input_texture(delegate, image, good, channels=(0, 1, 4)),
            "components are 0 \\(R\\) to 3 \\(A\\)")
    mutable_out = gl.make_texture(random_texels(np.random.default_rng(1), height, width,
                                                "rgba32f"), "rgba32f", immutable=False)
    refused(lambda: gpu_textures.bind_output_texture(delegate, out, mutable_out),
            "glTexStorage2D")
    refused(lambda: gpu_textures.unbind_texture(delegate, image), "is not bound")
    errors = []

    def elsewhere():
        try:
            gpu_textures.bind_input_texture(delegate, image, good)
        except gpu_textures.TextureError as error:
            errors.append(str(error))

    worker = threading.Thread(target=elsewhere)
    worker.start()
    worker.join()
    assert errors and "is not current on this thread" in errors[0], errors
    # Nothing was bound by the refusals: the copy path still answers.
    data = as_tensor(texels, "rgba8", 1.0, 0.0, (0, 1, 2))
    assert_close([run(interp, data)], [run(cpu_interpreter(model), data)])
    # A texture deleted after binding: Invoke fails with the reason, and a
    # new binding works.
    doomed = gl.make_texture(texels)
    gpu_textures.bind_input_texture(delegate, image, doomed)
    gl.delete_texture(doomed)
    with pytest.raises(RuntimeError, match="is not a texture of the delegate's GL context"):
        interp.invoke()
    gpu_textures.bind_input_texture(delegate, image, good)
    interp.invoke()
    assert_close([interp.get_tensor(out)], [run(cpu_interpreter(model), data)])
    for texture in (good, wrong_size, integer, cube, mutable_out):
        gl.delete_texture(texture)


def test_a_foreign_delegate_pointer_is_refused():
    with pytest.raises(gpu_textures.TextureError, match="not a tflite-gles delegate"):
        gpu_textures.bind_input_texture(0, 0, 1, library=LIB)


def test_a_quantized_models_input_texture_feeds_its_float_view(app_context):
    """uint8 MobileNet: a bound texture gives the input's real values, the
    float view the delegate computes in (docs/design.md, "Quantized
    models"). Texels on the input's grid are exactly what the copy path
    dequantizes, so both paths give the same bytes, and the CPU's class."""
    model = str(model_catalog.SHARED_MODELS / "mobilenet_v1_0.25_224_quant.tflite")
    delegate = make_delegate()
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    detail = interp.get_input_details()[0]
    assert detail["dtype"] == np.uint8
    scale, zero_point = detail["quantization"]
    _, height, width, _ = detail["shape"]
    from sample_images import load_rgb  # Pillow: here only (the GPU machine may lack it)
    # A photograph (its bytes are the quantized input): a clear top-1 class.
    q = load_rgb("chelsea", height, width)[None]
    real = (q[0].astype(np.float32) - np.float32(zero_point)) * np.float32(scale)
    copy_path = run(interp, q)
    texture = gl.make_texture(np.concatenate([real, np.ones_like(real[..., :1])], -1),
                              "rgba32f")
    gpu_textures.bind_input_texture(delegate, detail["index"], texture)
    interp.set_tensor(detail["index"], np.zeros_like(q))  # only the texture is right
    interp.invoke()
    bound = interp.get_tensor(output_index(interp))
    assert np.array_equal(bound, copy_path)
    cpu = run(cpu_interpreter(model), q)
    assert np.argmax(bound) == np.argmax(cpu)
    gpu_textures.unbind_texture(delegate, detail["index"])
    gl.delete_texture(texture)


def test_gpu_io_binds_textures_as_it_binds_buffers(app_context):
    """gpu_io.GpuIo (the buffer helper) offers the texture bindings too, and
    its errors and unbind cover them."""
    from tflite_gles import gpu_io
    model = conv_model(7, 5, 3, 2, seed=11)
    delegate = make_delegate()
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    io = gpu_io.GpuIo(delegate, LIB)
    texels = random_texels(np.random.default_rng(12), 7, 5, "rgba8")
    texture = gl.make_texture(texels)
    with pytest.raises(gpu_io.GpuIoError, match="is 7x5 but the tensor is 5x7"):
        io.bind_input_texture(input_index(interp), gl.make_texture(texels.transpose(1, 0, 2)))
    io.bind_input_texture(input_index(interp), texture, scale=2, offset=-1)
    interp.invoke()
    image = as_tensor(texels, "rgba8", 2.0, -1.0, (0, 1, 2))
    assert_close([interp.get_tensor(output_index(interp))], [run(cpu_interpreter(model), image)])
    io.unbind(input_index(interp))
    other = np.random.default_rng(13).uniform(-1, 1, image.shape).astype(np.float32)
    assert_close([run(interp, other)], [run(cpu_interpreter(model), other)])
    gl.delete_texture(texture)
