#!/usr/bin/env python3
"""Where an invoke's wall time goes from Python's side: set_tensor, invoke
and get_tensor timed apart, per delegate variant (bench/variants.py's
NAME:KEY=VALUE syntax), in alternating blocks of 20 in one process.

    TFLITE_GLES_X_TIMELINE=1 python3 bench/wall_split.py --model M.tflite \\
        --variant fp32: --variant fp16:precision_loss_allowed=true

With TFLITE_GLES_X_TIMELINE=1 (or env.TFLITE_GLES_X_TIMELINE=1 in a
variant) the delegate also prints, every 200 invokes, its own CPU phases
(upload, submit, wait + readback) and the GPU's time line, so that invoke's
time splits into the GPU's dispatches, the transfers and the CPU's work.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import variants  # noqa: E402
from variants import gt  # noqa: E402


def split(interp, inputs) -> tuple[float, float, float]:
    t0 = time.perf_counter()
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], value)
    t1 = time.perf_counter()
    interp.invoke()
    t2 = time.perf_counter()
    for detail in interp.get_output_details():
        interp.get_tensor(detail["index"])
    t3 = time.perf_counter()
    return (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    variants.add_arguments(parser)
    args = parser.parse_args()
    runs = variants.load(args.model, args.variant)
    inputs = variants.random_inputs(runs[0]["interp"])
    variants.alternate(runs, inputs, split, args.iterations)
    for run in runs:
        run["t"] = run["samples"]
    print(f"{Path(args.model).name}, {len(runs[0]['t'])} invokes per variant, medians in ms")
    print("| variant | set_tensor | invoke | get_tensor | sum | dispatches |")
    print("|---|---|---|---|---|---|")
    for run in runs:
        cols = [statistics.median(t[i] for t in run["t"]) for i in range(3)]
        total = statistics.median(sum(t) for t in run["t"])
        print(f"| {run['name']} | {cols[0]:.4f} | {cols[1]:.4f} | {cols[2]:.4f} | "
              f"{total:.4f} | {gt.stats(run['delegate'])['dispatches']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
