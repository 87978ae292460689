#!/usr/bin/env python3
"""Benchmarks tflite-gles side by side with LiteRT, in one run.

For every model: tflite-gles fp32 and fp16, LiteRT CPU (XNNPACK, the default
op resolver) with 1 thread and with all cores, and LiteRT's own GPU
accelerator (CompiledModel, WebGPU over Vulkan). Each (model, backend) runs in
a fresh process (bench/bench_worker.py): cold init = interpreter/delegate
creation (ModifyGraphWithDelegate) + first invoke, then warm latency over N
invokes, input upload and output readback included. Writes a Markdown table,
JSON and a PNG chart into docs/perf/.

    python3 bench/run_bench.py --model ../shared/models/deeplabv3_257_mv_gpu.tflite
    python3 bench/run_bench.py --all          # every shared model + MobileNet v1 1.0
    python3 bench/run_bench.py --standin mobilenet_ssd_v2_300   # a stand-in only
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import bench_report  # noqa: E402
from bench_worker import RESULT_PREFIX  # noqa: E402

SHARED_MODELS = REPO.parent / "shared" / "models"
LIB = Path(os.environ.get("TFLITE_GLES_LIB", REPO / "build" / "libtflite_gles.so"))


def backends(all_threads: int) -> list[dict]:
    """The columns of the comparison, in table order."""
    return [
        {"key": "gles_fp32", "backend": "gles_fp32", "threads": all_threads,
         "label": "tflite-gles fp32"},
        {"key": "gles_fp16", "backend": "gles_fp16", "threads": all_threads,
         "label": "tflite-gles fp16"},
        {"key": "cpu_1t", "backend": "cpu", "threads": 1,
         "label": "LiteRT CPU XNNPACK 1 thread"},
        {"key": "cpu_all", "backend": "cpu", "threads": all_threads,
         "label": f"LiteRT CPU XNNPACK {all_threads} threads"},
        {"key": "litert_gpu", "backend": "litert_gpu", "threads": 1,
         "label": "LiteRT GPU (WebGPU/Vulkan)"},
    ]


def standins(names: list[str], folder: Path) -> list[Path]:
    """Architecture-exact stand-ins (seeded weights) from tools/build_standins.py."""
    sys.path.insert(0, str(REPO / "tools"))
    import build_standins
    return list(build_standins.build(folder, names).values())


def shader_cache_state(disabled: bool) -> str:
    """Which on-disk shader caches the workers may find, in words."""
    if disabled:
        return ("disabled for this run (MESA_SHADER_CACHE_DISABLE=true, "
                "__GL_SHADER_DISK_CACHE=0): cold init includes every shader compile")
    home = Path.home()
    mesa = Path(os.environ.get("MESA_SHADER_CACHE_DIR",
                               Path(os.environ.get("XDG_CACHE_HOME", home / ".cache"))
                               / "mesa_shader_cache"))
    nvidia = Path(os.environ.get("__GL_SHADER_DISK_CACHE_PATH", home / ".nv" / "GLCache"))
    parts = []
    for name, path in (("Mesa", mesa), ("NVIDIA", nvidia)):
        if path.exists():
            files = [p for p in path.rglob("*") if p.is_file()]
            size = sum(p.stat().st_size for p in files)
            parts.append(f"{name} cache {path} present ({len(files)} files, "
                         f"{size / 1e6:.1f} MB) before the run")
    if not parts:
        parts.append("no Mesa or NVIDIA on-disk shader cache present before the run")
    return ("enabled (driver defaults); " + "; ".join(parts) +
            ". tflite-gles runs without its serialization cache (serialization_dir "
            "unset; bench/cold_init.py measures it); LiteRT GPU runs with default options")


def reasons_from_stderr(stderr: str, limit: int = 4) -> list[str]:
    """The error/warning lines a runtime logged, deduplicated and short."""
    found = []
    for line in stderr.splitlines():
        line = line.strip()
        if (not line or line.startswith("INFO") or "tflite-gles:" in line
                or "before InitGoogle" in line or "XDG_RUNTIME_DIR" in line
                # LiteRT's optional NPU/vendor plugins, absent everywhere here
                or "npu_registry" in line or "compiler_plugin" in line):
            continue
        if re.search(r"error|warning|failed|not supported|no adapters", line, re.I):
            line = re.sub(r"^[EWI]\d{4} [\d:.]+\s+\d+\s+", "", line)[:200]
            if line not in found:
                found.append(line)
    found = found[-limit:]
    if any("not supported by GPU delegate" in line for line in found):
        found.insert(0, "LiteRT's GPU accelerator, asked to run the whole model (no CPU "
                        "fallback, so that the row measures the GPU alone), refuses "
                        "models with an op it lacks:")
    if any("No adapters found" in line for line in found):
        found.insert(0, "Dawn (WebGPU) found no Vulkan adapter it accepts, so LiteRT's GPU "
                        "accelerator cannot start (on Mesa lavapipe: Dawn requires "
                        "shaderUniform*ArrayDynamicIndexing, which lavapipe does not offer). "
                        "Its log says:")
    return found


def declined_ops(stderr: str) -> list[str]:
    """"OP (N nodes)" for every op tflite-gles left on the CPU."""
    pattern = r"WARNING: tflite-gles: (.+?) cannot be handled by this delegate \((\d+) node"
    return [f"{op} x{count}" for op, count in re.findall(pattern, stderr)]


def run_worker(model: Path, spec: dict, args, work: Path) -> dict:
    outputs = work / f"{model.stem}.{spec['key']}.npz"
    command = [sys.executable, str(REPO / "bench" / "bench_worker.py"),
               "--backend", spec["backend"], "--model", str(model),
               "--threads", str(spec["threads"]), "--iterations", str(args.iterations),
               "--warmup", str(args.warmup), "--warmup-seconds", str(args.warmup_seconds),
               "--max-seconds", str(args.max_seconds),
               "--outputs", str(outputs)]
    env = dict(os.environ, TFLITE_GLES_LIB=str(LIB))
    # Fixed glibc malloc thresholds in every worker, whatever the backend:
    # with the dynamic ones, freeing each invoke's output arrays (get_tensor
    # copies) handed their pages back to the kernel and the next invoke
    # faulted them in again; for deeplabv3's 5.5 MB output that added
    # ~2.6 ms per invoke to the Interpreter rows on the H200 (4.62 vs 1.98 ms)
    # and nothing to LiteRT GPU's (3.12 vs 3.15 ms). It measured Python's
    # heap, not the runtimes.
    for name, value in (("MALLOC_TRIM_THRESHOLD_", "4000000000"),
                        ("MALLOC_MMAP_THRESHOLD_", "33554432"),
                        ("MALLOC_TOP_PAD_", "100000000")):
        env.setdefault(name, value)
    if args.no_disk_cache:
        env.update(MESA_SHADER_CACHE_DISABLE="true", __GL_SHADER_DISK_CACHE="0")
    # --processes K: K fresh worker processes, their warm invokes pooled. On
    # the H200 one process's median varied by up to 30 % from the next
    # (e.g. 0.29 vs 0.39 ms for MobileNet fp16) for every variant alike,
    # with nothing else changed; the cold-init figures are the first
    # process's.
    result, stderr, times, process_medians = None, "", [], []
    for _ in range(max(1, args.processes)):
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=env,
                                  timeout=args.timeout)
            stdout, stderr = done.stdout, done.stderr
        except subprocess.TimeoutExpired as expired:
            stdout = expired.stdout.decode() if isinstance(expired.stdout, bytes) else ""
            stderr = expired.stderr.decode() if isinstance(expired.stderr, bytes) else ""
            stderr += f"\nerror: timed out after {args.timeout} s"
        this = {"backend": spec["backend"], "threads": spec["threads"]}
        for line in stdout.splitlines():
            if line.startswith(RESULT_PREFIX):
                this = json.loads(line[len(RESULT_PREFIX):])
        if "times_ms" not in this:
            result = this
            break
        process_times = this.pop("times_ms")
        times += process_times
        process_medians.append(float(np.median(process_times)))
        if result is None:
            result = this
    result.update(key=spec["key"], label=spec["label"])
    if not times or "error" in result:
        result["ok"] = False
        result["error"] = result.get("error", "the worker printed no result")
        result["reasons"] = reasons_from_stderr(stderr)
        return result
    result["ok"] = True
    times = np.array(times)
    result.update(n=len(times), median_ms=float(np.median(times)),
                  min_ms=float(times.min()), p90_ms=float(np.percentile(times, 90)),
                  mean_ms=float(times.mean()), process_medians_ms=process_medians)
    if spec["backend"].startswith("gles"):
        result["declined"] = declined_ops(stderr)
    result["outputs_file"] = str(outputs)
    return result


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("nan")
    norm = np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / (norm if norm > 0 else 1.0))


def cpu_reference(model: Path, results: list[dict], args, work: Path) -> str | None:
    """LiteRT CPU's outputs for this model: its own cpu_1t run, or, for a
    stand-in with custom ops LiteRT's CPU lacks, those of its builtin twin
    that computes the same function (tools/build_standins.CPU_REFERENCES)."""
    own = next((r for r in results if r["key"] == "cpu_1t" and r["ok"]), None)
    if own is not None:
        return own["outputs_file"]
    sys.path.insert(0, str(REPO / "tools"))
    import build_standins
    twin = build_standins.CPU_REFERENCES.get(model.stem)
    if twin is None:
        return None
    path = build_standins.build(model.parent, [twin])[twin]
    spec = {"key": "cpu_reference", "backend": "cpu", "threads": args.threads,
            "label": f"reference: {twin} on LiteRT CPU"}
    quick = argparse.Namespace(**{**vars(args), "iterations": 1, "warmup": 0,
                                 "warmup_seconds": 0.0, "processes": 1})
    result = run_worker(path, spec, quick, work)
    print(f"   {spec['label']:32s} {'ok' if result['ok'] else 'FAILED'}",
          file=sys.stderr, flush=True)
    return result.get("outputs_file") if result["ok"] else None


def compare_outputs(results: list[dict], reference_file: str | None) -> None:
    """Max relative L2 error of every backend's outputs against LiteRT CPU 1 thread."""
    if reference_file is None:
        for result in results:
            result.pop("outputs_file", None)
        return
    with np.load(reference_file) as ref:
        ref_outputs = [ref[k] for k in ref.files]
    for result in results:
        if result["ok"]:
            with np.load(result["outputs_file"]) as mine:
                errors = [relative_error(mine[k], r) for k, r in zip(mine.files, ref_outputs)]
            result["rel_error_vs_cpu"] = max(errors) if errors else float("nan")
        result.pop("outputs_file", None)


