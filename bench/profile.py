#!/usr/bin/env python3
"""Where the time goes: per-dispatch GPU times of a model run through
tflite-gles with enable_profiling, as a table with GFLOP/s per layer, and
optionally a Chrome trace (chrome://tracing, ui.perfetto.dev).

Times come from TfLiteGlesDelegateGetProfile: GPU timer queries where the
driver has working ones (NVIDIA), else CPU wall time between glFinish calls
(Mesa llvmpipe, where a dispatch runs synchronously inside the call anyway).
Each row is the median over --iterations profiled invokes.

    python3 bench/profile.py --model ../shared/models/deeplabv3_257_mv_gpu.tflite --trace /tmp/t.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "bench"))

import gles_testing as gt  # noqa: E402
from bench_worker import make_inputs  # noqa: E402


def collect(model: str, fp16: bool, iterations: int, threads: int):
    """Runs `iterations` profiled invokes; returns (rows, stats, wall ms per invoke)."""
    from ai_edge_litert.interpreter import Interpreter

    delegate = gt.make_delegate({"enable_profiling": "true", "precision_loss_allowed": fp16})
    interp = Interpreter(model_path=model, experimental_delegates=[delegate],
                         num_threads=threads)
    interp.allocate_tensors()
    details = interp.get_input_details()
    inputs = make_inputs([(d["shape"], d["dtype"]) for d in details], seed=1)
    for detail, value in zip(details, inputs):
        interp.set_tensor(detail["index"], value)
    interp.invoke()  # first invoke: compiles, not measured
    runs, walls = [], []
    for _ in range(iterations):
        start = time.perf_counter()
        interp.invoke()
        walls.append((time.perf_counter() - start) * 1e3)
        entries = gt.profile(delegate)
        if entries:  # empty if the GPU reported a disjoint timer event
            runs.append(entries)
    if not runs:
        raise SystemExit("no profile came back: is anything delegated?")
    rows = []
    for i, first in enumerate(runs[0]):
        times = [run[i]["ms"] for run in runs if len(run) == len(runs[0])]
        rows.append({**first, "ms": statistics.median(times), "min_ms": min(times)})
    stats = gt.stats(delegate)
    stats["memory"] = gt.memory_stats(delegate)
    return rows, stats, statistics.median(walls)


def gflops(row) -> str:
    return f"{row['flops'] / (row['ms'] * 1e6):.2f}" if row["flops"] and row["ms"] > 0 else ""


def print_table(rows, stats, wall_ms, top: int) -> None:
    total = sum(r["ms"] for r in rows)
    method = ("GPU timer queries" if rows and rows[0]["gpu_timer"]
              else "glFinish around each dispatch (synchronous)")
    print(f"renderer: {stats['renderer']}  |  timing: {method}")
    print(f"delegated {stats['nodes_delegated']}/{stats['nodes_total']} nodes, "
          f"{stats['partitions']} partition(s), {len(rows)} dispatches, "
          f"{stats['programs']} programs")
    memory = stats["memory"]
    if memory["arena_tensors"]:
        print(f"GPU memory: {stats['gpu_bytes'] / 1e6:.2f} MB; {memory['arena_tensors']} "
              f"tensors share {memory['arena_bytes'] / 1e6:.2f} MB (one buffer each: "
              f"{memory['tensors_sum_bytes'] / 1e6:.2f} MB, lifetime bound "
              f"{memory['lower_bound_bytes'] / 1e6:.2f} MB)")
    print(f"sum of dispatch times {total:.3f} ms; profiled invoke wall time {wall_ms:.3f} ms "
          f"(the rest: CPU ops, upload/readback, profiling overhead)\n")
    print(f"{'#':>3} {'part':>4} {'label':40s} {'shader':22s} {'ms':>8} {'%':>5} "
          f"{'GFLOP/s':>8}")
    order = sorted(range(len(rows)), key=lambda i: -rows[i]["ms"])
    shown = set(order[:top]) if top > 0 else set(range(len(rows)))
    for i, r in enumerate(rows):
        if i in shown:
            print(f"{i:3d} {r['partition']:4d} {r['label'][:40]:40s} {r['shader'][:22]:22s} "
                  f"{r['ms']:8.3f} {100 * r['ms'] / total:5.1f} {gflops(r):>8}")
    if len(shown) < len(rows):
        print(f"    ... {len(rows) - len(shown)} faster dispatches not shown (--top 0 shows all)")
    print("\nby shader:")
    by_shader = defaultdict(lambda: [0, 0.0, 0])
    for r in rows:
        entry = by_shader[r["shader"]]
        entry[0] += 1
        entry[1] += r["ms"]
        entry[2] += r["flops"]
    for shader, (count, ms, flops) in sorted(by_shader.items(), key=lambda kv: -kv[1][1]):
        rate = f"{flops / (ms * 1e6):.2f} GFLOP/s" if flops and ms > 0 else ""
        print(f"  {shader:24s} {count:4d} dispatches {ms:9.3f} ms {100 * ms / total:5.1f} %  {rate}")


def write_trace(rows, stats, path: Path) -> None:
    """Chrome trace events laid end to end: dispatches run one after another,
    and the profile has durations, not absolute start times."""
    events, now_us = [], 0.0
    for i, r in enumerate(rows):
        duration = r["ms"] * 1e3
        events.append({"name": r["label"], "cat": r["shader"], "ph": "X", "ts": now_us,
                       "dur": duration, "pid": 1, "tid": r["partition"],
                       "args": {"index": i, "shader": r["shader"], "flops": r["flops"],
                                "gflops_per_s": gflops(r), "gpu_timer": r["gpu_timer"]}})
        now_us += duration
    meta = [{"name": "process_name", "ph": "M", "pid": 1,
             "args": {"name": f"tflite-gles on {stats['renderer']}"}}]
    path.write_text(json.dumps({"traceEvents": meta + events, "displayTimeUnit": "ms"}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1, help="for ops left on the CPU")
    parser.add_argument("--top", type=int, default=40, help="rows shown (0: all)")
    parser.add_argument("--trace", help="write a Chrome trace JSON here")
    parser.add_argument("--json", help="write the rows as JSON here")
    args = parser.parse_args()
    rows, stats, wall = collect(args.model, args.fp16, args.iterations, args.threads)
    print_table(rows, stats, wall, args.top)
    if args.trace:
        write_trace(rows, stats, Path(args.trace))
        print(f"\nwrote {args.trace}")
    if args.json:
        Path(args.json).write_text(json.dumps({"stats": stats, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
