#!/usr/bin/env python3
"""The main job: run a .tflite model through tflite-gles on the default EGL
device and compare it with LiteRT's CPU result.

Prints the GL renderer, how many nodes were delegated in how many partitions,
cold init, warm latency beside LiteRT's default CPU path (XNNPACK, all cores)
and its builtin reference kernels, and the max error against the CPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "tools"))

import gles_testing as gt  # noqa: E402
import model_catalog as mc  # noqa: E402


def resolve_model(choice: str | None):
    """(spec or None, model path): a catalog name (default: the MobileNet v1
    1.0 224 stand-in, built into build/models on first use) or a .tflite path."""
    choice = choice or mc.DEFAULT_MODEL
    if choice in mc.CATALOG:
        spec = mc.CATALOG[choice]
        if spec.standin and not (mc.STANDIN_DIR / f"{spec.name}.tflite").exists():
            print(f"building stand-in {spec.name} into {mc.STANDIN_DIR} ...", file=sys.stderr)
        return spec, spec.path
    path = Path(choice)
    if not path.is_file():
        raise SystemExit(f"run_model: {choice!r} is neither a model name "
                         f"({', '.join(mc.CATALOG)}) nor a .tflite file")
    return None, path


def model_inputs(spec, interp, seed: int):
    """Catalog models get their photograph; other models seeded random data."""
    if spec is not None:
        return mc.model_inputs(spec, interp.get_input_details(), seed)
    rng = np.random.default_rng(seed)
    inputs = []
    for detail in interp.get_input_details():
        if np.issubdtype(detail["dtype"], np.floating):
            inputs.append(rng.uniform(-1, 1, detail["shape"]).astype(detail["dtype"]))
        else:
            info = np.iinfo(detail["dtype"])
            inputs.append(rng.integers(info.min, info.max, detail["shape"]).astype(detail["dtype"]))
    return inputs


def timed_invokes(interp, inputs, iterations: int, label: str) -> list[float]:
    """Wall time of each invoke (set inputs, invoke, read outputs), in ms.
    Says how far it got every few seconds, so a slow device shows progress."""
    times = []
    last_report = time.perf_counter()
    for i in range(iterations):
        start = time.perf_counter()
        for detail, value in zip(interp.get_input_details(), inputs):
            interp.set_tensor(detail["index"], value)
        interp.invoke()
        for detail in interp.get_output_details():
            interp.get_tensor(detail["index"])
        now = time.perf_counter()
        times.append((now - start) * 1e3)
        if now - last_report > 5.0 and i + 1 < iterations:
            print(f"  {label}: {i + 1}/{iterations} invokes, median so far "
                  f"{statistics.median(times):.1f} ms", file=sys.stderr, flush=True)
            last_report = now
    return times


def describe_result(spec, outputs) -> str | None:
    """One line saying what the model answered, where its kind says how to read it."""
    if spec is None:
        return None
    if spec.kind == "classification":
        scores = outputs[0][0].astype(np.float64)  # uint8 scores of a quantized model too
        top = np.argsort(-scores, kind="stable")[:5]
        return "top-5 classes " + ", ".join(f"{i} ({scores[i]:.3f})" for i in top)
    if spec.kind == "segmentation_argmax":
        labels, counts = np.unique(outputs[0][0].argmax(-1), return_counts=True)
        return "pixels per class " + ", ".join(f"{l}: {c}" for l, c in zip(labels, counts))
    if spec.kind == "segmentation_threshold":
        return f"foreground {np.mean(outputs[0] > 0.5):.1%} of pixels"
    if spec.kind == "detection":
        return f"best score {mc.sigmoid(outputs[1]).max():.3f}"
    if spec.kind == "ssd":
        return f"{int(outputs[3][0])} detections, best score {outputs[2][0].max():.3f}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help=f"a model name ({', '.join(mc.CATALOG)}) or a "
                        f".tflite file (default: {mc.DEFAULT_MODEL}, an architecture-exact "
                        "stand-in with seeded weights)")
    parser.add_argument("--fp16", action="store_true", help="allow fp16 (precision loss)")
    parser.add_argument("--iterations", type=int, default=20, help="warm invokes to time")
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU comparison")
    parser.add_argument("--egl-platform", default="auto",
                        choices=["auto", "device", "surfaceless", "default"])
    parser.add_argument("--list", action="store_true", help="list the model names and exit")
    args = parser.parse_args()
    if args.list:
        for spec in mc.CATALOG.values():
            origin = "stand-in" if spec.standin else "../shared/models"
            print(f"{spec.name:32s} {spec.kind:24s} {origin}, input: {spec.image}")
        return 0

    spec, path = resolve_model(args.model)
    options = {"precision_loss_allowed": args.fp16, "egl_platform": args.egl_platform}

    origin = (" (stand-in with seeded weights: its classes mean nothing, its agreement "
              "with the CPU does)") if spec is not None and spec.standin else ""
    print(f"model:        {path}{origin}", flush=True)
    print("  GPU: applying the delegate (shader compilation) and the first invoke ...",
          file=sys.stderr, flush=True)
    start = time.perf_counter()
    delegate = gt.make_delegate(options)
    interp = gt.interpreter(str(path), delegate)
    interp.allocate_tensors()
    inputs = model_inputs(spec, interp, seed=1)
    gpu = gt.invoke(interp, inputs)
    cold_ms = (time.perf_counter() - start) * 1e3
    stats = gt.stats(delegate)
    warm = timed_invokes(interp, inputs, args.iterations, "GPU")

    print(f"GL renderer:  {stats['renderer']}")
    print(f"GL version:   {stats['gl_version']}  ({stats['egl_display']})")
    print(f"delegated:    {stats['nodes_delegated']} of {stats['nodes_total']} nodes "
          f"in {stats['partitions']} partition(s), {stats['dispatches']} dispatches, "
          f"{stats['programs']} programs")
    print(f"precision:    {'fp16' if args.fp16 else 'fp32'}")
    print(f"cold init:    {cold_ms:.1f} ms (ModifyGraphWithDelegate + first invoke)")
    print(f"GPU latency:  {statistics.median(warm):.3f} ms median of {len(warm)} "
          f"(min {min(warm):.3f}, max {max(warm):.3f})", flush=True)
    answer = describe_result(spec, gpu)
    if answer:
        print(f"GPU result:   {answer}")
    if not args.no_cpu:
        reference = mc.cpu_reference_model(spec) if spec is not None else str(path)
        cpu_interp = gt.interpreter(reference)
        cpu = gt.invoke(cpu_interp, inputs)
        cpu_times = timed_invokes(cpu_interp, inputs, args.iterations, "CPU builtin")
        # LiteRT's default CPU path: what a user gets without any delegate.
        threads = os.cpu_count() or 1
        xnn_interp = gt.interpreter(reference, num_threads=threads, use_xnnpack=True)
        gt.invoke(xnn_interp, inputs)
        xnn_times = timed_invokes(xnn_interp, inputs, args.iterations, "CPU XNNPACK")
        ours, xnn, builtin = (statistics.median(t) for t in (warm, xnn_times, cpu_times))
        print()
        print(f"{'path':48s} {'median ms':>10s} {'speed vs XNNPACK':>17s}")
        for label, ms in (("tflite-gles (this delegate, " + ("fp16)" if args.fp16 else "fp32)"), ours),
                          (f"LiteRT CPU, XNNPACK (default), {threads} threads", xnn),
                          ("LiteRT CPU, builtin reference kernels, 1 thread", builtin)):
            print(f"{label:48s} {ms:10.3f} {xnn / ms:16.2f}x")
        if xnn < ours:
            print(f"On this machine ({stats['renderer']}) LiteRT's default CPU path is "
                  f"{ours / xnn:.1f}x faster than the delegate: use the CPU here.")
        else:
            print(f"The delegate is {xnn / ours:.1f}x faster than LiteRT's default CPU path here.")
        print()
        answer = describe_result(spec, cpu)
        if answer:
            print(f"CPU result:   {answer}")
        for i, (g, c) in enumerate(zip(gpu, cpu)):
            err = float(np.max(np.abs(g.astype(np.float64) - c.astype(np.float64))))
            print(f"max error:    output {i}: {err:.3g} (relative L2 "
                  f"{gt.relative_error(g, c):.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
