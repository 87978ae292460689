#!/usr/bin/env python3
"""Kernel-tile sweep: per-dispatch GPU times (timer queries) of one model's
largest convolutions under several delegate variants, in one process, the
variants' invokes interleaved so that a clock or load change hits all alike.

    python3 bench/conv_sweep.py --model M.tflite --top 6 \\
        --variant base: --variant t8:env.TFLITE_GLES_X_CONV_TILE=8/2/4/32/32

Variants are NAME:KEY=VALUE,... as in bench/options_ab.py (env.NAME: an
environment variable set while that variant's delegate is created). Prints,
for the --top dispatches of the first variant (by time), each variant's median
ms and TFLOP/s, plus the sum of all dispatches and the median invoke wall.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "bench"))

import gles_testing as gt  # noqa: E402
from bench_worker import make_inputs  # noqa: E402
import variants  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--variant", action="append", required=True)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--per-round", type=int, default=5)
    parser.add_argument("--top", type=int, default=6)
    # min: each dispatch's fastest profiled run. The H200 of session 11 let
    # its clock sag between profiled invokes (a variant's every dispatch,
    # the MEANs too, 2x slower in some rounds), which medians carry along.
    parser.add_argument("--stat", choices=["median", "min"], default="median")
    # A cell's fraction of this peak (TFLOP/s; 67: the H100's fp32 FMA rate).
    parser.add_argument("--peak", type=float, default=0.0)
    # Only the layers whose label contains one of these (all --top if none).
    parser.add_argument("--match", action="append", default=[])
    # The --top dispatches by FLOPs instead of by time.
    parser.add_argument("--by-flops", action="store_true")
    # Also a table of this shader's dispatches summed per layer shape
    # (window, channels, output map: the model's op of each label's @node).
    parser.add_argument("--groups", metavar="SHADER")
    # Every dispatch of these shaders (comma-separated, e.g. gemm,gemm_chain), in the
    # model's order (--top ignored).
    parser.add_argument("--shader")
    # Every variant's per-dispatch times (label, shader, us) as JSON here.
    parser.add_argument("--json")
    args = parser.parse_args()

    # A SIGTERM (a device script's `timeout`) ends the variants' setup or
    # the rounds early: the tables of what was done are still printed (each
    # variant set up has its first invoke's profile).
    def stop(*_):
        raise InterruptedError

    signal.signal(signal.SIGTERM, stop)
    runs = []
    done = -1
    try:
        for text in args.variant:
            name, options, env = variants.parse_variant(text)
            delegate, interp = variants.variant_interpreter(
                args.model, {"enable_profiling": "true", **options}, env)
            details = interp.get_input_details()
            inputs = make_inputs([(d["shape"], d["dtype"]) for d in details], seed=1)
            for detail, value in zip(details, inputs):
                interp.set_tensor(detail["index"], value)
            interp.invoke()
            first = gt.profile(delegate)
            runs.append({"name": name, "delegate": delegate, "interp": interp,
                         "profiles": [first] if first else [], "walls": []})
        for done in range(args.rounds):
            for run in runs:
                for _ in range(args.per_round):
                    start = time.perf_counter()
                    run["interp"].invoke()
                    run["walls"].append((time.perf_counter() - start) * 1e3)
                    entries = gt.profile(run["delegate"])
                    if entries:
                        run["profiles"].append(entries)
    except InterruptedError:
        print(f"# stopped by SIGTERM in round {done + 1} of {args.rounds} "
              f"({len(runs)} of {len(args.variant)} variants set up)")
        runs = [run for run in runs if run["profiles"]]
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def medians(run):
        profiles = [p for p in run["profiles"] if len(p) == len(run["profiles"][0])]
        rows = []
        for i, first in enumerate(profiles[0]):
            stat = statistics.median if args.stat == "median" else min
            rows.append({**first, "ms": stat(p[i]["ms"] for p in profiles)})
        # A label seen before gets " #N" (style's 13 norm statistics share
        # one), so that rows match by occurrence across variants.
        seen = {}
        for row in rows:
            seen[row["label"]] = seen.get(row["label"], 0) + 1
            row["nth"] = seen[row["label"]]
            row["name"] = row["label"]  # as printed, cut before the number
            if row["nth"] > 1:
                row["label"] = f"{row['label']} #{row['nth']}"
        return rows

    tables = [medians(run) for run in runs]
    base = tables[0]
    order = sorted(range(len(base)), key=lambda i: -base[i]["ms"])[:args.top]
    if args.match or args.by_flops:
        order = [i for i in range(len(base))
                 if not args.match or any(m in base[i]["label"] + " " for m in args.match)]
        order = sorted(order, key=lambda i: -base[i]["flops"])[:args.top]
    shaders = args.shader.split(",") if args.shader else []
    if shaders:
        order = [i for i in range(len(base)) if base[i]["shader"] in shaders]
    if args.json:
        Path(args.json).write_text(json.dumps({run["name"]: [
            [r["label"], r["shader"], round(r["ms"] * 1e3, 2)] for r in table]
            for run, table in zip(runs, tables)}))
    print(f"# {Path(args.model).name}: {args.stat} ms per dispatch (TFLOP/s), "
          f"{args.rounds}x{args.per_round} profiled invokes per variant")
    print("| layer | " + " | ".join(run["name"] for run in runs) + " |")
    print("|---|" + "---|" * len(runs))
    for i in order:
        cells = []
        for table in tables:
            # Match by label: a variant may have other dispatch counts.
            row = next((r for r in table if r["label"] == base[i]["label"]), None)
            if row is None:
                cells.append("-")
                continue
            rate = row["flops"] / (row["ms"] * 1e9) if row["flops"] and row["ms"] > 0 else 0
            share = f", {100 * rate / args.peak:.0f} %" if args.peak else ""
            cells.append(f"{row['ms'] * 1e3:.1f} us ({rate:.1f}{share})")
        nth = f" #{base[i]['nth']}" if base[i]["nth"] > 1 else ""
        print(f"| {base[i]['name'][:48]}{nth} | " + " | ".join(cells) + " |")
    for shader in shaders:
        print(f"| sum of {shader} ms | " + " | ".join(
            f"{sum(r['ms'] for r in t if r['shader'] == shader):.3f}" for t in tables) + " |")
    if args.groups:
        print_groups(args, base, tables, [run["name"] for run in runs])
    print("| sum of dispatches ms | " +
          " | ".join(f"{sum(r['ms'] for r in t):.3f}" for t in tables) + " |")
    print("| invoke wall ms | " +
          " | ".join(f"{statistics.median(run['walls']):.3f}" if run["walls"] else "-"
                   for run in runs) + " |")
    return 0


def layer_shapes(model: str) -> dict[int, str]:
    """node index -> "KHxKW I->O HxW" of the model's convolutions."""
    interp = gt.interpreter(model)
    shapes = {t["index"]: list(t["shape"]) for t in interp.get_tensor_details()}
    found = {}
    for op in interp._get_ops_details():
        if op["op_name"] == "CONV_2D":
            o, kh, kw, i = shapes[op["inputs"][1]]
            h, w = shapes[op["outputs"][0]][1:3]
            found[op["index"]] = f"{kh}x{kw} {i}->{o} {h}x{w}"
    return found


def print_groups(args, base, tables, names) -> None:
    """Per layer shape: the dispatches' summed µs and overall TFLOP/s."""
    shapes = layer_shapes(args.model)
    groups: dict[str, list[str]] = {}
    for row in base:
        # A fused label ("MIRROR_PAD v1 @237 + CONV_2D v1 @240"): its convolution's.
        nodes = [int(n) for n in re.findall(r"@(\d+)", row["label"]) if int(n) in shapes]
        if row["shader"] == args.groups:
            key = shapes[nodes[0]] if nodes else "other"
            groups.setdefault(key, []).append(row["label"])
    print(f"\n| {args.groups} by layer shape (count) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for key, labels in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        cells = []
        for table in tables:
            rows = [r for r in table if r["label"] in labels]
            ms = sum(r["ms"] for r in rows)
            rate = sum(r["flops"] for r in rows) / (ms * 1e9) if ms > 0 else 0
            cells.append(f"{ms * 1e3:.1f} us ({rate:.1f})" if len(rows) == len(labels) else "-")
        print(f"| {key} ({len(labels)}) | " + " | ".join(cells) + " |")
    print()


if __name__ == "__main__":
    sys.exit(main())
