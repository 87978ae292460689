"""Runs one model on the CPU and through the delegate and classifies what
happened, for the hostile-model tests and the mutation fuzzer.

Acceptable outcomes:
  agree     the delegate ran some nodes and every output matches the CPU;
  declined  the delegate ran no node (its support check said why) and the
            outputs match the CPU;
  rejected  the runtime refused the model without the delegate too (at
            load, allocate or invoke);
  runtime_refused_delegate
            the runtime refused to apply the delegate without calling it: a
            graph with dynamic-sized tensors and a delegate without dynamic
            tensor support (ModifyGraphWithDelegate returns the non-fatal
            kTfLiteApplicationError, which the Python wrapper raises);
  cpu_unstable
            no node was delegated and the CPU gives different answers run to
            run (e.g. a kernel reading a bool tensor as floats): nothing the
            delegate did.
Anything else is a failure: a delegated run that answers differently, an
error only with the delegate, or a model the delegate accepted although the
CPU refuses it.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback

import numpy as np

from gles_testing import interpreter, make_delegate, relative_error, stats

ACCEPTABLE = ("agree", "declined", "rejected", "runtime_refused_delegate", "cpu_unstable")


def random_value(shape, dtype, rng, low: float = -3.0, high: float = 3.0) -> np.ndarray:
    """Random input data without zeros (zeros hide sign and scale bugs)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        a = rng.uniform(low, high, size=shape).astype(dtype)
        a[np.abs(a) < 1e-3] = 1e-3
        return a
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    info = np.iinfo(dtype)
    low, high = max(info.min, -20), min(info.max, 20)
    a = rng.integers(low, high + 1, size=shape).astype(dtype)
    a[a == 0] = 1
    return a


class _CapturedStderr:
    """Collects what native code writes to fd 2 (the delegate's WARNING lines)."""

    def __enter__(self):
        sys.stderr.flush()
        self._file = tempfile.TemporaryFile(mode="w+b")
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        self.text = self._file.read().decode(errors="replace")
        self._file.close()


def compare_outputs(gpu_outputs, cpu_outputs, tolerance: float, integer_steps: int = 0,
                    absolute: bool = False) -> str:
    """"" if they agree, else why not. NaN and Inf must sit where the CPU has
    them (a NaN parameter gives NaN on both paths); the finite rest must be
    within `tolerance` relative L2 error; integers must be equal, or within
    `integer_steps` (quantized outputs: quantization steps)."""
    if len(gpu_outputs) != len(cpu_outputs):
        return f"{len(gpu_outputs)} outputs, the CPU gives {len(cpu_outputs)}"
    for i, (gpu, cpu) in enumerate(zip(gpu_outputs, cpu_outputs)):
        if gpu.shape != cpu.shape or gpu.dtype != cpu.dtype:
            return f"output {i}: {gpu.dtype}{gpu.shape} vs the CPU's {cpu.dtype}{cpu.shape}"
        if not np.issubdtype(cpu.dtype, np.floating):
            if integer_steps and cpu.dtype != np.bool_:
                steps = np.abs(gpu.astype(np.int64) - cpu.astype(np.int64))
                if steps.size and steps.max() > integer_steps:
                    return f"output {i}: {np.sum(steps > integer_steps)} elements more " \
                           f"than {integer_steps} steps apart (max {steps.max()})"
                continue
            if not np.array_equal(gpu, cpu):
                return f"output {i}: {np.sum(gpu != cpu)} integer elements differ"
            continue
        if not np.array_equal(np.isnan(gpu), np.isnan(cpu)):
            return f"output {i}: NaN where the CPU has none, or the reverse"
        finite = np.isfinite(cpu)
        if not np.array_equal(gpu[~finite & ~np.isnan(cpu)], cpu[~finite & ~np.isnan(cpu)]) \
                or not np.array_equal(finite, np.isfinite(gpu)):
            return f"output {i}: infinities differ from the CPU's"
        if absolute:  # probabilities (a mask, scores): the largest difference
            error = float(np.max(np.abs(gpu[finite] - cpu[finite]), initial=0.0))
            if not error <= tolerance:
                return f"output {i}: absolute error {error:.3g} > {tolerance:.3g}"
            continue
        error = relative_error(gpu[finite], cpu[finite])
        if not error <= tolerance:
            return f"output {i}: relative error {error:.3g} > {tolerance:.3g}"
    return ""


