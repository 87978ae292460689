"""An output texture written by the epilogue of the kernel that produces the
output (docs/gpu_io.md, "Textures"; delegate/runtime/runtime_texture_io.cc,
PlanTextureEpilogue): selfie segmentation's last layer is a transposed
convolution with its LOGISTIC fused, and transpose_conv.comp's TEXTURE_OUTPUT
variant stores each output pixel into the application's texture beside the
tensor, in place of a texture -> texture_io dispatch after it.

A CONV_2D -> TRANSPOSE_CONV (stride 2) -> LOGISTIC model of odd size, its
input and output bound as textures (no host copy), on the runtime paths an
output can take (staged, direct, fused upload, SSBO reads, the GLES 3.1
minimum profile, RGBA-texture tensors), fp32 and fp16, RGBA8 / RGBA16F /
RGBA32F output textures with 1-4 channels and a scale and offset: several
invokes with changing inputs against the TFLite CPU kernels and the copy
path of the same delegate (fp32 rel. L2 <= 1e-5, fp16 <= 5e-3; RGBA8 one
rounding to 8 bits), the profile showing the epilogue variant and no
dispatch of its own for the texture; and the same texels with the epilogue
switched off (TFLITE_GLES_X_TEXTURE_EPILOGUE=0, the dispatch after)."""

from __future__ import annotations

import numpy as np
import pytest

import gl_textures as gl
from gles_testing import REPO, ModelBuilder, assert_close, interpreter, make_delegate, profile
from test_gpu_io_textures import (app_context, as_tensor, cpu_interpreter,  # noqa: F401
                                  input_index, output_index, random_texels, run)
from test_gpu_io_textures_in_place import PATHS

import sys
sys.path.insert(0, str(REPO / "python"))
from tflite_gles import gpu_textures  # noqa: E402


