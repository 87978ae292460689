"""A delegate deleted while another of the application's contexts is current
(docs/gpu_io.md, "Lifetime"): a Python garbage collection may delete it at
any time. Its GL objects must go in its own context (made current for the
teardown, the caller's restored after), never as names of the current one:
names are per context, and deleting them there hits that context's
objects (on NVIDIA the next delegate's first Invoke then failed with
glUseProgram GL_INVALID_VALUE; session 9). Where its context is current on
another thread, nothing is deleted (a warning says so)."""

from __future__ import annotations

import ctypes
import gc
import threading

import numpy as np

import egl_app_context as egl
from gles_testing import assert_close, interpreter, make_delegate
from test_gpu_io_textures import conv_model, cpu_interpreter, run

_gl = ctypes.CDLL("libGLESv2.so.2")
KINDS = ("glIsProgram", "glIsBuffer", "glIsTexture")
for _name in KINDS:
    getattr(_gl, _name).argtypes = [ctypes.c_uint]
    getattr(_gl, _name).restype = ctypes.c_ubyte


def live_names(limit: int = 200) -> dict:
    """The program, buffer and texture names of the current context."""
    return {kind: {n for n in range(1, limit) if getattr(_gl, kind)(n)} for kind in KINDS}


def delegated(seed: int):
    model = conv_model(9, 7, 3, 2, seed=seed)
    delegate = make_delegate()
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    return delegate, interp, cpu_interpreter(model)


def check(interp, cpu, rng) -> None:
    image = rng.uniform(-1, 1, (1, 9, 7, 3)).astype(np.float32)
    assert_close([run(interp, image)], [run(cpu, image)])


def test_a_delegate_deleted_under_another_context_deletes_in_its_own(capfd):
    rng = np.random.default_rng(5)
    with egl.ApplicationContext() as a, egl.ApplicationContext() as b:
        a.make_current()
        delegate_a, interp_a, cpu_a = delegated(1)
        check(interp_a, cpu_a, rng)
        names_a = live_names()
        assert names_a["glIsProgram"] and names_a["glIsBuffer"], names_a
        b.make_current()
        delegate_b, interp_b, cpu_b = delegated(2)
        check(interp_b, cpu_b, rng)
        names_b = live_names()
        # The two contexts share nothing but the numbers of their names.
        assert names_a["glIsProgram"] & names_b["glIsProgram"], (names_a, names_b)
        del interp_a, delegate_a
        gc.collect()
        assert egl.current_context() == b.context, "the caller's context was not restored"
        assert live_names() == names_b, "B's objects were deleted by A's teardown"
        for _ in range(2):
            check(interp_b, cpu_b, rng)
        a.make_current()
        # A's objects went with A's delegate (before: left until A was
        # destroyed, and deleted in B had the driver reused A's handle).
        assert live_names() == {kind: set() for kind in KINDS}
        b.make_current()
        del interp_b, delegate_b
        gc.collect()
        assert live_names() == {kind: set() for kind in KINDS}
        egl.release_current()
    assert "WARNING" not in capfd.readouterr().err


def test_a_delegate_whose_context_is_current_on_another_thread_deletes_nothing(capfd):
    rng = np.random.default_rng(6)
    with egl.ApplicationContext() as a, egl.ApplicationContext() as b:
        a.make_current()
        delegate_a, interp_a, cpu_a = delegated(3)
        check(interp_a, cpu_a, rng)
        names_a = live_names()
        b.make_current()
        delegate_b, interp_b, cpu_b = delegated(4)
        names_b = live_names()
        held, release, results = threading.Event(), threading.Event(), {}

        def hold_a():
            a.make_current()
            held.set()
            release.wait(30)
            results["names"] = live_names()
            egl.release_current()

        holder = threading.Thread(target=hold_a)
        holder.start()
        assert held.wait(30)
        del interp_a, delegate_a
        gc.collect()
        release.set()
        holder.join(30)
        assert "cannot be made current on this thread" in capfd.readouterr().err
        assert egl.current_context() == b.context
        assert live_names() == names_b
        check(interp_b, cpu_b, rng)
        assert results["names"] == names_a, "A's objects were deleted from the wrong thread"
        del interp_b, delegate_b
        gc.collect()
        egl.release_current()
