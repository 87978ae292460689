#!/usr/bin/env python3
"""The delegate's fixed costs: warm latency of chains of N elementwise NEG
ops (one dispatch each: the elementwise-chain fusion that would fold them,
delegate/passes/fusion.h, is switched off here) on a tiny and on a mid-sized
tensor, for N = 1 and N = 32, under each variant of delegate options.

    (t(32) - t(1)) / 31  = the cost of one more dispatch in a chain
    t(1)                 = the cost of an invoke with one dispatch: upload,
                           layout conversions, wait and readback

    python3 bench/dispatch_floor.py --variant base: --variant ssbo:storage=ssbo

Variants are written as in bench/variants.py (NAME:KEY=VALUE,...;
env.NAME=VALUE sets an environment variable while the delegate is created).
Timings are wall time of set_tensor + invoke + get_tensor, median of about
--iterations invokes per case, run in blocks of 20 after a context switch.
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
sys.path.insert(0, str(REPO / "bench"))

import gles_testing as gt  # noqa: E402
from variants import parse_variant, variant_interpreter  # noqa: E402
from tflite_builder import ModelBuilder  # noqa: E402


BLOCK = 21


def chain_model(shape: list[int], length: int) -> bytes:
    builder = ModelBuilder("dispatch floor")
    value = builder.add_input(shape)
    for _ in range(length):
        out = builder.add_tensor(shape)
        builder.add_op("NEG", [value], [out])
        value = out
    builder.set_outputs([value])
    return builder.build()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", default=None)
    parser.add_argument("--iterations", type=int, default=300)
    args = parser.parse_args()
    variants = [parse_variant(v) for v in (args.variant or ["base:"])]
    for _, _, env in variants:
        env.setdefault("TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS", "0")
    shapes = {"tiny 1x1x1x4": [1, 1, 1, 4], "56x56x128": [1, 56, 56, 128]}
    cases = []
    for variant, options, env in variants:
        for shape_name, shape in shapes.items():
            for length in (1, 32):
                delegate, interp = variant_interpreter(chain_model(shape, length),
                                                       options, env)
                data = np.random.default_rng(1).uniform(-1, 1, shape).astype(np.float32)
                cases.append({"variant": variant, "shape": shape_name, "length": length,
                              "delegate": delegate, "interp": interp, "data": data,
                              "times": []})
    # Blocks of BLOCK invokes per case, the first of each untimed: each
    # delegate owns its EGL context, and switching contexts between
    # interpreters costs more than a small invoke; an application runs one
    # model many times in a row.
    for block in range(max(1, args.iterations // (BLOCK - 1))):
        for case in cases:
            interp = case["interp"]
            for index in range(BLOCK):
                start = time.perf_counter()
                interp.set_tensor(interp.get_input_details()[0]["index"], case["data"])
                interp.invoke()
                out = interp.get_tensor(interp.get_output_details()[0]["index"])
                if index > 0:
                    case["times"].append((time.perf_counter() - start) * 1e6)
                elif block == 0:
                    expected = case["data"] * (-1.0) ** case["length"]
                    assert np.array_equal(out, expected), "a NEG chain computed something else"
                    stats = gt.stats(case["delegate"])
                    assert stats["dispatches"] >= case["length"], (
                        f"{case['length']} NEGs ran in {stats['dispatches']} dispatches")
    print(f"about {args.iterations} invokes per case, wall time of set_tensor + invoke + get_tensor, us")
    print("| variant | tensor | 1 dispatch | 32 dispatches | per extra dispatch |")
    print("|---|---|---|---|---|")
    for variant, _, _ in variants:
        for shape_name in shapes:
            one, many = (statistics.median(c["times"]) for c in cases
                         if c["variant"] == variant and c["shape"] == shape_name)
            print(f"| {variant} | {shape_name} | {one:.1f} | {many:.1f} | "
                  f"{(many - one) / 31:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
