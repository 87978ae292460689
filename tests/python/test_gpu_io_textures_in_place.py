"""Textures read and written in place by the partition's own dispatches
(docs/gpu_io.md, "Textures"; delegate/runtime/runtime_texture_io.cc), on
every runtime path an input texture can land on: the upload conversion
replaced by one texture -> tensor dispatch (llvmpipe's default), the tensor
written directly (direct transfers), the first convolution sampling the
texture itself (fused upload, NVIDIA's default), SSBO reads, tensors in
RGBA textures, and the profile through GPU timer queries (NVIDIA's). Each runs
several invokes with changing textures of odd sizes, texture in and texture
out with no host copy, against the TFLite CPU kernels and the copy path of
the same delegate (fp32 rel. L2 <= 1e-5, fp16 <= 5e-3), and its profile
shows that no layout conversion ran."""

from __future__ import annotations

import numpy as np
import pytest

import gl_textures as gl
from gles_testing import (REPO, assert_close, interpreter, make_delegate, profile,
                          relative_error)
# app_context: the same fixture (a context of the application's own, whose
# delegates go before it is released).
from test_gpu_io_textures import (app_context, as_tensor, conv_model,  # noqa: F401
                                  cpu_interpreter, input_index, output_index,
                                  random_texels, run)

import sys
sys.path.insert(0, str(REPO / "python"))
from tflite_gles import gpu_textures  # noqa: E402

# Small tensors are transferred directly by default on llvmpipe: the other
# paths switch that off.
# Staged: no direct transfers, and no upload fused into the first convolution
# (NVIDIA fuses by default; llvmpipe does not).
STAGED = {"TFLITE_GLES_X_DIRECT_TRANSFERS": "0", "TFLITE_GLES_FUSE_UPLOAD": "0"}
PATHS = {  # name: (environment switches, delegate options)
    "staged": (STAGED, {}),
    # Direct uploads, the output read back through its conversion (as on
    # real GPUs), or read back directly and relaid out on the CPU
    # (llvmpipe's default, DeviceProfile::cpu_readback_relayout).
    "direct": ({"TFLITE_GLES_X_DIRECT_TRANSFERS": "1",
                "TFLITE_GLES_X_CPU_READBACK_RELAYOUT": "0"}, {}),
    "direct_relayout": ({"TFLITE_GLES_X_DIRECT_TRANSFERS": "1",
                         "TFLITE_GLES_X_CPU_READBACK_RELAYOUT": "1"}, {}),
    "fused_upload": (dict(STAGED, TFLITE_GLES_FUSE_UPLOAD="1"), {}),
    "ssbo_reads": (dict(STAGED, TFLITE_GLES_FUSE_UPLOAD="1"), {"storage": "ssbo"}),
    # Every limit at the GLES 3.1 minimum (docs/device_profiles.md: 4 SSBO
    # bindings, 4 image units, 16 texture units).
    "minimum_staged": (STAGED, {"device_profile": "gles31-minimum"}),
    "minimum_fused": (dict(STAGED, TFLITE_GLES_FUSE_UPLOAD="1"),
                      {"device_profile": "gles31-minimum"}),
    # The profile through GPU timer queries, as NVIDIA's: it listed the
    # readback conversion a bound output texture skips (H100, session 9).
    "timer_staged": (dict(STAGED, TFLITE_GLES_X_TIMER_QUERIES="1"), {}),
    # NVIDIA's choices together: SSBO storage, the fused upload, copy
    # threads, timer-query profiling.
    "nvidia_like": (dict(STAGED, TFLITE_GLES_FUSE_UPLOAD="1", TFLITE_GLES_X_TIMER_QUERIES="1",
                         TFLITE_GLES_X_COPY_THREADS="2"), {"storage": "ssbo"}),
    # Tensors kept in RGBA textures (storage=rgba_texture): the tensor side
    # of each in-place dispatch is an image or a sampler, not a buffer.
    "rgba_staged": (STAGED, {"storage": "rgba_texture"}),
    "rgba_fused": (dict(STAGED, TFLITE_GLES_FUSE_UPLOAD="1"), {"storage": "rgba_texture"}),
}


# path, fp16, input format, channels taken, output channels, output format
CASES = [
    ("staged", False, "rgba8", (0, 1, 2), 1, "rgba32f"),
    ("staged", True, "rgba16f", (0, 1, 2, 3), 4, "rgba16f"),
    ("direct", False, "rgba32f", (2, 1, 0), 3, "rgba32f"),
    ("direct_relayout", True, "rgba8", (0, 1, 2, 3), 2, "rgba32f"),
    ("fused_upload", False, "rgba8", (2, 1, 0), 1, "rgba32f"),
    ("fused_upload", True, "rgba32f", (0, 1, 2), 4, "rgba16f"),
    ("fused_upload", False, "rgba16f", (3, 0, 1, 2), 2, "rgba32f"),
    ("ssbo_reads", False, "rgba8", (0, 1, 2), 3, "rgba32f"),
    ("minimum_staged", False, "rgba8", (0, 1, 2, 3), 1, "rgba32f"),
    ("minimum_fused", True, "rgba16f", (0, 1, 2), 2, "rgba32f"),
    ("timer_staged", False, "rgba8", (0, 1, 2), 2, "rgba32f"),
    ("nvidia_like", True, "rgba8", (0, 1, 2), 1, "rgba16f"),
    ("rgba_staged", False, "rgba16f", (0, 1, 2, 3), 3, "rgba32f"),
    ("rgba_fused", True, "rgba8", (2, 1, 0), 4, "rgba16f"),
]


