"""Bind an application's GL textures to a model's image input and output
(docs/gpu_io.md, "Textures"): ctypes over the C API of
delegate/include/tflite_gles/delegate.h. gpu_io.GpuIo offers the same as
methods (bind_input_texture, bind_output_texture, unbind).

    import tflite_gles
    from tflite_gles import gpu_textures

    # An EGLContext of the application is current on this thread before the
    # interpreter applies the delegate: the delegate then runs in it, and the
    # application's texture names are valid there.
    delegate = tflite_gles.load_delegate()
    interpreter = Interpreter(model_path=..., experimental_delegates=[delegate])
    interpreter.allocate_tensors()
    image = interpreter.get_input_details()[0]["index"]
    mask = interpreter.get_output_details()[0]["index"]
    gpu_textures.bind_input_texture(delegate, image, camera_texture, scale=2, offset=-1)
    gpu_textures.bind_output_texture(delegate, mask, mask_texture, host_copy=False)
    interpreter.invoke()   # camera_texture -> model -> mask_texture, no CPU copy

Input: tensor channel c = texel[channels[c]] * scale[c] + offset[c], where an
RGBA8 texel reads as byte / 255 ([0, 1]): scale=2, offset=-1 gives [-1, 1].
Output: texel lane c = tensor channel c * scale[c] + offset[c]; lanes past
the tensor's channels are G = B = 0, A = 1.
"""

from __future__ import annotations

import ctypes
import numbers
from typing import Sequence, Union

__all__ = ["TextureError", "bind_input_texture", "bind_output_texture", "unbind_texture"]

Number = Union[float, int]

# TFLITE_GLES_BIND_NO_HOST_COPY of delegate.h.
NO_HOST_COPY = 1


from tflite_gles.gpu_io import GpuIoError  # noqa: E402


class TextureError(GpuIoError):
    """A binding the delegate refused; the message says why."""


class _TextureBinding(ctypes.Structure):
    """TfLiteGlesTextureBinding of delegate.h."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("scale", ctypes.c_float * 4),
        ("offset", ctypes.c_float * 4),
        ("channels", ctypes.c_int32 * 4),
    ]


_library_cache: dict = {}


def _library(path: str | None, delegate=None):
    if path is None:
        # The file load_delegate opened for this delegate, else the package's.
        loaded = getattr(getattr(delegate, "_library", None), "_name", None)
        if loaded:
            path = loaded
        else:
            from tflite_gles import library_path
            path = library_path()
    if path not in _library_cache:
        # The same file load_delegate opened: dlopen hands back that copy.
        lib = ctypes.CDLL(path)
        p = ctypes.c_void_p
        for name, argtypes in [
            ("TfLiteGlesDelegateBindInputTexture",
             [p, ctypes.c_int, ctypes.c_uint32, ctypes.POINTER(_TextureBinding)]),
            ("TfLiteGlesDelegateBindOutputTexture",
             [p, ctypes.c_int, ctypes.c_uint32, ctypes.POINTER(_TextureBinding),
              ctypes.c_uint32]),
            ("TfLiteGlesDelegateUnbindTexture", [p, ctypes.c_int]),
        ]:
            function = getattr(lib, name)
            function.argtypes, function.restype = argtypes, ctypes.c_int
        lib.TfLiteGlesDelegateLastError.argtypes = [p]
        lib.TfLiteGlesDelegateLastError.restype = ctypes.c_char_p
        lib.TfLiteGlesTextureBindingDefault.argtypes = []
        lib.TfLiteGlesTextureBindingDefault.restype = _TextureBinding
        _library_cache[path] = lib
    return _library_cache[path]


def _pointer(delegate) -> int:
    """The TfLiteDelegate* behind a load_delegate() object (or an int)."""
    if isinstance(delegate, int):
        return delegate
    getter = getattr(delegate, "_get_native_delegate_pointer", None)
    if getter is None:
        raise TypeError(f"{delegate!r} is not a delegate from load_delegate()")
    return getter()


def _four(value: Number | Sequence[Number], name: str) -> list:
    if isinstance(value, numbers.Real):
        return [float(value)] * 4
    values = [float(v) for v in value]
    if not 1 <= len(values) <= 4:
        raise ValueError(f"{name} takes 1 to 4 values (one per channel), not {len(values)}")
    return values + [values[-1]] * (4 - len(values))


def _binding(lib, scale, offset, channels) -> _TextureBinding:
    binding = lib.TfLiteGlesTextureBindingDefault()
    binding.scale[:] = _four(scale, "scale")
    binding.offset[:] = _four(offset, "offset")
    if channels is not None:
        picked = [int(c) for c in channels]
        if not 1 <= len(picked) <= 4:
            raise ValueError(f"channels takes 1 to 4 components, not {len(picked)}")
        binding.channels[:] = picked + [0] * (4 - len(picked))
    return binding


def _check(lib, pointer: int, status: int) -> None:
    if status != 0:
        message = lib.TfLiteGlesDelegateLastError(ctypes.c_void_p(pointer))
        raise TextureError((message or b"not a tflite-gles delegate").decode())


def bind_input_texture(delegate, tensor_index: int, texture: int,
                       scale: Number | Sequence[Number] = 1.0,
                       offset: Number | Sequence[Number] = 0.0,
                       channels: Sequence[int] | None = None,
                       library: str | None = None) -> None:
    """The 2D texture `texture` (a GL name) feeds partition input `tensor_index`.

    scale/offset: one number or one per tensor channel; channels: the texture
    component (0 = R .. 3 = A) of each tensor channel, default R, G, B, A in
    order. Raises TextureError with the delegate's reason.
    """
    lib = _library(library, delegate)
    pointer = _pointer(delegate)
    binding = _binding(lib, scale, offset, channels)
    _check(lib, pointer, lib.TfLiteGlesDelegateBindInputTexture(
        ctypes.c_void_p(pointer), tensor_index, texture, ctypes.byref(binding)))


def bind_output_texture(delegate, tensor_index: int, texture: int,
                        scale: Number | Sequence[Number] = 1.0,
                        offset: Number | Sequence[Number] = 0.0,
                        host_copy: bool = True,
                        library: str | None = None) -> None:
    """Partition output `tensor_index` is written into `texture` (immutable
    GL_RGBA8, GL_RGBA16F or GL_RGBA32F of the tensor's size) at every invoke.

    host_copy=True: the interpreter's buffer-handle rules still copy the
    values into the TFLite tensor (Python's Interpreter does after every
    invoke, which costs the readback the texture saves); False
    (TFLITE_GLES_BIND_NO_HOST_COPY): the tensor is never written.
    """
    lib = _library(library, delegate)
    pointer = _pointer(delegate)
    binding = _binding(lib, scale, offset, None)
    flags = 0 if host_copy else NO_HOST_COPY
    _check(lib, pointer, lib.TfLiteGlesDelegateBindOutputTexture(
        ctypes.c_void_p(pointer), tensor_index, texture, ctypes.byref(binding), flags))


def unbind_texture(delegate, tensor_index: int, library: str | None = None) -> None:
    """The tensor is copied again (raises TextureError if nothing was bound)."""
    lib = _library(library, delegate)
    pointer = _pointer(delegate)
    _check(lib, pointer, lib.TfLiteGlesDelegateUnbindTexture(ctypes.c_void_p(pointer),
                                                             tensor_index))
