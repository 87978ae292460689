#!/usr/bin/env python3
"""Cold start of two (or more) builds of the library, interleaved: for each
repeat, model and library a fresh process with an empty driver cache and no
serialization cache (`empty`), one that fills a new serialization_dir
(`write`) and one that starts from it (`filled`), exactly as
bench/cold_start.py measures them (its children: bench/cold_init.py
--child, new empty HOME each). The libraries take turns first, so a load
change on the box spreads over all of them.

    python3 bench/cold2_ab.py --lib base=OLD.so --lib new=build/libtflite_gles.so \\
        --model mobilenet_v1_1.0_224 deeplabv3_257_mv_gpu --repeats 5 [--json OUT]

Prints per model and library the medians (all values in brackets) of the
filled start (apply + first invoke), its apply wall and CPU time, the empty
start, and filled as a percentage of empty; the short table last.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cold_start  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", action="append", required=True, help="NAME=PATH")
    parser.add_argument("--model", nargs="+", default=["mobilenet_v1_1.0_224"])
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-empty", action="store_true",
                        help="only write + filled (the empty start does not change with a "
                             "filled-path optimization; saves a third of the time)")
    parser.add_argument("--max-seconds", type=float, default=0,
                        help="start no new repeat after this long (0: no limit)")
    parser.add_argument("--json")
    args = parser.parse_args()
    began = time.monotonic()
    libs = [tuple(item.split("=", 1)) for item in args.lib]
    rows: dict = {}
    for repeat in range(args.repeats):
        if repeat > 0 and args.max_seconds and time.monotonic() - began > args.max_seconds:
            print(f"stopped after {repeat} repeats (--max-seconds)", flush=True)
            break
        order = libs if repeat % 2 == 0 else libs[::-1]
        for model in args.model:
            for name, path in order:
                os.environ["TFLITE_GLES_LIB"] = str(Path(path).resolve())
                with tempfile.TemporaryDirectory(prefix="cold2_") as work:
                    def fresh(sub):
                        folder = os.path.join(work, sub)
                        os.makedirs(folder)
                        return folder
                    got = {}
                    if not args.no_empty:
                        got["empty"] = cold_start.run(model, args.fp16, fresh("h0"), None)
                    ours = fresh("ours")
                    got["write"] = cold_start.run(model, args.fp16, fresh("h1"), ours)
                    got["filled"] = cold_start.run(model, args.fp16, fresh("h2"), ours)
                for case, row in got.items():
                    rows.setdefault(model, {}).setdefault(name, {}).setdefault(
                        case, []).append(row)
                print(f"repeat {repeat + 1} {model} {name}: " + ", ".join(
                    f"{c} {r['total_ms']:.0f}" for c, r in got.items()), flush=True)

    def med(values):
        return statistics.median(values)

    print(f"\nmedians of up to {args.repeats} fresh processes per cell, ms "
          f"({'fp16' if args.fp16 else 'fp32'}); filled = apply + first invoke with the "
          "serialization cache filled and the driver's own cache empty")
    print("| model | library | filled | filled apply | apply CPU | first invoke | empty | "
          "filled % of empty | from cache |")
    print("|---|---|---|---|---|---|---|---|---|")
    for model, by_lib in rows.items():
        for name, _ in libs:
            cases = by_lib[name]
            filled = cases["filled"]
            total = med(r["total_ms"] for r in filled)
            values = ", ".join(f"{r['total_ms']:.0f}" for r in filled)
            empty = med(r["total_ms"] for r in cases["empty"]) if "empty" in cases else None
            share = f"{100 * total / empty:.1f} %" if empty else "-"
            print(f"| {model} | {name} | {total:.0f} [{values}] | "
                  f"{med(r['apply_ms'] for r in filled):.0f} | "
                  f"{med(r['apply_cpu_ms'] for r in filled):.0f} | "
                  f"{med(r['first_invoke_ms'] for r in filled):.0f} | "
                  f"{f'{empty:.0f}' if empty else '-'} | {share} | {filled[0]['from_cache']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
