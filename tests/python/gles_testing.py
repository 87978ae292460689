"""Shared helpers for the Python tests: load the built delegate into the real
LiteRT interpreter, read its stats, and compare GPU results with the CPU.

The library is build/libtflite_gles.so unless TFLITE_GLES_LIB names another
(e.g. a sanitizer build).
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

from tflite_runtimes import Interpreter, OpResolverType, load_delegate  # noqa: E402
from tflite_builder import ModelBuilder, run_tflite, single_op_model  # noqa: E402,F401

LIB = os.environ.get("TFLITE_GLES_LIB", str(REPO / "build" / "libtflite_gles.so"))

# Relative L2 error bounds of the project (issue: ops must agree with the CPU).
FP32_TOLERANCE = 1e-5
FP16_TOLERANCE = 5e-3


class Stats(ctypes.Structure):
    """TfLiteGlesDelegateStats from delegate/include/tflite_gles/delegate.h."""

    _fields_ = [
        ("nodes_total", ctypes.c_int32),
        ("nodes_delegated", ctypes.c_int32),
        ("partitions", ctypes.c_int32),
        ("programs", ctypes.c_int32),
        ("dispatches", ctypes.c_int32),
        ("gpu_bytes", ctypes.c_int64),
        ("invokes", ctypes.c_int64),
        ("renderer", ctypes.c_char * 128),
        ("gl_version", ctypes.c_char * 128),
        ("egl_display", ctypes.c_char * 512),
    ]


class DispatchProfile(ctypes.Structure):
    """TfLiteGlesDispatchProfile from delegate/include/tflite_gles/delegate.h."""

    _fields_ = [
        ("label", ctypes.c_char * 128),
        ("shader", ctypes.c_char * 64),
        ("milliseconds", ctypes.c_double),
        ("flops", ctypes.c_int64),
        ("partition", ctypes.c_int32),
        ("gpu_timer", ctypes.c_int32),
    ]


class MemoryStats(ctypes.Structure):
    """TfLiteGlesMemoryStats from delegate/include/tflite_gles/delegate.h."""

    _fields_ = [
        ("arena_tensors", ctypes.c_int64),
        ("arena_bytes", ctypes.c_int64),
        ("tensors_sum_bytes", ctypes.c_int64),
        ("lower_bound_bytes", ctypes.c_int64),
        ("other_bytes", ctypes.c_int64),
    ]


class ProgramCacheStats(ctypes.Structure):
    """TfLiteGlesProgramCacheStats from delegate/include/tflite_gles/delegate.h."""

    _fields_ = [
        ("enabled", ctypes.c_int32),
        ("binary_formats", ctypes.c_int32),
        ("programs_loaded", ctypes.c_int32),
        ("programs_compiled", ctypes.c_int32),
        ("entries_written", ctypes.c_int32),
        ("entries_rejected", ctypes.c_int32),
        ("note", ctypes.c_char * 512),
    ]


_lib = None


def library() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL(LIB)
        _lib.TfLiteGlesDelegateGetStats.argtypes = [ctypes.c_void_p, ctypes.POINTER(Stats)]
        _lib.TfLiteGlesDelegateGetStats.restype = ctypes.c_int
        _lib.TfLiteGlesDelegateLastError.argtypes = [ctypes.c_void_p]
        _lib.TfLiteGlesDelegateLastError.restype = ctypes.c_char_p
        _lib.TfLiteGlesDelegateGetProfile.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(DispatchProfile), ctypes.c_int]
        _lib.TfLiteGlesDelegateGetProfile.restype = ctypes.c_int
        _lib.TfLiteGlesDelegateGetMemoryStats.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(MemoryStats)]
        _lib.TfLiteGlesDelegateGetMemoryStats.restype = ctypes.c_int
        _lib.TfLiteGlesDelegateGetProgramCacheStats.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(ProgramCacheStats)]
        _lib.TfLiteGlesDelegateGetProgramCacheStats.restype = ctypes.c_int
    return _lib


def make_delegate(options: dict | None = None):
    """A fresh delegate through the external-delegate interface.

    Where precision loss is allowed and no priority is given, fp16 storage
    is asked for explicitly (inference_priority1=min_memory_usage): the
    delegate would otherwise keep fp32 on llvmpipe, where that is faster, and
    the fp16 tests would not test fp16.
    """
    options = dict(options or {})
    if str(options.get("precision_loss_allowed", "")).lower() in ("true", "1") and not any(
            key.startswith("inference_priority") for key in options):
        options["inference_priority1"] = "min_memory_usage"
    return load_delegate(LIB, options)


def stats(delegate) -> dict:
    s = Stats()
    rc = library().TfLiteGlesDelegateGetStats(delegate._get_native_delegate_pointer(),
                                              ctypes.byref(s))
    assert rc == 0, "TfLiteGlesDelegateGetStats refused the delegate"
    return {name: (getattr(s, name).decode() if isinstance(getattr(s, name), bytes)
                   else getattr(s, name)) for name, _ in Stats._fields_}


def memory_stats(delegate) -> dict:
    """GPU memory of the delegate's partitions (arena vs one buffer per tensor)."""
    s = MemoryStats()
    rc = library().TfLiteGlesDelegateGetMemoryStats(delegate._get_native_delegate_pointer(),
                                                    ctypes.byref(s))
    assert rc == 0, "TfLiteGlesDelegateGetMemoryStats refused the delegate"
    return {name: getattr(s, name) for name, _ in MemoryStats._fields_}


