"""GL textures for the texture-binding tests, made and read with ctypes calls
into libGLESv2 (never through tflite-gles), in whatever context is current
(egl_app_context.ApplicationContext). Reads go through a framebuffer and
glReadPixels: RGBA8 is color-renderable in GLES 3.0; RGBA16F/32F need
GL_EXT_color_buffer_float, which llvmpipe and NVIDIA offer."""

from __future__ import annotations

import ctypes

import numpy as np

GL_TEXTURE_2D = 0x0DE1
GL_TEXTURE_CUBE_MAP = 0x8513
GL_RGBA = 0x1908
GL_UNSIGNED_BYTE = 0x1401
GL_FLOAT = 0x1406
GL_RGBA8 = 0x8058
GL_RGBA16F = 0x881A
GL_RGBA32F = 0x8814
GL_RGBA8UI = 0x8D7C
GL_RGBA_INTEGER = 0x8D99
GL_FRAMEBUFFER = 0x8D40
GL_COLOR_ATTACHMENT0 = 0x8CE0
GL_FRAMEBUFFER_COMPLETE = 0x8CD5
GL_PACK_ALIGNMENT = 0x0D05
GL_UNPACK_ALIGNMENT = 0x0CF5
GL_TEXTURE_MIN_FILTER = 0x2801
GL_NEAREST = 0x2600

FORMATS = {"rgba8": GL_RGBA8, "rgba16f": GL_RGBA16F, "rgba32f": GL_RGBA32F}

_gl = ctypes.CDLL("libGLESv2.so.2")
_u = ctypes.c_uint
_i = ctypes.c_int
_p = ctypes.c_void_p
for _name, _args in [
    ("glGenTextures", [_i, ctypes.POINTER(_u)]),
    ("glDeleteTextures", [_i, ctypes.POINTER(_u)]),
    ("glBindTexture", [_u, _u]),
    ("glTexStorage2D", [_u, _i, _u, _i, _i]),
    ("glTexImage2D", [_u, _i, _i, _i, _i, _i, _u, _u, _p]),
    ("glTexSubImage2D", [_u, _i, _i, _i, _i, _i, _u, _u, _p]),
    ("glTexParameteri", [_u, _u, _i]),
    ("glPixelStorei", [_u, _i]),
    ("glGenFramebuffers", [_i, ctypes.POINTER(_u)]),
    ("glDeleteFramebuffers", [_i, ctypes.POINTER(_u)]),
    ("glBindFramebuffer", [_u, _u]),
    ("glFramebufferTexture2D", [_u, _u, _u, _u, _i]),
    ("glCheckFramebufferStatus", [_u]),
    ("glReadPixels", [_i, _i, _i, _i, _u, _u, _p]),
    ("glFinish", []),
    ("glGetError", []),
]:
    _function = getattr(_gl, _name)
    _function.argtypes = _args
    _function.restype = _u if _name in ("glCheckFramebufferStatus", "glGetError") else None


def _check(what: str) -> None:
    error = _gl.glGetError()
    assert error == 0, f"{what}: GL error 0x{error:x}"


def _pixels(image: np.ndarray, fmt: str):
    """The upload's (type, contiguous array) for `fmt`."""
    if fmt == "rgba8":
        assert image.dtype == np.uint8
        return GL_UNSIGNED_BYTE, np.ascontiguousarray(image)
    return GL_FLOAT, np.ascontiguousarray(image, dtype=np.float32)


