#!/usr/bin/env python3
"""Epilogue fusion on and off, back to back: warm latency, dispatches and
programs of each model with the default delegate and with
experimental_flags TFLITE_GLES_EXPERIMENTAL_NO_FUSION, plus the largest
difference between the two answers.

    python3 bench/fusion_ab.py [--fp16] [--iterations N] MODEL.tflite ...

Both interpreters live in one process and their invokes alternate in
rounds, so a load change on a shared machine hits both alike. Timings are
wall time of set_tensor + invoke + get_tensor (median of N).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "bench"))

import gles_testing as gt  # noqa: E402
from variants import timed  # noqa: E402

NO_FUSION = 2  # TFLITE_GLES_EXPERIMENTAL_NO_FUSION


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()
    print("| model | fused: dispatches / programs / ms | unfused: dispatches / programs / ms "
          "| fused ÷ unfused | max diff |")
    print("|---|---|---|---|---|")
    for model in args.models:
        runs = {}
        for flags in (0, NO_FUSION):
            delegate = gt.make_delegate({"precision_loss_allowed": args.fp16,
                                         "experimental_flags": flags})
            interp = gt.interpreter(model, delegate)
            interp.allocate_tensors()
            runs[flags] = {"delegate": delegate, "interp": interp, "times": []}
        rng = np.random.default_rng(1)
        details = runs[0]["interp"].get_input_details()
        inputs = [rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]) for d in details]
        for _ in range(3):  # warm-up: JIT, first-touch allocations
            for run in runs.values():
                run["outputs"] = timed(run["interp"], inputs)[1]
        for _ in range(args.iterations):
            for run in runs.values():
                run["times"].append(timed(run["interp"], inputs)[0])
        diff = max(float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
                   for a, b in zip(runs[0]["outputs"], runs[NO_FUSION]["outputs"]))
        cells = []
        for flags in (0, NO_FUSION):
            s = gt.stats(runs[flags]["delegate"])
            cells.append(f"{s['dispatches']} / {s['programs']} / "
                         f"{statistics.median(runs[flags]['times']):.3f}")
        ratio = statistics.median(runs[0]["times"]) / statistics.median(runs[NO_FUSION]["times"])
        print(f"| {Path(model).name} | {cells[0]} | {cells[1]} | {ratio:.2f} | {diff:.3g} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