def program_cache_stats(delegate) -> dict:
    """Where the delegate's programs came from (serialization cache or compiled)."""
    s = ProgramCacheStats()
    rc = library().TfLiteGlesDelegateGetProgramCacheStats(
        delegate._get_native_delegate_pointer(), ctypes.byref(s))
    assert rc == 0, "TfLiteGlesDelegateGetProgramCacheStats refused the delegate"
    return {name: (getattr(s, name).decode() if isinstance(getattr(s, name), bytes)
                   else getattr(s, name)) for name, _ in ProgramCacheStats._fields_}


def profile(delegate) -> list[dict]:
    """Per-dispatch timings of the last invoke (needs enable_profiling)."""
    pointer = delegate._get_native_delegate_pointer()
    count = library().TfLiteGlesDelegateGetProfile(pointer, None, 0)
    assert count >= 0, "TfLiteGlesDelegateGetProfile refused the delegate"
    entries = (DispatchProfile * max(count, 1))()
    filled = library().TfLiteGlesDelegateGetProfile(pointer, entries, count)
    assert filled == count, f"profile changed size: {filled} != {count}"
    return [{"label": e.label.decode(), "shader": e.shader.decode(),
             "ms": e.milliseconds, "flops": e.flops, "partition": e.partition,
             "gpu_timer": bool(e.gpu_timer)} for e in entries[:count]]


def interpreter(model: bytes | str, delegate=None, num_threads: int = 1,
                use_xnnpack: bool = False) -> Interpreter:
    """An interpreter on builtin CPU kernels (no XNNPACK, unless `use_xnnpack`:
    LiteRT's default CPU path) plus `delegate`."""
    source = ({"model_path": str(model)} if isinstance(model, (str, Path))
              else {"model_content": model})
    return Interpreter(**source,
                       experimental_delegates=[delegate] if delegate else None,
                       experimental_op_resolver_type=(
                           OpResolverType.AUTO if use_xnnpack
                           else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES),
                       num_threads=num_threads)


def invoke(interp: Interpreter, inputs) -> list[np.ndarray]:
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], np.asarray(value, dtype=detail["dtype"]))
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]


def run_gpu(model: bytes | str, inputs, options: dict | None = None):
    """Runs `model` through a new delegate: (outputs, stats of the delegate)."""
    delegate = make_delegate(options)
    interp = interpreter(model, delegate)
    gpu = invoke(interp, inputs)
    result = (gpu, stats(delegate))
    del interp
    return result


def run_cpu_and_gpu(model: bytes | str, inputs, options: dict | None = None):
    """Runs `model` on the CPU and through a new delegate.

    Returns (cpu_outputs, gpu_outputs, stats of the delegate)."""
    cpu = invoke(interpreter(model), inputs)
    return (cpu, *run_gpu(model, inputs, options))


def run_switch_off_and_on(monkeypatch, switch: str, model: bytes | str, inputs,
                          options: dict | None = None):
    """Runs `model` on the CPU once and through two new delegates, created with
    the environment switch `switch` at "0" and at "1" (delegates read their
    switches when they are created).

    Returns (cpu_outputs, (outputs, stats) with it off, (outputs, stats) with
    it on)."""
    cpu = invoke(interpreter(model), inputs)
    runs = []
    for value in ("0", "1"):
        monkeypatch.setenv(switch, value)
        runs.append(run_gpu(model, inputs, options))
    return cpu, runs[0], runs[1]


def relative_error(gpu: np.ndarray, cpu: np.ndarray) -> float:
    gpu = np.asarray(gpu, np.float64)
    cpu = np.asarray(cpu, np.float64)
    denominator = np.linalg.norm(cpu)
    return float(np.linalg.norm(gpu - cpu) / (denominator if denominator > 0 else 1.0))


def assert_close(gpu_outputs, cpu_outputs, fp16: bool = False, tolerance: float | None = None):
    """||gpu - cpu|| / ||cpu|| within the project's bound, and no NaN/Inf
    where the CPU has none."""
    bound = tolerance if tolerance is not None else (FP16_TOLERANCE if fp16 else FP32_TOLERANCE)
    assert len(gpu_outputs) == len(cpu_outputs)
    for i, (gpu, cpu) in enumerate(zip(gpu_outputs, cpu_outputs)):
        assert gpu.shape == cpu.shape, f"output {i}: shape {gpu.shape} != {cpu.shape}"
        if np.issubdtype(cpu.dtype, np.floating):
            bad = ~np.isfinite(gpu) & np.isfinite(cpu)
            assert not bad.any(), f"output {i}: {bad.sum()} NaN/Inf the CPU does not produce"
            error = relative_error(gpu, cpu)
            assert error <= bound, f"output {i}: relative error {error:.3g} > {bound:.3g}"
        else:
            np.testing.assert_array_equal(gpu, cpu, err_msg=f"output {i}")


def assert_fully_delegated(delegate_stats: dict, partitions: int = 1):
    assert delegate_stats["nodes_delegated"] == delegate_stats["nodes_total"], delegate_stats
    assert delegate_stats["partitions"] == partitions, delegate_stats


def random_inputs(shapes, seed: int = 0, low: float = -2.0, high: float = 2.0):
    """Uniform random float32 arrays, with no zeros (zeros hide sign bugs)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for shape in shapes:
        a = rng.uniform(low, high, size=shape).astype(np.float32)
        a[np.abs(a) < 1e-3] = 1e-3
        arrays.append(a)
    return arrays