def _stage_run(model: bytes, delegate, seed: int, input_range=(-3.0, 3.0)):
    """(stage reached or failed, outputs, error text)."""
    # A private copy of the model: the interpreter maps model_content as it
    # is, and set_tensor on a graph input that carries a buffer writes into
    # it (the next run would start from the last run's inputs).
    model = bytes(bytearray(model))
    try:
        interp = interpreter(model, delegate)
    except Exception as error:  # noqa: BLE001 - the runtime's own error types vary
        return "load", None, str(error)
    try:
        interp.allocate_tensors()
    except Exception as error:  # noqa: BLE001
        return "allocate", None, str(error)
    rng = np.random.default_rng(seed)
    try:
        for detail in interp.get_input_details():
            interp.set_tensor(detail["index"],
                              random_value(detail["shape"], detail["dtype"], rng, *input_range))
        interp.invoke()
        outputs = [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]
    except Exception as error:  # noqa: BLE001
        return "invoke", None, str(error)
    return "ok", outputs, ""


# Quantized outputs: the delegate computes through float and may round
# differently from TFLite's integer kernels (test_quantized_ops.py's bound).
QUANTIZED_STEPS = 2


def _has_quantized_outputs(model: bytes) -> bool:
    try:
        details = interpreter(model).get_output_details()
    except Exception:  # noqa: BLE001 - a model the runtime refuses has none to compare
        return False
    return any(d["quantization"][0] > 0 and np.dtype(d["dtype"]).kind in "iu"
               for d in details)


def check_model(model: bytes, seed: int = 0, options: dict | None = None,
                tolerance: float = 1e-5, integer_steps: int | None = None,
                cpu_model: bytes | None = None, input_range=(-3.0, 3.0),
                absolute: bool = False) -> dict:
    """Runs `model` both ways; returns {"outcome", "detail", "delegated"}.

    Integer outputs must be equal, except that quantized ones (with a scale)
    may be QUANTIZED_STEPS apart unless integer_steps says otherwise.
    cpu_model: what the CPU runs instead, where LiteRT has no CPU kernel for
    an op of `model` (MediaPipe's custom ops, rewritten to builtins).
    input_range: of the random float inputs (real models: what they expect).
    absolute: judge by the largest absolute difference (probabilities)."""
    if integer_steps is None:
        integer_steps = QUANTIZED_STEPS if _has_quantized_outputs(model) else 0
    reference = cpu_model or model
    cpu_stage, cpu_outputs, cpu_error = _stage_run(reference, None, seed, input_range)
    options = {"log_level": "warning", **(options or {})}
    with _CapturedStderr() as captured:
        try:
            delegate = make_delegate(options)
        except ValueError as error:
            return {"outcome": "delegate_create_failed", "detail": str(error), "delegated": 0}
        gpu_stage, gpu_outputs, gpu_error = _stage_run(model, delegate, seed, input_range)
        delegate_stats = stats(delegate)
        delegated = delegate_stats["nodes_delegated"] if gpu_stage != "load" else 0
        total = delegate_stats["nodes_total"]
        # A fresh delegate acquires its GL context in its Prepare: no renderer
        # means the runtime never asked the delegate.
        prepared = delegate_stats["renderer"] != ""
    warnings = " | ".join(line for line in captured.text.splitlines() if "WARNING" in line)
    result = _classify(cpu_stage, cpu_outputs, cpu_error, gpu_stage, gpu_outputs, gpu_error,
                       delegated, prepared, warnings, tolerance, reference, seed,
                       input_range, absolute, model, integer_steps)
    result.update(total=total, warnings=warnings[:8000])
    return result


