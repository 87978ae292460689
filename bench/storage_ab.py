#!/usr/bin/env python3
"""The three tensor storages side by side (docs/design.md, "Tensor layout
and storage"): SSBO reads, texture-buffer reads, RGBA textures, per model,
op by op, in one process with profiled invokes interleaved in rounds (a load
change on a shared machine hits every storage alike).

    python3 bench/storage_ab.py --model ../shared/models/selfie_segmentation.tflite \\
        [--fp16] [--iterations 10] [--storages ssbo,texture_buffer,rgba_texture]

Per storage: the median over invokes of the sum of dispatch times (GPU timer
queries, or glFinish around each dispatch on llvmpipe, where a dispatch runs
inside the call) and of the invoke's wall time; then per shader, the median
per-invoke sum of its dispatches, with each storage's ratio to the first.
Outputs of every storage are compared with the first's (largest difference).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "bench"))

import gles_testing as gt  # noqa: E402
from bench_worker import make_inputs  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--storages", default="ssbo,texture_buffer,rgba_texture")
    args = parser.parse_args()
    storages = args.storages.split(",")
    runs = []
    for storage in storages:
        delegate = gt.make_delegate({"enable_profiling": "true", "storage": storage,
                                     "precision_loss_allowed": args.fp16})
        interp = gt.interpreter(args.model, delegate)
        interp.allocate_tensors()
        runs.append((storage, delegate, interp))
    details = runs[0][2].get_input_details()
    inputs = make_inputs([(d["shape"], d["dtype"]) for d in details], seed=1)
    outputs = {}
    for storage, _, interp in runs:  # first invokes compile: not measured
        for detail, value in zip(details, inputs):
            interp.set_tensor(detail["index"], value)
        interp.invoke()
        outputs[storage] = [interp.get_tensor(d["index"]).copy()
                            for d in interp.get_output_details()]
    sums = defaultdict(list)
    walls = defaultdict(list)
    by_shader = defaultdict(lambda: defaultdict(list))
    for _ in range(args.iterations):
        for storage, delegate, interp in runs:
            start = time.perf_counter()
            interp.invoke()
            walls[storage].append((time.perf_counter() - start) * 1e3)
            entries = gt.profile(delegate)
            if not entries:
                continue
            sums[storage].append(sum(e["ms"] for e in entries))
            shader_ms = defaultdict(float)
            for e in entries:
                shader_ms[e["shader"]] += e["ms"]
            for shader, ms in shader_ms.items():
                by_shader[shader][storage].append(ms)
    stats = gt.stats(runs[0][1])
    base = storages[0]
    print(f"{Path(args.model).stem} {'fp16' if args.fp16 else 'fp32'} on {stats['renderer']}, "
          f"{args.iterations} interleaved profiled invokes per storage")
    print(f"{'storage':16s} {'dispatch sum ms':>16s} {'ratio':>6s} {'wall ms':>9s} "
          f"{'dispatches':>10s} {'max |diff|':>11s}")
    for storage, delegate, _ in runs:
        s = gt.stats(delegate)
        median = statistics.median(sums[storage])
        diff = max(float(np.max(np.abs(a.astype(np.float64) - b)))
                   for a, b in zip(outputs[storage], outputs[base]))
        print(f"{storage:16s} {median:16.3f} {median / statistics.median(sums[base]):6.2f} "
              f"{statistics.median(walls[storage]):9.3f} {s['dispatches']:10d} {diff:11.3g}")
    print("\nper shader, median ms per invoke (ratio to " + base + "):")
    header = "".join(f" {s:>22s}" for s in storages)
    print(f"  {'shader':24s}{header}")
    for shader, per in sorted(by_shader.items(),
                              key=lambda kv: -statistics.median(kv[1].get(base, [0]))):
        cells = []
        reference = statistics.median(per[base]) if per.get(base) else 0.0
        for storage in storages:
            if not per.get(storage):
                cells.append(f" {'-':>22s}")
                continue
            ms = statistics.median(per[storage])
            ratio = f"({ms / reference:.2f})" if reference > 0 else ""
            cells.append(f" {ms:14.3f} {ratio:>7s}")
        print(f"  {shader:24s}{''.join(cells)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