def machine_description() -> dict:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        from importlib.metadata import version
        litert = version("ai-edge-litert")
    except Exception:  # noqa: BLE001
        litert = "unknown"
    return {"cpu": cpu, "cores": os.cpu_count(), "python": sys.version.split()[0],
            "ai_edge_litert": litert, "hostname_kind": os.uname().machine,
            "kernel": os.uname().release}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", default=[], help=".tflite (repeatable)")
    parser.add_argument("--all", action="store_true",
                        help="every model in ../shared/models plus the --standin ones")
    parser.add_argument("--models-dir", default=str(SHARED_MODELS),
                        help="where --all finds the shared models")
    parser.add_argument("--standin", action="append", default=None,
                        help="stand-in of tools/build_standins.py (repeatable; with --all "
                             "default mobilenet_v1_1.0_224 and the hair segmentation pair)")
    parser.add_argument("--backends", default="gles_fp32,gles_fp16,cpu_1t,cpu_all,litert_gpu")
    parser.add_argument("--iterations", type=int, default=30, help="warm invokes timed")
    parser.add_argument("--warmup", type=int, default=3, help="untimed invokes before them")
    parser.add_argument("--warmup-seconds", type=float, default=0.5,
                        help="and keep warming up for at least this long (GPU clocks ramp up)")
    parser.add_argument("--processes", type=int, default=1,
                        help="fresh worker processes per backend, warm invokes pooled")
    parser.add_argument("--max-seconds", type=float, default=15.0,
                        help="stop timing a backend after this long (at least 5 invokes)")
    parser.add_argument("--timeout", type=float, default=600.0, help="per worker process")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="'all cores' thread count")
    parser.add_argument("--no-disk-cache", action="store_true",
                        help="disable the drivers' on-disk shader caches (fully cold init)")
    parser.add_argument("--out-dir", default=str(REPO / "docs" / "perf"))
    parser.add_argument("--name", help="output file stem (default: bench-<renderer>)")
    parser.add_argument("--render", metavar="JSON",
                        help="only re-render an earlier run's JSON (e.g. one made on "
                             "the GPU machine) as Markdown + PNG into --out-dir")
    args = parser.parse_args()

    if args.render:
        report = json.loads(Path(args.render).read_text())
        for path in bench_report.write_all(report, Path(args.out_dir),
                                           args.name or Path(args.render).stem):
            print(f"wrote {path}")
        return 0
    if not LIB.exists():
        parser.error(f"{LIB} is missing: build first (bash tools/build.sh)")
    models = [Path(m) for m in args.model]
    if args.all:
        models += sorted(Path(args.models_dir).glob("*.tflite"))
        if args.standin is None:
            args.standin = ["mobilenet_v1_1.0_224", "hair_segmentation_512",
                            "hair_segmentation_512_builtin"]
    if args.standin:
        models += standins(args.standin, REPO / "build" / "models")
    if not models:
        parser.error("give --model PATH or --all")
    wanted = args.backends.split(",")
    specs = [s for s in backends(args.threads) if s["key"] in wanted]
    cache_note = shader_cache_state(args.no_disk_cache)
    load_at_start = os.getloadavg()[0]  # other jobs on the box: the noise

    report = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "machine": machine_description(), "shader_cache": cache_note,
              "iterations": args.iterations, "warmup": args.warmup,
              "warmup_seconds": args.warmup_seconds, "models": []}
    with tempfile.TemporaryDirectory(prefix="tflite_gles_bench_") as tmp:
        for model in models:
            print(f"== {model.name}", file=sys.stderr, flush=True)
            results = []
            for spec in specs:
                result = run_worker(model, spec, args, Path(tmp))
                status = (f"{result['median_ms']:.2f} ms" if result["ok"]
                          else f"FAILED: {result['error'][:80]}")
                print(f"   {spec['label']:32s} {status}", file=sys.stderr, flush=True)
                results.append(result)
            compare_outputs(results, cpu_reference(model, results, args, Path(tmp)))
            try:
                shown = os.path.relpath(model, REPO)
            except ValueError:
                shown = str(model)
            report["models"].append({"model": model.name, "path": shown,
                                     "results": results})
    renderer = next((r["stats"]["renderer"] for m in report["models"] for r in m["results"]
                     if r.get("stats")), "unknown renderer")
    gl_version = next((r["stats"]["gl_version"] for m in report["models"]
                       for r in m["results"] if r.get("stats")), "")
    report["machine"].update(renderer=renderer, gl_version=gl_version)
    report["load_average"] = {"start": load_at_start, "end": os.getloadavg()[0]}
    name = args.name or "bench-" + bench_report.slug(renderer)
    written = bench_report.write_all(report, Path(args.out_dir), name)
    print(bench_report.summary_table(report))
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