def _classify(cpu_stage, cpu_outputs, cpu_error, gpu_stage, gpu_outputs, gpu_error,
              delegated, prepared, warnings, tolerance, reference, seed,
              input_range, absolute, model, integer_steps=0) -> dict:
    if cpu_stage != "ok":
        # The stage may differ: with a delegate, the runtime prepares the
        # graph inside the Interpreter constructor (ModifyGraphWithDelegate).
        if gpu_stage != "ok":
            return {"outcome": "rejected",
                    "detail": f"CPU at {cpu_stage}, delegate run at {gpu_stage}: "
                              f"{cpu_error[:300]}", "delegated": delegated}
        return {"outcome": "disagree_on_rejection",
                "detail": f"CPU failed at {cpu_stage} ({cpu_error[:300]}), delegate run "
                          f"reached {gpu_stage} ({gpu_error[:300]})", "delegated": delegated}
    if gpu_stage == "load" and not prepared:
        return {"outcome": "runtime_refused_delegate", "detail": warnings[:600],
                "delegated": 0}
    if gpu_stage != "ok" and reference is not model and (
            delegated == 0 or "unresolved custom op" in gpu_error):
        # An op only the delegate runs (LiteRT has no CPU kernel for it),
        # declined: the model fails as it fails without the delegate, also
        # where other nodes of it ran on the GPU (the runtime names the
        # unresolved op; the reference model is only a stand-in for it).
        own_stage, _, own_error = _stage_run(model, None, seed, input_range)
        if own_stage != "ok":
            return {"outcome": "declined",
                    "detail": f"{warnings[:400]} | without the delegate too, at "
                              f"{own_stage}: {own_error[:200]}", "delegated": 0}
    if gpu_stage != "ok":
        return {"outcome": "delegate_error",
                "detail": f"{gpu_stage}: {gpu_error[:600]}", "delegated": delegated}
    mismatch = compare_outputs(gpu_outputs, cpu_outputs, tolerance, integer_steps, absolute)
    if mismatch and delegated == 0:
        # Nothing ran on the GPU: both runs were TFLite's CPU kernels, which
        # read out of bounds on some hostile parameters and differ run to run.
        return {"outcome": "cpu_unstable", "detail": mismatch, "delegated": 0}
    if mismatch:
        # A CPU answer that changes between two identical runs is no reference.
        _, again, _ = _stage_run(reference, None, seed, input_range)
        if again is None or compare_outputs(again, cpu_outputs, tolerance, integer_steps, absolute):
            return {"outcome": "cpu_unstable", "detail": mismatch, "delegated": delegated}
    if mismatch:
        return {"outcome": "wrong_answer", "detail": mismatch, "delegated": delegated}
    if delegated == 0:
        return {"outcome": "declined", "detail": warnings[:600], "delegated": 0}
    return {"outcome": "agree", "detail": warnings[:600], "delegated": delegated}


FP16_OPTIONS = {"precision_loss_allowed": "true", "inference_priority1": "min_memory_usage"}
FP16_TOLERANCE = 1e-2


def run_cases_and_print(cases, fp16: bool = False) -> None:
    """Child-process driver: cases is [(name, factory)], the factory giving
    the model's bytes or a dict of check_model's arguments ({"model": ...,
    "cpu_model": ..., "tolerance": ...}); prints one JSON line per case, with
    a START line first so that a crash names it. fp16: tensors stored as
    float16 (forced on llvmpipe too), judged at FP16_TOLERANCE or the
    case's own "fp16_tolerance"."""
    for name, factory in cases:
        print(json.dumps({"start": name}), flush=True)
        try:
            made = factory()
            made = dict(made) if isinstance(made, dict) else {"model": made}
            fp16_tolerance = made.pop("fp16_tolerance", FP16_TOLERANCE)
            fp16_absolute = made.pop("fp16_absolute", False)
            if fp16:
                made["absolute"] = fp16_absolute
                made["options"] = {**made.get("options", {}), **FP16_OPTIONS}
                made["tolerance"] = max(made.get("tolerance", 0.0), fp16_tolerance)
            result = check_model(**made)
        except Exception:  # noqa: BLE001 - a builder bug is a failure, reported
            result = {"outcome": "harness_error", "detail": traceback.format_exc()[-800:],
                      "delegated": 0}
        result["case"] = name
        print(json.dumps(result), flush=True)


def parse_results(stdout: str) -> tuple[dict, str | None]:
    """{case: result} from run_cases_and_print output, and the case that was
    started but never finished (a crash), if any."""
    results, started = {}, None
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        if "start" in record:
            started = record["start"]
        else:
            results[record["case"]] = record
            started = None
    return results, started
