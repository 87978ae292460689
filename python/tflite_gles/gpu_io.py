"""GPU-resident inputs and outputs for Python users (docs/gpu_io.md).

Bind a GL buffer object of your EGL context to a model input or output, so
the delegate reads the input from it and writes the output into it, with no
copy through the CPU:

    from tflite_gles import gpu_io
    egl = gpu_io.EglContext()      # or your own context, current on this thread
    egl.make_current()             # before the interpreter applies the delegate
    delegate = tflite_gles.load_delegate()
    interp = Interpreter(model_path="m.tflite", experimental_delegates=[delegate])
    interp.allocate_tensors()
    gl = gpu_io.Gl()
    io = gpu_io.GpuIo(delegate)
    index = interp.get_input_details()[0]["index"]
    buffer = gl.create_buffer(io.buffer_bytes(index))
    io.bind_buffer(index, buffer)  # float32, BHWC
    gl.write_buffer(buffer, frame)  # or render into it on the GPU
    interp.invoke()

All of it with the delegate's context current on the calling thread (the one
that was current when the interpreter applied the delegate). The interpreter
of ai-edge-litert copies every bound output back after invoke (its default
for buffer handles, which Python cannot change); bind outputs with
host_copy=False to leave them on the GPU only.
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

__all__ = ["EglContext", "Gl", "GpuIo", "GpuIoError", "LAYOUTS"]

# TfLiteGlesBufferLayout (delegate/include/tflite_gles/delegate.h).
LAYOUTS = {"bhwc": 0, "phwc4": 1}
_NO_HOST_COPY = 1  # TFLITE_GLES_BIND_NO_HOST_COPY

_p = ctypes.c_void_p


class GpuIoError(RuntimeError):
    """A binding call failed; the message is the delegate's."""


def _library(library):
    if isinstance(library, ctypes.CDLL):
        return library
    if library is None:
        library = os.environ.get("TFLITE_GLES_LIB")
    if library is None:
        from tflite_gles import library_path
        library = library_path()
    lib = ctypes.CDLL(str(library))
    lib.TfLiteGlesDelegateBindBuffer.argtypes = [_p, ctypes.c_int, ctypes.c_uint32,
                                                 ctypes.c_int32, ctypes.c_uint32]
    lib.TfLiteGlesDelegateBindBuffer.restype = ctypes.c_int
    lib.TfLiteGlesDelegateUnbindBuffer.argtypes = [_p, ctypes.c_int]
    lib.TfLiteGlesDelegateUnbindBuffer.restype = ctypes.c_int
    lib.TfLiteGlesDelegateBufferBytes.argtypes = [_p, ctypes.c_int, ctypes.c_int32]
    lib.TfLiteGlesDelegateBufferBytes.restype = ctypes.c_int64
    lib.TfLiteGlesDelegateLastError.argtypes = [_p]
    lib.TfLiteGlesDelegateLastError.restype = ctypes.c_char_p
    return lib


class GpuIo:
    """Bindings of one delegate (the object load_delegate returned, or its
    native pointer). `library`: the libtflite_gles.so the delegate came from
    (a path or CDLL; default $TFLITE_GLES_LIB, else the package's)."""

    def __init__(self, delegate, library=None):
        self._lib = _library(library)
        pointer = (delegate._get_native_delegate_pointer()
                   if hasattr(delegate, "_get_native_delegate_pointer") else delegate)
        self._delegate = ctypes.c_void_p(pointer)
        self._keep = delegate  # the delegate must outlive its bindings

    def _check(self, rc, failed):
        if failed(rc):
            message = self._lib.TfLiteGlesDelegateLastError(self._delegate)
            raise GpuIoError((message or b"unknown error").decode())
        return rc

    @staticmethod
    def _layout(layout: str) -> int:
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {sorted(LAYOUTS)}, not {layout!r}")
        return LAYOUTS[layout]

    def buffer_bytes(self, tensor_index: int, layout: str = "bhwc") -> int:
        """Bytes a buffer bound to `tensor_index` in `layout` must hold."""
        return self._check(self._lib.TfLiteGlesDelegateBufferBytes(
            self._delegate, tensor_index, self._layout(layout)), lambda rc: rc < 0)

    def bind_buffer(self, tensor_index: int, buffer: int, layout: str = "bhwc",
                    host_copy: bool = True) -> None:
        """Binds GL buffer `buffer` (float32 in `layout`: "bhwc", TFLite's
        order, or "phwc4", the delegate's) to an input or output. Outputs with
        host_copy=False are never copied into the interpreter's tensor."""
        flags = 0 if host_copy else _NO_HOST_COPY
        self._check(self._lib.TfLiteGlesDelegateBindBuffer(
            self._delegate, tensor_index, buffer, self._layout(layout), flags),
            lambda rc: rc != 0)

    def unbind(self, tensor_index: int) -> None:
        self._check(self._lib.TfLiteGlesDelegateUnbindBuffer(self._delegate, tensor_index),
                    lambda rc: rc != 0)

    # Textures (docs/gpu_io.md, "Textures"): tflite_gles.gpu_textures does the
    # work; its TextureError is a GpuIoError. `unbind` ends them too.
    def bind_input_texture(self, tensor_index: int, texture: int, scale=1.0, offset=0.0,
                           channels=None) -> None:
        """2D texture `texture` feeds input `tensor_index`: channel c =
        texel[channels[c]] * scale[c] + offset[c] (RGBA8 reads as [0, 1])."""
        from tflite_gles import gpu_textures
        gpu_textures.bind_input_texture(self._delegate.value, tensor_index, texture, scale,
                                        offset, channels, library=self._lib._name)

    def bind_output_texture(self, tensor_index: int, texture: int, scale=1.0, offset=0.0,
                            host_copy: bool = True) -> None:
        """Output `tensor_index` is written into the immutable RGBA texture
        `texture`: lane c = channel c * scale[c] + offset[c]."""
        from tflite_gles import gpu_textures
        gpu_textures.bind_output_texture(self._delegate.value, tensor_index, texture, scale,
                                         offset, host_copy, library=self._lib._name)


