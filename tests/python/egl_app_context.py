"""An EGL context owned by the "application" (this test process), made with
ctypes calls into libEGL, never through tflite-gles: the tests make it
current around real interpreter calls to check the delegate's context
contract from the outside."""

from __future__ import annotations

import ctypes

EGL_NO_SURFACE = None
EGL_NONE = 0x3038
EGL_RENDERABLE_TYPE = 0x3040
EGL_SURFACE_TYPE = 0x3033
EGL_DONT_CARE = -1
EGL_OPENGL_ES3_BIT = 0x40
EGL_OPENGL_ES_API = 0x30A0
EGL_CONTEXT_MAJOR_VERSION = 0x3098
EGL_CONTEXT_MINOR_VERSION = 0x30FB
EGL_EXTENSIONS = 0x3055
EGL_PLATFORM_SURFACELESS_MESA = 0x31DD
EGL_PLATFORM_DEVICE_EXT = 0x313F

_egl = ctypes.CDLL("libEGL.so.1")
_p = ctypes.c_void_p
for name, restype, argtypes in [
    ("eglGetProcAddress", _p, [ctypes.c_char_p]),
    ("eglQueryString", ctypes.c_char_p, [_p, ctypes.c_int]),
    ("eglInitialize", ctypes.c_uint, [_p, _p, _p]),
    ("eglBindAPI", ctypes.c_uint, [ctypes.c_uint]),
    ("eglChooseConfig", ctypes.c_uint, [_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(_p),
                                        ctypes.c_int, ctypes.POINTER(ctypes.c_int)]),
    ("eglCreateContext", _p, [_p, _p, _p, ctypes.POINTER(ctypes.c_int)]),
    ("eglDestroyContext", ctypes.c_uint, [_p, _p]),
    ("eglMakeCurrent", ctypes.c_uint, [_p, _p, _p, _p]),
    ("eglGetCurrentContext", _p, []),
    ("eglGetCurrentDisplay", _p, []),
    ("eglGetError", ctypes.c_int, []),
]:
    function = getattr(_egl, name)
    function.restype, function.argtypes = restype, argtypes


def _attributes(*values) -> ctypes.Array:
    return (ctypes.c_int * (len(values) + 1))(*values, EGL_NONE)


def _open_display():
    """Mesa's surfaceless display, else the first EGL device (NVIDIA)."""
    extensions = (_egl.eglQueryString(None, EGL_EXTENSIONS) or b"").split()
    get_display = ctypes.CFUNCTYPE(_p, ctypes.c_uint, _p, _p)(
        _egl.eglGetProcAddress(b"eglGetPlatformDisplayEXT"))
    if b"EGL_MESA_platform_surfaceless" in extensions:
        return get_display(EGL_PLATFORM_SURFACELESS_MESA, None, None)
    query_devices = ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_int, ctypes.POINTER(_p),
                                     ctypes.POINTER(ctypes.c_int))(
        _egl.eglGetProcAddress(b"eglQueryDevicesEXT"))
    devices = (_p * 4)()
    count = ctypes.c_int(0)
    assert query_devices(4, devices, ctypes.byref(count)) and count.value > 0, "no EGL device"
    return get_display(EGL_PLATFORM_DEVICE_EXT, devices[0], None)


class ApplicationContext:
    """A GLES 3.1 context without a surface; use as a context manager."""

    def __init__(self):
        self.display = _open_display()
        assert self.display, f"no EGL display (error 0x{_egl.eglGetError():x})"
        assert _egl.eglInitialize(self.display, None, None), "eglInitialize failed"
        assert _egl.eglBindAPI(EGL_OPENGL_ES_API)
        config = _p()
        count = ctypes.c_int(0)
        assert _egl.eglChooseConfig(
            self.display, _attributes(EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT,
                                      EGL_SURFACE_TYPE, EGL_DONT_CARE),
            ctypes.byref(config), 1, ctypes.byref(count)) and count.value > 0
        self.context = _egl.eglCreateContext(
            self.display, config, None,
            _attributes(EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1))
        assert self.context, f"eglCreateContext failed (0x{_egl.eglGetError():x})"

    def make_current(self):
        assert _egl.eglMakeCurrent(self.display, None, None, self.context)

    def close(self):
        if _egl.eglGetCurrentContext() == self.context:
            release_current()
        _egl.eglDestroyContext(self.display, self.context)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def release_current():
    """Leaves the calling thread with no current EGLContext."""
    display = _egl.eglGetCurrentDisplay()
    if display:
        assert _egl.eglMakeCurrent(display, None, None, None)


def current_context():
    return _egl.eglGetCurrentContext()
