#!/usr/bin/env python3
"""Quantized models beside their float twin, interleaved in one process:
warm latency of several (model, precision) runs on tflite-gles, invokes
alternating in blocks so that a load change hits every run alike.

    python3 bench/quant_ab.py --model float.tflite --model quant.tflite \\
        [--precision fp32 --precision fp16] [--rounds 10] [--block 20] \\
        [--label new] [--json out.json]

The library is TFLITE_GLES_LIB (default build/libtflite_gles.so): compare two
libraries by alternating processes (bench/device_quant2.sh). A run's time is
wall time of set_tensor + invoke + get_tensor (what an application pays per
frame, the quantized input's conversion included); each block of `block`
timed invokes follows one untimed one (each delegate owns its EGL context;
switching between interpreters costs more than a small invoke). Prints one
table (median, min, p90, and median / the first model's median at the same
precision) and writes the same as JSON; `--summarize DIR` prints the table
over several processes' JSON files (bench/device_quant2.sh).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

import gles_testing as gt  # noqa: E402

PRECISIONS = {
    "fp32": {},
    # What run_bench's gles_fp16 asks for: fp16 storage.
    "fp16": {"precision_loss_allowed": "true", "inference_priority1": "min_memory_usage"},
}


def random_input(detail, rng):
    if detail["dtype"] == np.uint8:
        return rng.integers(0, 256, detail["shape"], dtype=np.uint8)
    if detail["dtype"] == np.int8:
        return rng.integers(-128, 128, detail["shape"], dtype=np.int8)
    return rng.uniform(-1, 1, detail["shape"]).astype(detail["dtype"])


def timed(interp, inputs) -> float:
    start = time.perf_counter()
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    for detail in interp.get_output_details():
        interp.get_tensor(detail["index"])
    return (time.perf_counter() - start) * 1e3


def summarize(folder: Path) -> None:
    """The table over processes: quant2-{base,new}-r*.json in `folder` (the
    label's first word names the side), per model and precision the median
    of the processes' medians."""
    rows: dict = {}
    for f in sorted(folder.glob("quant2-*-r*.json")):
        for r in json.loads(f.read_text()):
            side = r["label"].split("-")[0]
            rows.setdefault((r["model"], r["precision"]), {}).setdefault(side, []).append(r)

    def med(runs, key):
        return statistics.median(r[key] for r in runs) if runs else float("nan")

    count = max(len(s.get("new", [])) for s in rows.values())
    print(f"median of {count} processes' medians, ms; ratio: / the float twin in the same process")
    print("| model | precision | base ms | new ms | new / base | base ratio | new ratio "
          "| dispatches base/new |")
    print("|---|---|---|---|---|---|---|---|")
    for (model, precision), sides in rows.items():
        b, n = sides.get("base", []), sides.get("new", [])
        dispatches = "/".join(str(s[0]["dispatches"]) if s else "-" for s in (b, n))
        print(f"| {model} | {precision} | {med(b, 'median_ms'):.4f} | {med(n, 'median_ms'):.4f} "
              f"| {med(n, 'median_ms') / med(b, 'median_ms'):.3f} "
              f"| {med(b, 'ratio_to_first'):.3f} | {med(n, 'ratio_to_first'):.3f} "
              f"| {dispatches} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summarize", metavar="DIR",
                        help="only print the table of the JSON files in DIR")
    parser.add_argument("--model", action="append")
    parser.add_argument("--precision", action="append", choices=sorted(PRECISIONS))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--block", type=int, default=20)
    parser.add_argument("--label", default="")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.summarize:
        summarize(Path(args.summarize))
        return 0
    if not args.model:
        parser.error("--model is required")
    rng = np.random.default_rng(1)
    runs = []
    for precision in args.precision or ["fp32", "fp16"]:
        for model in args.model:
            delegate = gt.make_delegate(dict(PRECISIONS[precision]))
            interp = gt.interpreter(model, delegate)
            interp.allocate_tensors()
            inputs = [random_input(d, rng) for d in interp.get_input_details()]
            stats = gt.stats(delegate)
            runs.append({"model": Path(model).stem, "precision": precision,
                         "delegate": delegate, "interp": interp, "inputs": inputs,
                         "dispatches": stats["dispatches"], "times": []})
    for _ in range(3):  # warm-up: JIT, first-touch allocations
        for run in runs:
            timed(run["interp"], run["inputs"])
    for _ in range(args.rounds):
        for run in runs:
            timed(run["interp"], run["inputs"])
            run["times"] += [timed(run["interp"], run["inputs"]) for _ in range(args.block)]
    rows = []
    first = {}
    for run in runs:
        times = sorted(run["times"])
        median = statistics.median(times)
        first.setdefault(run["precision"], median)
        rows.append({"label": args.label, "model": run["model"],
                     "precision": run["precision"], "median_ms": median,
                     "min_ms": times[0], "p90_ms": times[int(0.9 * (len(times) - 1))],
                     "ratio_to_first": median / first[run["precision"]],
                     "dispatches": run["dispatches"], "invokes": len(times)})
    print(f"{args.label or gt.LIB}: {rows[0]['invokes']} invokes per run")
    print("| model | precision | median ms | min | p90 | ÷ first model | dispatches |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['precision']} | {r['median_ms']:.4f} | {r['min_ms']:.4f} | "
              f"{r['p90_ms']:.4f} | {r['ratio_to_first']:.3f} | {r['dispatches']} |",
              flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