def make_texture(image: np.ndarray, fmt: str = "rgba8", immutable: bool = True) -> int:
    """A GL_TEXTURE_2D holding `image` (H x W x 4; uint8 for rgba8, floats
    otherwise); row 0 of the array is texel row 0. immutable=False uses
    glTexImage2D and leaves GL's default filter (NEAREST_MIPMAP_LINEAR),
    which makes a texture without mipmaps incomplete for a plain sampler."""
    height, width, channels = image.shape
    assert channels == 4
    name = _u(0)
    _gl.glGenTextures(1, ctypes.byref(name))
    _gl.glBindTexture(GL_TEXTURE_2D, name.value)
    _gl.glPixelStorei(GL_UNPACK_ALIGNMENT, 1)
    gl_type, data = _pixels(image, fmt)
    if immutable:
        _gl.glTexStorage2D(GL_TEXTURE_2D, 1, FORMATS[fmt], width, height)
        _gl.glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA, gl_type,
                            data.ctypes.data)
    else:
        _gl.glTexImage2D(GL_TEXTURE_2D, 0, FORMATS[fmt], width, height, 0, GL_RGBA, gl_type,
                         data.ctypes.data)
    _gl.glBindTexture(GL_TEXTURE_2D, 0)
    _check(f"making a {width}x{height} {fmt} texture")
    return name.value


def empty_texture(width: int, height: int, fmt: str = "rgba8") -> int:
    """An immutable texture of undefined contents (an output target)."""
    name = _u(0)
    _gl.glGenTextures(1, ctypes.byref(name))
    _gl.glBindTexture(GL_TEXTURE_2D, name.value)
    _gl.glTexStorage2D(GL_TEXTURE_2D, 1, FORMATS[fmt], width, height)
    _gl.glBindTexture(GL_TEXTURE_2D, 0)
    _check("making an output texture")
    return name.value


def update_texture(name: int, image: np.ndarray, fmt: str = "rgba8") -> None:
    height, width, _ = image.shape
    gl_type, data = _pixels(image, fmt)
    _gl.glBindTexture(GL_TEXTURE_2D, name)
    _gl.glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA, gl_type,
                        data.ctypes.data)
    _gl.glBindTexture(GL_TEXTURE_2D, 0)
    _check("updating a texture")


def cube_map() -> int:
    """A texture that is not a GL_TEXTURE_2D."""
    name = _u(0)
    _gl.glGenTextures(1, ctypes.byref(name))
    _gl.glBindTexture(GL_TEXTURE_CUBE_MAP, name.value)
    _gl.glBindTexture(GL_TEXTURE_CUBE_MAP, 0)
    _check("making a cube map")
    return name.value


def integer_texture(width: int, height: int) -> int:
    """An immutable GL_RGBA8UI texture (a format bindings refuse)."""
    name = _u(0)
    _gl.glGenTextures(1, ctypes.byref(name))
    _gl.glBindTexture(GL_TEXTURE_2D, name.value)
    _gl.glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8UI, width, height)
    _gl.glBindTexture(GL_TEXTURE_2D, 0)
    _check("making an integer texture")
    return name.value


def read_texture(name: int, width: int, height: int, fmt: str = "rgba8") -> np.ndarray:
    """Level 0 as H x W x 4 (uint8 for rgba8, float32 otherwise)."""
    framebuffer = _u(0)
    _gl.glGenFramebuffers(1, ctypes.byref(framebuffer))
    _gl.glBindFramebuffer(GL_FRAMEBUFFER, framebuffer.value)
    _gl.glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, name, 0)
    status = _gl.glCheckFramebufferStatus(GL_FRAMEBUFFER)
    assert status == GL_FRAMEBUFFER_COMPLETE, f"framebuffer of texture {name}: 0x{status:x}"
    _gl.glPixelStorei(GL_PACK_ALIGNMENT, 1)
    if fmt == "rgba8":
        out = np.empty((height, width, 4), np.uint8)
        _gl.glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, out.ctypes.data)
    else:
        out = np.empty((height, width, 4), np.float32)
        _gl.glReadPixels(0, 0, width, height, GL_RGBA, GL_FLOAT, out.ctypes.data)
    _gl.glBindFramebuffer(GL_FRAMEBUFFER, 0)
    _gl.glDeleteFramebuffers(1, ctypes.byref(framebuffer))
    _check("reading a texture")
    return out


def delete_texture(name: int) -> None:
    value = _u(name)
    _gl.glDeleteTextures(1, ctypes.byref(value))
    _check("deleting a texture")
