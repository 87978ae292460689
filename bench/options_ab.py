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
variant's delegate is created (the delegate reads its knobs then). Timings
are wall time of set_tensor + invoke + get_tensor, in blocks of 20 per
variant; the table gives median,
min and p90 per variant, its ratio to the first variant, and the largest
difference of its outputs from the first variant's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

import gles_testing as gt  # noqa: E402


def parse_variant(text: str) -> tuple[str, dict, dict]:
    name, _, rest = text.partition(":")
    options, env = {}, {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if key.startswith("env."):
            env[key[4:]] = value
        else:
            options[key] = value
    return name, options, env


@contextlib.contextmanager
def environment(env: dict):
    """Sets `env` in os.environ for the block, then restores what was there."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def variant_interpreter(model, options: dict, env: dict):
    """(delegate, allocated interpreter) for one variant: `env` is set only
    while the delegate is created, when it reads its knobs."""
    with environment(env):
        delegate = gt.make_delegate(options)
        interp = gt.interpreter(model, delegate)
        interp.allocate_tensors()
    return delegate, interp


def timed(interp, inputs) -> tuple[float, list]:
    start = time.perf_counter()
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    outputs = [interp.get_tensor(d["index"]) for d in interp.get_output_details()]
    return (time.perf_counter() - start) * 1e3, outputs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--variant", action="append", required=True)
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()
    runs = []
    for text in args.variant:
        name, options, env = parse_variant(text)
        delegate, interp = variant_interpreter(args.model, options, env)
        runs.append({"name": name, "delegate": delegate, "interp": interp, "times": []})
    rng = np.random.default_rng(1)
    details = runs[0]["interp"].get_input_details()
    inputs = [rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]) for d in details]
    for _ in range(5):  # warm-up: JIT, first-touch allocations
        for run in runs:
            run["outputs"] = timed(run["interp"], inputs)[1]
    # Blocks of 20 timed invokes per variant after one untimed: each delegate
    # owns its EGL context, and the switch between interpreters costs more
    # than a small invoke (an application runs one model many times in a row).
    for _ in range(max(1, args.iterations // 20)):
        for run in runs:
            timed(run["interp"], inputs)
            for _ in range(20):
                run["times"].append(timed(run["interp"], inputs)[0])
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