def transpose_model(height, width, channels_in, channels_out, seed):
    """CONV_2D 3x3 SAME (channels_in -> 6) -> TRANSPOSE_CONV 3x3 stride 2
    SAME with bias (-> channels_out, 2H x 2W) -> LOGISTIC (fused into the
    transposed convolution's store, as in selfie segmentation)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.add_input([1, height, width, channels_in], name="image")
    w = b.add_const(rng.uniform(-1, 1, (6, 3, 3, channels_in)).astype(np.float32))
    bias = b.add_const(rng.uniform(-0.5, 0.5, 6).astype(np.float32))
    hidden = b.add_tensor([1, height, width, 6])
    b.add_op("CONV_2D", [x, w, bias], [hidden], {"padding": "SAME", "stride_w": 1,
                                                 "stride_h": 1})
    out_shape = [1, 2 * height, 2 * width, channels_out]
    shape = b.add_const(np.array(out_shape, np.int32))
    tw = b.add_const(rng.uniform(-0.5, 0.5, (channels_out, 3, 3, 6)).astype(np.float32))
    tbias = b.add_const(rng.uniform(-1, 1, channels_out).astype(np.float32))
    logits = b.add_tensor(out_shape)
    b.add_op("TRANSPOSE_CONV", [shape, tw, hidden, tbias], [logits],
             {"padding": "SAME", "stride_h": 2, "stride_w": 2}, version=3)
    y = b.add_tensor(out_shape, name="mask")
    b.add_op("LOGISTIC", [logits], [y])
    return b.build()


# path, fp16, output channels, output format
CASES = [
    ("fused_upload", False, 1, "rgba32f"),
    ("fused_upload", True, 4, "rgba16f"),
    ("staged", False, 3, "rgba8"),
    ("direct", True, 2, "rgba32f"),
    ("nvidia_like", True, 1, "rgba8"),
    ("minimum_staged", False, 4, "rgba32f"),
    ("rgba_fused", False, 2, "rgba16f"),
    ("rgba_staged", True, 3, "rgba32f"),
]


def bind_and_run(interp, delegate, frames, height, width, channels_out, out_fmt, scale,
                 offset):
    """Binds RGBA8 input and `out_fmt` output textures, runs each frame; the
    output texels of each."""
    source = gl.make_texture(frames[0], "rgba8")
    target = gl.empty_texture(2 * width, 2 * height, out_fmt)
    gpu_textures.bind_input_texture(delegate, input_index(interp), source)
    gpu_textures.bind_output_texture(delegate, output_index(interp), target, scale=scale,
                                     offset=offset, host_copy=False)
    results = []
    for texels in frames:
        gl.update_texture(source, texels, "rgba8")
        interp.invoke()
        results.append(gl.read_texture(target, 2 * width, 2 * height, out_fmt))
    gl.delete_texture(source)
    gl.delete_texture(target)
    return results


def check_texels(got, expected_tensor, channels_out, out_fmt, scale, offset, fp16):
    expected = np.zeros(got.shape, np.float32)
    expected[..., 3] = 1.0  # lanes past the tensor's channels: (0, 0, 1)
    expected[..., :channels_out] = expected_tensor * scale + offset
    if out_fmt == "rgba8":
        # One rounding to 8 bits (GLES: the nearest step or the next), after
        # fp16's own error (a sigmoid in (0, 1): 5e-3 relative is < 5e-3).
        bound = 1.0 / 255.0 + (5e-3 if fp16 else 1e-6)
        assert np.abs(got.astype(np.float32) / 255.0 - expected).max() <= bound
        return
    assert_close([got[..., :channels_out]], [expected[..., :channels_out]],
                 fp16=fp16 or out_fmt == "rgba16f")
    assert np.array_equal(got[..., channels_out:], expected[..., channels_out:])


@pytest.mark.parametrize("path,fp16,channels_out,out_fmt", CASES,
                         ids=[f"{c[0]}-{'fp16' if c[1] else 'fp32'}-{c[2]}out-{c[3]}"
                              for c in CASES])
def test_output_texture_written_by_the_last_kernel_matches_the_cpu_and_the_copy_path(
        app_context, monkeypatch, path, fp16, channels_out, out_fmt):
    switches, options = PATHS[path]
    for name, value in switches.items():
        monkeypatch.setenv(name, value)
    height, width = 7, 5  # output 14 x 10: odd halves, not square
    model = transpose_model(height, width, 3, channels_out, seed=channels_out)
    options = dict(options, enable_profiling="true")
    if fp16:
        options["precision_loss_allowed"] = True
    delegate = make_delegate(options)
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    cpu = cpu_interpreter(model)
    rng = np.random.default_rng(21)
    frames = [random_texels(rng, height, width, "rgba8") for _ in range(3)]
    tensors = [as_tensor(t, "rgba8", 1.0, 0.0, (0, 1, 2)) for t in frames]
    copies = [run(interp, t)[0] for t in tensors]
    scale, offset = (0.5, 0.25) if out_fmt == "rgba8" else (2.0, -0.5)
    results = bind_and_run(interp, delegate, frames, height, width, channels_out, out_fmt,
                           scale, offset)
    labels = [(entry["label"], entry["shader"]) for entry in profile(delegate)]
    # The transposed convolution wrote the texture, and no readback
    # conversion ran.
    assert any(shader == "transpose_conv" and "writes the bound texture" in label
               for label, shader in labels), labels
    assert all(shader != "layout_convert" for _, shader in labels), labels
    previous = None
    for got, tensor, copy_path in zip(results, tensors, copies):
        expected = run(cpu, tensor)[0]
        check_texels(got, expected, channels_out, out_fmt, scale, offset, fp16)
        check_texels(got, copy_path, channels_out, out_fmt, scale, offset, fp16)
        if previous is not None:
            assert np.abs(got.astype(np.float32) - previous).max() > 0, "the output did not change"
        previous = got.astype(np.float32)
    # Unbound, the plain transposed convolution and the readback come back.
    gpu_textures.unbind_texture(delegate, input_index(interp))
    gpu_textures.unbind_texture(delegate, output_index(interp))
    assert_close([run(interp, tensors[1])], [run(cpu, tensors[1])], fp16=fp16)
    labels = [entry["label"] for entry in profile(delegate)]
    assert not any("writes the bound texture" in label for label in labels), labels


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
def test_epilogue_and_dispatch_after_write_the_same_texels(app_context, monkeypatch, fp16):
    """The epilogue writes what texture_io's dispatch after the kernel writes
    from the stored tensor: texel for texel in fp32; in fp16 (the half the
    tensor holds) up to the half's last bit."""
    monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", "1")
    height, width = 6, 9
    model = transpose_model(height, width, 3, 2, seed=4)
    rng = np.random.default_rng(22)
    frames = [random_texels(rng, height, width, "rgba8") for _ in range(2)]
    outputs = {}
    for epilogue in ("1", "0"):
        monkeypatch.setenv("TFLITE_GLES_X_TEXTURE_EPILOGUE", epilogue)
        options = {"enable_profiling": "true", "precision_loss_allowed": fp16}
        delegate = make_delegate(options)
        interp = interpreter(model, delegate)
        interp.allocate_tensors()
        outputs[epilogue] = bind_and_run(interp, delegate, frames, height, width, 2,
                                         "rgba32f", 3.0, 1.0)
        # (The profile lists the partition's steps, not a binding's own
        # dispatch after them.)
        labels = [entry["label"] for entry in profile(delegate)]
        assert any("writes the bound texture" in label for label in labels) == (
            epilogue == "1"), labels
        del interp, delegate
    for with_epilogue, with_dispatch in zip(outputs["1"], outputs["0"]):
        if not fp16:
            assert np.array_equal(with_epilogue, with_dispatch)
            continue
        # fp16: both round the value to half, but the H100's compiler did not
        # always round the epilogue's copy as the tensor's store (a last-bit
        # difference of the half); equal up to one half step of a sigmoid
        # output (< 1, steps <= 2^-11) times the scale 3.
        difference = np.abs(with_epilogue - with_dispatch)
        assert difference.max() <= 3.0 * 2.0 ** -11, difference.max()
        assert np.array_equal(with_epilogue[..., 2:], with_dispatch[..., 2:])