# --- A minimal GLES 3.1 surface for applications without a GL binding -----

_GL_ARRAY_BUFFER = 0x8892
_GL_COPY_READ_BUFFER = 0x8F36
_GL_STREAM_COPY = 0x88E2
_GL_MAP_READ_BIT = 0x0001


class Gl:
    """Buffer objects of the context current on the calling thread, through
    libGLESv2 (enough to create, fill, read and delete them)."""

    def __init__(self, library: str = "libGLESv2.so.2"):
        gl = ctypes.CDLL(library)
        for name, restype, argtypes in [
            ("glGenBuffers", None, [ctypes.c_int, ctypes.POINTER(ctypes.c_uint)]),
            ("glDeleteBuffers", None, [ctypes.c_int, ctypes.POINTER(ctypes.c_uint)]),
            ("glBindBuffer", None, [ctypes.c_uint, ctypes.c_uint]),
            ("glBufferData", None, [ctypes.c_uint, ctypes.c_ssize_t, _p, ctypes.c_uint]),
            ("glBufferSubData", None, [ctypes.c_uint, ctypes.c_ssize_t, ctypes.c_ssize_t, _p]),
            ("glMapBufferRange", _p, [ctypes.c_uint, ctypes.c_ssize_t, ctypes.c_ssize_t,
                                      ctypes.c_uint]),
            ("glUnmapBuffer", ctypes.c_ubyte, [ctypes.c_uint]),
            ("glIsBuffer", ctypes.c_ubyte, [ctypes.c_uint]),
            ("glGetError", ctypes.c_uint, []),
            ("glFinish", None, []),
        ]:
            function = getattr(gl, name)
            function.restype, function.argtypes = restype, argtypes
        self._gl = gl

    def _checked(self, what: str):
        error = self._gl.glGetError()
        if error:
            raise GpuIoError(f"{what}: GL error 0x{error:04x}")

    def create_buffer(self, nbytes: int, data: np.ndarray | None = None) -> int:
        """A new buffer object of `nbytes` (filled from `data` if given)."""
        self._gl.glGetError()
        name = ctypes.c_uint(0)
        self._gl.glGenBuffers(1, ctypes.byref(name))
        self._gl.glBindBuffer(_GL_ARRAY_BUFFER, name)
        source = None
        if data is not None:
            data = np.ascontiguousarray(data, dtype=np.float32)
            if data.nbytes != nbytes:
                raise ValueError(f"data has {data.nbytes} bytes, not {nbytes}")
            source = data.ctypes.data_as(_p)
        self._gl.glBufferData(_GL_ARRAY_BUFFER, nbytes, source, _GL_STREAM_COPY)
        self._gl.glBindBuffer(_GL_ARRAY_BUFFER, 0)
        self._checked("creating a buffer")
        return name.value

    def write_buffer(self, buffer: int, data: np.ndarray) -> None:
        data = np.ascontiguousarray(data, dtype=np.float32)
        self._gl.glGetError()
        self._gl.glBindBuffer(_GL_ARRAY_BUFFER, buffer)
        self._gl.glBufferSubData(_GL_ARRAY_BUFFER, 0, data.nbytes, data.ctypes.data_as(_p))
        self._gl.glBindBuffer(_GL_ARRAY_BUFFER, 0)
        self._checked(f"writing buffer {buffer}")

    def read_buffer(self, buffer: int, count: int) -> np.ndarray:
        """The first `count` float32 values of `buffer` (waits for the GPU)."""
        self._gl.glGetError()
        self._gl.glBindBuffer(_GL_COPY_READ_BUFFER, buffer)
        pointer = self._gl.glMapBufferRange(_GL_COPY_READ_BUFFER, 0, count * 4, _GL_MAP_READ_BIT)
        try:
            self._checked(f"mapping buffer {buffer}")
            if not pointer:
                raise GpuIoError(f"mapping buffer {buffer} failed")
            return np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)),
                                         shape=(count,)).copy()
        finally:
            if pointer:
                self._gl.glUnmapBuffer(_GL_COPY_READ_BUFFER)
            self._gl.glBindBuffer(_GL_COPY_READ_BUFFER, 0)

    def delete_buffer(self, buffer: int) -> None:
        name = ctypes.c_uint(buffer)
        self._gl.glDeleteBuffers(1, ctypes.byref(name))
        self._checked(f"deleting buffer {buffer}")

    def is_buffer(self, buffer: int) -> bool:
        return bool(self._gl.glIsBuffer(buffer))

    def finish(self) -> None:
        self._gl.glFinish()


