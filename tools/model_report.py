#!/usr/bin/env python3
"""Runs every catalog model through tflite-gles (fp32 and fp16) and on the
CPU, and prints a Markdown table: delegation, programs, cold init, warm
latency, CPU latency, fp32 error and the fp16 figure its kind is judged by
(see docs/models.md).

    python3 tools/model_report.py [--iterations 5] [--models NAME ...]
"""

from __future__ import annotations

import argparse
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


def timed(interp, inputs, iterations: int) -> float:
    """Median ms of set-inputs + invoke + read-outputs."""
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        gt.invoke(interp, inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def fp16_figure(spec, gpu, cpu) -> str:
    """The number the fp16 criterion of spec's kind looks at."""
    if spec.kind == "classification":
        g, c = np.argsort(-gpu[0][0]), np.argsort(-cpu[0][0])
        same = "same" if set(g[:5]) == set(c[:5]) else "DIFFERENT"
        return f"top-1 {'same' if g[0] == c[0] else 'DIFFERENT'}, top-5 {same}"
    if spec.kind == "segmentation_argmax":
        return f"masks agree {np.mean(gpu[0][0].argmax(-1) == cpu[0][0].argmax(-1)):.3%}"
    if spec.kind == "segmentation_threshold":
        return f"masks agree {np.mean((gpu[0] > 0.5) == (cpu[0] > 0.5)):.3%}"
    if spec.kind == "detection":
        error = np.max(np.abs(mc.sigmoid(gpu[1]) - mc.sigmoid(cpu[1])))
        return f"scores ±{error:.1e}, boxes L2 {gt.relative_error(gpu[0], cpu[0]):.1e}"
    if spec.kind == "ssd":
        return f"detection scores ±{np.max(np.abs(gpu[2] - cpu[2])):.1e}"
    if spec.kind == "pose":
        error = np.max(np.abs(mc.sigmoid(gpu[0]) - mc.sigmoid(cpu[0])))
        return f"keypoint scores ±{error:.1e}"
    return f"image L2 {gt.relative_error(gpu[0], cpu[0]):.1e}"


def report_row(spec, iterations: int) -> str:
    cpu_interp = gt.interpreter(mc.cpu_reference_model(spec))
    cpu_interp.allocate_tensors()
    inputs = mc.model_inputs(spec, cpu_interp.get_input_details())
    cpu = gt.invoke(cpu_interp, inputs)
    cpu_ms = timed(cpu_interp, inputs, iterations)
    cells = {}
    for fp16 in (False, True):
        start = time.perf_counter()
        try:
            delegate = gt.make_delegate({"precision_loss_allowed": fp16})
            interp = gt.interpreter(str(spec.path), delegate)
            gpu = gt.invoke(interp, inputs)
        except (RuntimeError, ValueError) as error:
            return f"| {spec.name} | failed: {str(error).splitlines()[0][:80]} |"
        cold_ms = (time.perf_counter() - start) * 1e3
        stats = gt.stats(delegate)
        cells[fp16] = dict(stats=stats, cold=cold_ms, warm=timed(interp, inputs, iterations),
                           gpu=gpu)
        del interp
    s = cells[False]["stats"]
    fp32_error = max(gt.relative_error(g, c) for g, c in zip(cells[False]["gpu"], cpu))
    return (f"| {spec.name} | {s['nodes_delegated']}/{s['nodes_total']} in {s['partitions']} "
            f"| {s['programs']} | {cells[False]['cold']:.0f} / {cells[True]['cold']:.0f} "
            f"| {cells[False]['warm']:.1f} / {cells[True]['warm']:.1f} | {cpu_ms:.1f} "
            f"| {fp32_error:.1e} | {fp16_figure(spec, cells[True]['gpu'], cpu)} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=5, help="invokes per median")
    parser.add_argument("--models", nargs="*", default=list(mc.CATALOG), choices=list(mc.CATALOG))
    args = parser.parse_args()
    print("| model | nodes on GPU | programs | cold init ms fp32 / fp16 | GPU ms fp32 / fp16 "
          "| CPU ms | fp32 rel. L2 (worst output) | fp16 |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models:
        print(report_row(mc.CATALOG[name], args.iterations), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