@pytest.mark.parametrize("path,fp16,fmt,channels,channels_out,out_fmt", CASES,
                         ids=["-".join(map(str, c[:3])) + f"-{len(c[3])}in-{c[4]}out"
                              for c in CASES])
def test_texture_in_and_out_in_place_match_the_cpu_and_the_copy_path(
        app_context, monkeypatch, path, fp16, fmt, channels, channels_out, out_fmt):
    switches, options = PATHS[path]
    for name, value in switches.items():
        monkeypatch.setenv(name, value)
    height, width = 13, 7  # odd, not square: a transposed or shifted read fails
    model = conv_model(height, width, len(channels), channels_out, seed=len(channels))
    options = dict(options, enable_profiling="true")
    if fp16:
        options["precision_loss_allowed"] = True
    delegate = make_delegate(options)
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    cpu = cpu_interpreter(model)
    rng = np.random.default_rng(11)
    scale, offset = (2.0, -1.0) if fmt == "rgba8" else (0.5, 0.25)
    frames = [random_texels(rng, height, width, fmt) for _ in range(3)]
    # The copy path of the same delegate, before anything is bound.
    copies = [run(interp, as_tensor(t, fmt, scale, offset, channels))[0] for t in frames]
    # The path is the one asked for: upload and readback conversions
    # (staged), the readback conversion only (direct, fused upload), or none
    # (direct_relayout).
    before = [entry["shader"] for entry in profile(delegate)]
    conversions = 2 if "staged" in path else 0 if path == "direct_relayout" else 1
    assert before.count("layout_convert") == conversions, before
    source = gl.make_texture(frames[0], fmt)
    target = gl.empty_texture(width, height, out_fmt)
    gpu_textures.bind_input_texture(delegate, input_index(interp), source, scale=scale,
                                    offset=offset, channels=channels)
    gpu_textures.bind_output_texture(delegate, output_index(interp), target, host_copy=False)
    previous = None
    for texels, copy_path in zip(frames, copies):
        gl.update_texture(source, texels, fmt)
        interp.invoke()
        got = gl.read_texture(target, width, height, out_fmt)
        expected = run(cpu, as_tensor(texels, fmt, scale, offset, channels))[0]
        assert_close([got[..., :channels_out]], [expected], fp16=fp16 or out_fmt == "rgba16f")
        assert_close([got[..., :channels_out]], [copy_path], fp16=fp16 or out_fmt == "rgba16f")
        # Lanes past the tensor's channels: GL's expansion (0, 0, 1).
        tail = np.array([0, 0, 0, 1], np.float32)[channels_out:]
        assert np.array_equal(got[..., channels_out:], np.broadcast_to(tail, got[..., channels_out:].shape))
        if previous is not None:
            assert relative_error(got, previous) > 0.05, "the output did not change"
        previous = got
    # Neither an upload nor a readback conversion ran: the texture was read
    # and written by the partition's own dispatches.
    labels = [(entry["label"], entry["shader"]) for entry in profile(delegate)]
    assert all(shader != "layout_convert" for _, shader in labels), labels
    if path in ("fused_upload", "ssbo_reads", "minimum_fused", "nvidia_like", "rgba_fused"):
        assert any("reads the bound texture" in label for label, _ in labels), labels
    # Unbound, the partition's own reads and conversions come back.
    gpu_textures.unbind_texture(delegate, input_index(interp))
    gpu_textures.unbind_texture(delegate, output_index(interp))
    image = as_tensor(frames[1], fmt, scale, offset, channels)
    assert_close([run(interp, image)], [run(cpu, image)], fp16=fp16)
    assert [entry["shader"] for entry in profile(delegate)] == before
    gl.delete_texture(source)
    gl.delete_texture(target)


@pytest.mark.parametrize("path", ["staged", "fused_upload"])
def test_an_output_texture_with_host_copy_fills_both(app_context, monkeypatch, path):
    """With the interpreter's copy on (the default flags), the texture is
    written in place and the tensor still comes back to the CPU."""
    for name, value in PATHS[path][0].items():
        monkeypatch.setenv(name, value)
    height, width = 9, 11
    model = conv_model(height, width, 3, 2, seed=3)
    delegate = make_delegate()
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    cpu = cpu_interpreter(model)
    rng = np.random.default_rng(12)
    source = gl.make_texture(random_texels(rng, height, width, "rgba8"))
    target = gl.empty_texture(width, height, "rgba32f")
    gpu_textures.bind_input_texture(delegate, input_index(interp), source)
    gpu_textures.bind_output_texture(delegate, output_index(interp), target, scale=3.0,
                                     offset=1.0)
    for _ in range(2):
        texels = random_texels(rng, height, width, "rgba8")
        gl.update_texture(source, texels)
        interp.invoke()
        expected = run(cpu, as_tensor(texels, "rgba8", 1.0, 0.0, (0, 1, 2)))
        assert_close([interp.get_tensor(output_index(interp))], [expected])
        got = gl.read_texture(target, width, height, "rgba32f")[..., :2]
        assert_close([got], [expected[0] * 3.0 + 1.0])
    gl.delete_texture(source)
    gl.delete_texture(target)
