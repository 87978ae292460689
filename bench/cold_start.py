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
                                [--cases empty,write,filled] [--json OUT.json]
                                [--lib NAME=PATH --lib NAME=PATH ...] [--phases]
                                [--max-seconds S]

Prints per model and case the median (and all values) of apply, first
invoke and their sum, and the sum as a percentage of `empty`'s.

--lib (repeatable) compares builds of the library, or one library under
different developer switches (NAME=PATH,VAR=VALUE,...: the variables are set
in that library's children only): every repeat runs the
cases of every model once per library, the libraries taking turns first, so
a load change on the box spreads over all of them (what bench/cold2_ab.py
did). --phases sets TFLITE_GLES_X_INIT_PHASES=1 in the children and prints,
per library, the median wall time of each phase of the `filled` start
(egl/init_phases.h; a library without the switch prints none). The short
table comes last.
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
import time
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


PHASES_LINE = "INFO: tflite-gles: init phases ms (first invoke): "


def parse_phases(stderr: str) -> dict:
    """The last TFLITE_GLES_X_INIT_PHASES line of a child: phase -> ms."""
    phases = {}
    for line in stderr.splitlines():
        if line.startswith(PHASES_LINE):
            phases = {name: float(value) for name, value in
                      (item.split("=") for item in line[len(PHASES_LINE):].split())}
    return phases


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
    row["phases"] = parse_phases(result.stderr)
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


def print_phases(model: str, by_lib: dict, libs: list) -> None:
    """Median ms of every phase of the filled start, one column per library."""
    columns = [name for name in libs if by_lib[name].get("filled", [{}])[0].get("phases")]
    if not columns:
        return
    names = list(by_lib[columns[0]]["filled"][0]["phases"])
    print(f"\nphases of the filled start, {model}, median ms (egl/init_phases.h: "
          "kernel_builds, runtime_create, allocate are parts of partition; "
          "shader_assembly, program_load/compile/query of runtime_create; "
          "model_data of allocate)")
    print("| phase | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    extra = ["delegate_create_ms", "apply_ms", "allocate_ms", "first_invoke_ms"]
    for name in names + extra:
        cells = []
        for lib in columns:
            rows = by_lib[lib]["filled"]
            values = [r["phases"].get(name, 0.0) if name in names else r[name] for r in rows]
            cells.append(f"{statistics.median(values):.1f}")
        print(f"| {name} | " + " | ".join(cells) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", nargs="+", default=["mobilenet_v1_1.0_224"])
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write every measurement here")
    parser.add_argument("--cases", default=",".join(CASES),
                        help="comma-separated subset of the cases (empty is always run)")
    parser.add_argument("--lib", action="append", default=[],
                        help="NAME=PATH of a library build to compare (repeatable)")
    parser.add_argument("--phases", action="store_true",
                        help="per-phase breakdown of the filled start (TFLITE_GLES_X_INIT_PHASES)")
    parser.add_argument("--max-seconds", type=float, default=0,
                        help="start no new repeat after this long (0: no limit)")
    args = parser.parse_args()
    if args.phases:
        os.environ["TFLITE_GLES_X_INIT_PHASES"] = "1"  # children inherit it
    libs = [tuple(item.split("=", 1)) for item in args.lib]
    if not libs:
        libs = [("lib", os.environ.get("TFLITE_GLES_LIB",
                                       str(REPO / "build" / "libtflite_gles.so")))]
    began = time.monotonic()
    everything: dict = {}  # model -> library -> case -> rows
    for repeat in range(args.repeats):
        if repeat > 0 and args.max_seconds and time.monotonic() - began > args.max_seconds:
            print(f"stopped after {repeat} repeats (--max-seconds)", flush=True)
            break
        # Models interleaved within a repeat, libraries within a model (taking
        # turns first), cases within a library: a load change on the box
        # spreads over all of them.
        for model in args.model:
            for name, path in (libs if repeat % 2 == 0 else libs[::-1]):
                path, *settings = path.split(",")
                saved = dict(os.environ)
                os.environ["TFLITE_GLES_LIB"] = str(Path(path).resolve())
                os.environ.update(item.split("=", 1) for item in settings)
                try:
                    with tempfile.TemporaryDirectory(prefix="cold_start_") as work:
                        rows = one_repeat(model, args.fp16, work, set(args.cases.split(",")))
                finally:
                    os.environ.clear()
                    os.environ.update(saved)
                for case, row in rows.items():
                    everything.setdefault(model, {}).setdefault(name, {}).setdefault(
                        case, []).append(row)
                print(f"repeat {repeat + 1}/{args.repeats} {model} {name}: " + ", ".join(
                    f"{c} {rows[c]['total_ms']:.0f}" for c in CASES if c in rows), flush=True)
    med = statistics.median
    short = []
    for model, by_lib in everything.items():
        for name, _ in libs:
            cases = by_lib[name]
            first = cases["empty"][0]
            print(f"\nmodel {model} ({'fp16' if args.fp16 else 'fp32'}), library {name}, "
                  f"{first['programs']} programs, {first['dispatches']} dispatches, nodes "
                  f"{first['nodes']}; medians of {len(cases['empty'])} (all values in "
                  "brackets), ms")
            print("| case | apply | apply CPU | first invoke | apply + first invoke | "
                  "% of empty | programs from our cache |")
            print("|---|---|---|---|---|---|---|")
            base = med(r["total_ms"] for r in cases["empty"])
            for case in [c for c in CASES if c in cases]:
                rows = cases[case]
                m = {k: med(r[k] for r in rows)
                     for k in ("apply_ms", "apply_cpu_ms", "first_invoke_ms", "total_ms")}
                values = ", ".join(f"{r['total_ms']:.0f}" for r in rows)
                print(f"| {case} | {m['apply_ms']:.0f} | {m['apply_cpu_ms']:.0f} | "
                      f"{m['first_invoke_ms']:.0f} | {m['total_ms']:.0f} [{values}] | "
                      f"{100 * m['total_ms'] / base:.1f} % | {rows[0]['from_cache']} |")
            if "filled" in cases:
                filled = med(r["total_ms"] for r in cases["filled"])
                short.append((model, name, filled, base, len(cases["filled"])))
        print_phases(model, by_lib, [name for name, _ in libs])
    print(f"\nshort table ({'fp16' if args.fp16 else 'fp32'}): filled = apply + first "
          "invoke with the serialization cache filled and the driver's own cache empty, "
          "median ms")
    print("| model | library | filled | empty | filled % of empty | runs |")
    print("|---|---|---|---|---|---|")
    for model, name, filled, base, runs in short:
        print(f"| {model} | {name} | {filled:.0f} | {base:.0f} | "
              f"{100 * filled / base:.1f} % | {runs} |")
    if args.json:
        Path(args.json).write_text(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
