#!/usr/bin/env python3
"""Cold start (delegate application + first invoke) with the serialization
cache filled and the driver's own shader cache empty, against the fully cold
start: the figure the documentation promises to cut (issue 17, part 3).

Every measurement is a fresh process whose HOME and XDG_CACHE_HOME are new
empty folders and which has no MESA_SHADER_CACHE_DIR / MESA_GLSL_CACHE_DIR /
__GL_SHADER_DISK_CACHE_PATH: the driver's own cache (Mesa's
~/.cache/mesa_shader_cache, NVIDIA's ~/.nv/GLCache or
$XDG_CACHE_HOME/nvidia/GLCache) is empty and the user's is neither read nor
changed. Cases, interleaved within each repeat:

  empty      no serialization cache: everything compiled (the baseline)
  write      serialization_dir empty: the run that fills it
  filled     serialization_dir filled by `write` (program binaries, model data and
             the driver's cache in its driver_shader_cache/ subfolder)
  binaries   the same entries without driver_shader_cache/ (what the cache
             held before the driver's cache was kept: program binaries only)
  no_data    the filled folder without the model-data entries (.tfgdata):
             what caching the converted weights saves
  warm_home  no serialization cache, the driver's own cache warm (the home
             folder of the `empty` run reused): for comparison

    python3 bench/cold_start.py [--model NAME_OR_PATH ...] [--fp16] [--repeats N]
                                [--json OUT.json]

Prints per model and case the median (and all values) of apply, first
invoke and their sum, and the sum as a percentage of `empty`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES = ["empty", "write", "filled", "binaries", "no_data", "warm_home"]


def child_env(home: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MESA_SHADER_CACHE_DIR", "MESA_GLSL_CACHE_DIR",
                        "__GL_SHADER_DISK_CACHE_PATH", "MESA_SHADER_CACHE_DISABLE",
                        "__GL_SHADER_DISK_CACHE")}
    env.update(HOME=home, XDG_CACHE_HOME=os.path.join(home, ".cache"))
    return env


def run(model: str, fp16: bool, home: str, serialization_dir: str | None) -> dict:
    command = [sys.executable, str(REPO / "bench" / "cold_init.py"), "--child",
               "--model", model]
    if fp16:
        command.append("--fp16")
    if serialization_dir:
        command += ["--serialization-dir", serialization_dir]
    result = subprocess.run(command, env=child_env(home), capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"child failed:\n{result.stderr[-3000:]}")
    row = json.loads(result.stdout.strip().splitlines()[-1])
    row["total_ms"] = row["apply_ms"] + row["allocate_ms"] + row["first_invoke_ms"]
    return row


def copy_without(source: str, target: str, drop) -> None:
    shutil.copytree(source, target, ignore=lambda folder, names: [n for n in names if drop(n)])


def one_repeat(model: str, fp16: bool, work: str, cases: set) -> dict:
    def fresh(name):
        path = os.path.join(work, name)
        os.makedirs(path)
        return path

    rows = {}
    home = fresh("home_empty")
    rows["empty"] = run(model, fp16, home, None)
    if "warm_home" in cases:
        rows["warm_home"] = run(model, fp16, home, None)
    ours = fresh("ours")
    rows["write"] = run(model, fp16, fresh("home_write"), ours)
    binaries = os.path.join(work, "binaries")
    copy_without(ours, binaries, lambda n: n == "driver_shader_cache")
    no_data = os.path.join(work, "no_data")
    copy_without(ours, no_data, lambda n: n.endswith(".tfgdata"))
    for case, folder in (("filled", ours), ("binaries", binaries), ("no_data", no_data)):
        if case in cases:
            rows[case] = run(model, fp16, fresh("home_" + case), folder)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", nargs="+", default=["mobilenet_v1_1.0_224"])
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write every measurement here")
    parser.add_argument("--cases", default=",".join(CASES),
                        help="comma-separated subset of the cases (empty is always run)")
    args = parser.parse_args()
    everything = {}
    for repeat in range(args.repeats):
        # Models interleaved within a repeat, cases within a model: a load
        # change on the box spreads over all of them.
        for model in args.model:
            with tempfile.TemporaryDirectory(prefix="cold_start_") as work:
                rows = one_repeat(model, args.fp16, work, set(args.cases.split(",")))
            for case, row in rows.items():
                everything.setdefault(model, {}).setdefault(case, []).append(row)
            print(f"repeat {repeat + 1}/{args.repeats} {model}: " + ", ".join(
                f"{c} {rows[c]['total_ms']:.0f}" for c in CASES if c in rows), flush=True)
    for model, cases in everything.items():
        first = cases["empty"][0]
        print(f"\nmodel {model} ({'fp16' if args.fp16 else 'fp32'}), {first['programs']} "
              f"programs, {first['dispatches']} dispatches, nodes {first['nodes']}; "
              f"medians of {args.repeats} (all values in brackets), ms")
        print("| case | apply | first invoke | apply + first invoke | % of empty | "
              "programs from our cache |")
        print("|---|---|---|---|---|---|")
        base = statistics.median(r["total_ms"] for r in cases["empty"])
        for case in [c for c in CASES if c in cases]:
            rows = cases[case]
            med = {k: statistics.median(r[k] for r in rows)
                   for k in ("apply_ms", "first_invoke_ms", "total_ms")}
            values = ", ".join(f"{r['total_ms']:.0f}" for r in rows)
            print(f"| {case} | {med['apply_ms']:.0f} | {med['first_invoke_ms']:.0f} | "
                  f"{med['total_ms']:.0f} [{values}] | {100 * med['total_ms'] / base:.0f} % | "
                  f"{rows[0]['from_cache']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
