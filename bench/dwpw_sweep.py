#!/usr/bin/env python3
"""Depthwise-into-GEMM sweep: per-layer GPU time of each depthwise ->
pointwise pair (fused: the one gemm dispatch; unfused: the depthwise plus
its GEMM) under several environment variants, from GPU timer queries
(bench/profile.py's collect), one variant after another in one process.

    python3 bench/dwpw_sweep.py --model build/models/mobilenet_v1_1.0_224.tflite \\
        --variant unfused:TFLITE_GLES_FUSE_DEPTHWISE=0 --variant fused: \\
        --variant t8x8:TFLITE_GLES_GEMM_TILE=1/1/8/8/8

A variant is NAME:KEY=VALUE,KEY=VALUE... of environment variables set
while its delegate is created. Pairs are numbered by their GEMM's place
among the model's gemm dispatches; a variant's pair reads "-" where its GEMM
is no pair (no depthwise before it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from variants import environment  # noqa: E402
from profile import collect  # noqa: E402


def pairs(rows):
    """[(us, fused)] per gemm dispatch: its time plus a depthwise right before it."""
    out = []
    for i, row in enumerate(rows):
        if not row["shader"].startswith("gemm"):  # gemm, gemm_dw_splitk
            continue
        fused = "DEPTHWISE" in row["label"]
        us = row["ms"] * 1e3
        if not fused and i > 0 and rows[i - 1]["shader"] == "depthwise_conv2d":
            us += rows[i - 1]["ms"] * 1e3
        out.append((us, fused))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--variant", action="append", required=True)
    args = parser.parse_args()
    results = []
    for text in args.variant:
        name, _, rest = text.partition(":")
        env = dict(item.partition("=")[::2] for item in filter(None, rest.split(",")))
        with environment(env):
            rows, stats, wall = collect(args.model, args.fp16, args.iterations, 1)
        results.append((name, pairs(rows), sum(r["ms"] for r in rows) * 1e3,
                        len(rows), wall))
    names = [r[0] for r in results]
    print("pair  " + "".join(f"{n:>12}" for n in names))
    for k in range(max(len(r[1]) for r in results)):
        cells = []
        for _, p, _, _, _ in results:
            if k < len(p):
                cells.append(f"{p[k][0]:>11.1f}{'*' if p[k][1] else ' '}")
            else:
                cells.append(f"{'-':>12}")
        print(f"{k:>4}  " + "".join(cells))
    print("sum   " + "".join(f"{r[2]:>12.1f}" for r in results) + "   (us, all dispatches)")
    print("disp  " + "".join(f"{r[3]:>12d}" for r in results))
    print("wall  " + "".join(f"{r[4] * 1e3:>12.1f}" for r in results) +
          "   (us, profiled invokes)")
    print("* = fused dispatch")


if __name__ == "__main__":
    main()
