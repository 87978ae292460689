#!/usr/bin/env python3
"""Delegate variants back to back: warm latency of one model under several
sets of delegate options and environment knobs, in one process, invokes
alternating in rounds so that a load change hits every variant alike.

    python3 bench/options_ab.py --model M.tflite \\
        --variant base: \\
        --variant ssbo:storage=ssbo \\
        --variant draw:env.TFLITE_GLES_X_UPLOAD_USAGE=stream_draw

A variant is NAME:KEY=VALUE,KEY=VALUE...; keys are delegate options
(README's table), or env.NAME for an environment variable set while that
variant's delegate is created (the delegate reads its knobs then; the
syntax and the loop live in bench/variants.py). Timings
are wall time of set_tensor + invoke + get_tensor, in blocks of 20 per
variant; the table gives median,
min and p90 per variant, its ratio to the first variant, and the largest
difference of its outputs from the first variant's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import variants  # noqa: E402
from variants import gt  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    variants.add_arguments(parser)
    args = parser.parse_args()
    runs = variants.load(args.model, args.variant)
    inputs = variants.random_inputs(runs[0]["interp"])
    variants.alternate(runs, inputs, variants.timed, args.iterations)
    for run in runs:
        run["times"] = [ms for ms, _ in run["samples"]]
        run["outputs"] = run["last"][1]  # the last warm-up invoke's
    base = statistics.median(runs[0]["times"])
    print(f"{Path(args.model).name}, {len(runs[0]['times'])} invokes per variant")
    print("| variant | median ms | min | p90 | ÷ first | dispatches | max diff vs first |")
    print("|---|---|---|---|---|---|---|")
    for run in runs:
        times = sorted(run["times"])
        median = statistics.median(times)
        diff = max(float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
                   for a, b in zip(runs[0]["outputs"], run["outputs"]))
        print(f"| {run['name']} | {median:.4f} | {times[0]:.4f} | "
              f"{times[int(0.9 * (len(times) - 1))]:.4f} | {median / base:.3f} | "
              f"{gt.stats(run['delegate'])['dispatches']} | {diff:.3g} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
