#!/usr/bin/env python3
"""Where cold init goes: one fresh process per measurement, with Mesa's
on-disk shader cache empty (cold disk cache) and then filled (warm disk cache),
and with the delegate's own serialization cache (serialization_dir +
model_token) being written and then filled, each with an empty driver cache.

For each case it prints the time of: applying the delegate
(ModifyGraphWithDelegate: partitioning, kernel builds, glCompileShader and
glLinkProgram of every distinct program, buffer allocation and constant
upload), allocate_tensors, the first invoke (on llvmpipe Mesa JIT-compiles
each program to machine code at its first dispatch, unless its disk cache
already holds it) and a second invoke, plus the delegate's program and
dispatch counts.

    python3 bench/cold_init.py [--model NAME_OR_PATH] [--fp16] [--repeats N]
                               [--first-dispatches]

--first-dispatches adds one profiled run with an empty driver cache and
prints each dispatch's time in the first and the second invoke: on llvmpipe
the difference is the LLVM JIT of a program at its first dispatch, so it
shows which programs are compiled (and which are compiled again: llvmpipe
keys its machine code on properties of the bound buffers too, see ViewBytes
in delegate/runtime/runtime.cc).

The warm-cache case reuses a private cache folder filled by the cold run, so
the user's ~/.cache/mesa_shader_cache (Mesa) or ~/.nv/GLCache (NVIDIA) is
neither read nor changed. The serialization-cache cases use a private
temporary serialization_dir: the first fills it (its apply time includes
writing the entries), the second loads every program from it; both start
with a new empty driver cache, so only the delegate's cache differs from the
cold case. Column `from_cache` is how many programs came from it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def measure_in_this_process(model: str, fp16: bool, serialization_dir: str | None,
                            profile: bool = False) -> dict:
    sys.path.insert(0, str(REPO / "tests" / "python"))
    sys.path.insert(0, str(REPO / "tools"))
    import numpy as np
    import gles_testing as gt
    import model_catalog as mc

    spec = mc.CATALOG.get(model)
    path = str(spec.path) if spec else model
    times = {}
    start = time.perf_counter()
    cpu_start = time.process_time()
    options = {"precision_loss_allowed": fp16}
    if profile:
        options["enable_profiling"] = True
    if serialization_dir:
        options.update(serialization_dir=serialization_dir,
                       model_token=Path(path).stem + ("-fp16" if fp16 else "-fp32"))
    delegate = gt.make_delegate(options)
    # Loading the library (dlopen of it and its EGL/GLES dependencies) and
    # creating the delegate: the part of apply before TFLite calls Prepare.
    times["delegate_create_ms"] = (time.perf_counter() - start) * 1e3
    interp = gt.interpreter(path, delegate)
    times["apply_ms"] = (time.perf_counter() - start) * 1e3
    # CPU time of all the process's threads: steadier than wall time on a
    # shared box.
    times["apply_cpu_ms"] = (time.process_time() - cpu_start) * 1e3
    t = time.perf_counter()
    interp.allocate_tensors()
    times["allocate_ms"] = (time.perf_counter() - t) * 1e3
    rng = np.random.default_rng(1)
    inputs = [rng.uniform(-1, 1, d["shape"]).astype(d["dtype"])
              for d in interp.get_input_details()]
    t = time.perf_counter()
    gt.invoke(interp, inputs)
    times["first_invoke_ms"] = (time.perf_counter() - t) * 1e3
    times["cold_total_ms"] = (time.perf_counter() - start) * 1e3
    first = gt.profile(delegate) if profile else []
    t = time.perf_counter()
    gt.invoke(interp, inputs)
    times["second_invoke_ms"] = (time.perf_counter() - t) * 1e3
    if profile:
        second = gt.profile(delegate)
        times["dispatches_first_second_ms"] = [
            [a["shader"], a["label"], a["ms"], b["ms"]] for a, b in zip(first, second)]
    stats = gt.stats(delegate)
    times["programs"] = stats["programs"]
    times["dispatches"] = stats["dispatches"]
    times["nodes"] = f"{stats['nodes_delegated']}/{stats['nodes_total']}"
    cache = gt.program_cache_stats(delegate)
    times["from_cache"] = cache["programs_loaded"] if cache["enabled"] else "-"
    return times


def run_child(args, env_overrides: dict, serialization_dir: str | None = None,
              profile: bool = False) -> dict:
    env = dict(os.environ, **env_overrides)
    command = [sys.executable, __file__, "--child", "--model", args.model]
    if args.fp16:
        command.append("--fp16")
    if profile:
        command.append("--profile")
    if serialization_dir:
        command += ["--serialization-dir", serialization_dir]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"child failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mobilenet_v1_1.0_224")
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serialization-dir", help=argparse.SUPPRESS)
    parser.add_argument("--first-dispatches", action="store_true",
                        help="also print each dispatch's first and second invoke time")
    parser.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure_in_this_process(args.model, args.fp16,
                                                 args.serialization_dir, args.profile)))
        return 0

    def driver_cache(folder: str) -> dict:
        # Mesa's and NVIDIA's on-disk shader caches, both pointed at a
        # private folder.
        return {"MESA_SHADER_CACHE_DIR": folder, "__GL_SHADER_DISK_CACHE_PATH": folder,
                "__GL_SHADER_DISK_CACHE_SKIP_CLEANUP": "1"}

    rows = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="mesa_cache_") as cache:
            # The first run fills the empty folder, the second reuses it.
            rows.append(("cold disk cache", run_child(args, driver_cache(cache))))
            rows.append(("warm disk cache", run_child(args, driver_cache(cache))))
        with tempfile.TemporaryDirectory(prefix="tflite_gles_cache_") as ours:
            for name in ("cold disk cache, writing serialization cache",
                         "cold disk cache, serialization cache filled"):
                with tempfile.TemporaryDirectory(prefix="mesa_cache_") as cache:
                    rows.append((name, run_child(args, driver_cache(cache), ours)))
    keys = ["apply_ms", "allocate_ms", "first_invoke_ms", "cold_total_ms",
            "second_invoke_ms", "programs", "from_cache", "dispatches", "nodes"]
    print(f"model {args.model} ({'fp16' if args.fp16 else 'fp32'}), "
          f"LP_NUM_THREADS={os.environ.get('LP_NUM_THREADS', 'default')}")
    print("| case | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for name, row in rows:
        cells = [f"{row[k]:.0f}" if isinstance(row[k], float) else str(row[k]) for k in keys]
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.first_dispatches:
        with tempfile.TemporaryDirectory(prefix="mesa_cache_") as cache:
            row = run_child(args, driver_cache(cache), profile=True)
        print("\nfirst invoke per dispatch, empty driver cache (profiled: glFinish "
              "around each dispatch where there are no GPU timers)")
        print("| # | shader | node | first ms | second ms | first - second |")
        print("|---|---|---|---|---|---|")
        for i, (shader, label, first, second) in enumerate(row["dispatches_first_second_ms"]):
            print(f"| {i} | {shader} | {label} | {first:.1f} | {second:.2f} | {first - second:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