# --- A surfaceless EGL context, for applications that have none ------------

_EGL_NONE = 0x3038
_EGL_EXTENSIONS = 0x3055


class EglContext:
    """A GLES 3.1 context without a surface (Mesa's surfaceless platform, else
    the first EGL device), optionally sharing objects with `share_with`."""

    def __init__(self, share_with: "EglContext | None" = None):
        egl = ctypes.CDLL("libEGL.so.1")
        for name, restype, argtypes in [
            ("eglGetProcAddress", _p, [ctypes.c_char_p]),
            ("eglQueryString", ctypes.c_char_p, [_p, ctypes.c_int]),
            ("eglInitialize", ctypes.c_uint, [_p, _p, _p]),
            ("eglBindAPI", ctypes.c_uint, [ctypes.c_uint]),
            ("eglChooseConfig", ctypes.c_uint, [_p, ctypes.POINTER(ctypes.c_int),
                                                ctypes.POINTER(_p), ctypes.c_int,
                                                ctypes.POINTER(ctypes.c_int)]),
            ("eglCreateContext", _p, [_p, _p, _p, ctypes.POINTER(ctypes.c_int)]),
            ("eglDestroyContext", ctypes.c_uint, [_p, _p]),
            ("eglMakeCurrent", ctypes.c_uint, [_p, _p, _p, _p]),
            ("eglGetCurrentContext", _p, []),
            ("eglGetError", ctypes.c_int, []),
        ]:
            function = getattr(egl, name)
            function.restype, function.argtypes = restype, argtypes
        self._egl = egl
        self.display = share_with.display if share_with else self._open_display()
        if not egl.eglInitialize(self.display, None, None):
            raise GpuIoError(f"eglInitialize failed (0x{egl.eglGetError():x})")
        egl.eglBindAPI(0x30A0)  # EGL_OPENGL_ES_API
        config, count = _p(), ctypes.c_int(0)
        attributes = (ctypes.c_int * 5)(0x3040, 0x40, 0x3033, -1, _EGL_NONE)  # ES3, any surface
        if not egl.eglChooseConfig(self.display, attributes, ctypes.byref(config), 1,
                                   ctypes.byref(count)) or count.value == 0:
            raise GpuIoError("no EGL config for OpenGL ES 3")
        version = (ctypes.c_int * 5)(0x3098, 3, 0x30FB, 1, _EGL_NONE)  # ES 3.1
        self.context = egl.eglCreateContext(self.display, config,
                                            share_with.context if share_with else None, version)
        if not self.context:
            raise GpuIoError(f"eglCreateContext failed (0x{egl.eglGetError():x})")

    def _open_display(self):
        egl = self._egl
        extensions = (egl.eglQueryString(None, _EGL_EXTENSIONS) or b"").split()
        get_display = ctypes.CFUNCTYPE(_p, ctypes.c_uint, _p, _p)(
            egl.eglGetProcAddress(b"eglGetPlatformDisplayEXT"))
        if b"EGL_MESA_platform_surfaceless" in extensions:
            return get_display(0x31DD, None, None)
        query_devices = ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_int, ctypes.POINTER(_p),
                                         ctypes.POINTER(ctypes.c_int))(
            egl.eglGetProcAddress(b"eglQueryDevicesEXT"))
        devices, count = (_p * 4)(), ctypes.c_int(0)
        if not query_devices(4, devices, ctypes.byref(count)) or count.value == 0:
            raise GpuIoError("no EGL display: neither surfaceless Mesa nor an EGL device")
        return get_display(0x313F, devices[0], None)

    def make_current(self) -> None:
        if not self._egl.eglMakeCurrent(self.display, None, None, self.context):
            raise GpuIoError(f"eglMakeCurrent failed (0x{self._egl.eglGetError():x})")

    def release(self) -> None:
        """Leaves the calling thread with no current context."""
        self._egl.eglMakeCurrent(self.display, None, None, None)

    def close(self) -> None:
        if self.context:
            if self._egl.eglGetCurrentContext() == self.context:
                self.release()
            self._egl.eglDestroyContext(self.display, self.context)
            self.context = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