@pytest.mark.parametrize("path", ["fused_upload", "direct"])
def test_epilogue_with_host_copy_fills_the_texture_and_the_tensor(app_context, monkeypatch,
                                                                  path):
    """With the interpreter's copy on (the default flags), the kernel writes
    the texture and the tensor still comes back to the CPU."""
    for name, value in PATHS[path][0].items():
        monkeypatch.setenv(name, value)
    height, width = 5, 8
    model = transpose_model(height, width, 3, 3, seed=6)
    delegate = make_delegate({"enable_profiling": "true"})
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    cpu = cpu_interpreter(model)
    rng = np.random.default_rng(23)
    source = gl.make_texture(random_texels(rng, height, width, "rgba8"))
    target = gl.empty_texture(2 * width, 2 * height, "rgba32f")
    gpu_textures.bind_input_texture(delegate, input_index(interp), source)
    gpu_textures.bind_output_texture(delegate, output_index(interp), target, scale=3.0,
                                     offset=1.0)
    for _ in range(2):
        texels = random_texels(rng, height, width, "rgba8")
        gl.update_texture(source, texels)
        interp.invoke()
        expected = run(cpu, as_tensor(texels, "rgba8", 1.0, 0.0, (0, 1, 2)))
        assert_close([interp.get_tensor(output_index(interp))], [expected])
        got = gl.read_texture(target, 2 * width, 2 * height, "rgba32f")
        check_texels(got, expected[0], 3, "rgba32f", 3.0, 1.0, False)
    labels = [entry["label"] for entry in profile(delegate)]
    assert any("writes the bound texture" in label for label in labels), labels
    gl.delete_texture(source)
    gl.delete_texture(target)
