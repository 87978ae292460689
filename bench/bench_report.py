"""Renders a run_bench.py report as Markdown, JSON and a PNG chart."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

# Peers every row is compared with (ratio = this row's median / the peer's).
PEERS = [("cpu_1t", "CPU 1t"), ("cpu_all", "CPU all"), ("litert_gpu", "LiteRT GPU"),
         ("gles_fp32", "gles fp32"), ("gles_fp16", "gles fp16")]


def slug(text: str) -> str:
    """'llvmpipe (LLVM 15.0.6, 256 bits)' -> 'llvmpipe'; 'NVIDIA H200/PCIe/SSE2' -> 'nvidia-h200'."""
    head = re.split(r"[(/]", text)[0].strip().lower()
    return re.sub(r"[^a-z0-9]+", "-", head).strip("-") or "unknown"


def _ms(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.3g}" if value < 10 else f"{value:.1f}"


def _delegated(result: dict) -> str:
    stats = result.get("stats")
    if stats:
        return f"{stats['nodes_delegated']}/{stats['nodes_total']} nodes, {stats['partitions']} part."
    if result["key"] == "litert_gpu" and result["ok"]:
        return "fully" if result.get("fully_accelerated") else "partly (CPU fallback)"
    return "CPU" if result["key"].startswith("cpu") else "–"


def model_table(entry: dict) -> list[str]:
    results = entry["results"]
    by_key = {r["key"]: r for r in results if r["ok"]}
    peers = [(k, name) for k, name in PEERS if k in by_key]
    head = ("| backend | on GPU | cold init ms | warm median ms | min | p90 | GPU buffers MB "
            "| rel. err vs CPU | " + " | ".join(f"÷ {name}" for _, name in peers) + " |")
    lines = [head, "|" + "---|" * (8 + len(peers))]
    for r in results:
        if not r["ok"]:
            continue
        ratios = []
        for key, _ in peers:
            ratios.append("1" if key == r["key"] else f"{r['median_ms'] / by_key[key]['median_ms']:.2f}")
        gpu_mb = f"{r['gpu_bytes'] / 1e6:.1f}" if r.get("gpu_bytes") else "–"
        memory = r.get("memory")
        if memory and memory["arena_tensors"]:
            # arena / one buffer per tensor / lifetime lower bound
            gpu_mb += (f" (tensors {memory['arena_bytes'] / 1e6:.1f} of "
                       f"{memory['tensors_sum_bytes'] / 1e6:.1f}, bound "
                       f"{memory['lower_bound_bytes'] / 1e6:.1f})")
        error = r.get("rel_error_vs_cpu")
        error_text = "ref." if r["key"] == "cpu_1t" else ("–" if error is None else f"{error:.1e}")
        lines.append(f"| {r['label']} | {_delegated(r)} | {_ms(r['cold_ms'])} | "
                     f"**{_ms(r['median_ms'])}** | {_ms(r['min_ms'])} | {_ms(r['p90_ms'])} | "
                     f"{gpu_mb} | {error_text} | " + " | ".join(ratios) + " |")
    notes = []
    for r in results:
        if not r["ok"]:
            why = "; ".join(r.get("reasons") or []) or r["error"]
            notes.append(f"- **{r['label']} did not run**: {why}")
        elif r.get("declined"):
            notes.append(f"- {r['label']}: on the CPU (declined by the delegate): "
                         + ", ".join(r["declined"]))
    return lines + ([""] + notes if notes else [])


def summary_table(report: dict) -> str:
    keys = []
    for entry in report["models"]:
        for r in entry["results"]:
            if (r["key"], r["label"]) not in keys:
                keys.append((r["key"], r["label"]))
    lines = ["| model | " + " | ".join(label for _, label in keys) + " |",
             "|---|" + "---|" * len(keys)]
    for entry in report["models"]:
        by_key = {r["key"]: r for r in entry["results"]}
        cells = []
        for key, _ in keys:
            r = by_key.get(key)
            if r is None or not r["ok"]:
                cells.append("did not run")
            else:
                partial = ""
                stats = r.get("stats")
                if stats and stats["nodes_delegated"] < stats["nodes_total"]:
                    partial = f" ({stats['nodes_delegated']}/{stats['nodes_total']} on GPU)"
                cells.append(f"{_ms(r['median_ms'])}{partial}")
        lines.append(f"| {entry['model']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _load_line(report: dict) -> str:
    load = report.get("load_average")
    if not load:
        return "- load average: not recorded"
    return (f"- 1-minute load average at start / end: {load['start']:.2f} / {load['end']:.2f} "
            f"(on {report['machine']['cores']} cores; more than about 1 means other jobs "
            "shared them and the timings are noisy)")


def markdown(report: dict, chart_name: str) -> str:
    m = report["machine"]
    out = [f"# Benchmark: tflite-gles vs LiteRT on {m['renderer']}", "",
           f"- date: {report['date']}",
           f"- machine: {m['cpu']}, {m['cores']} cores, Linux {m['kernel']}",
           f"- GL renderer: {m['renderer']}; {m.get('gl_version', '')}",
           f"- ai-edge-litert {m['ai_edge_litert']}, Python {m['python']}",
           _load_line(report),
           f"- on-disk shader caches: {report['shader_cache']}",
           f"- warm latency: median, min and p90 of up to {report['iterations']} invokes "
           f"after {report['warmup']} untimed ones and at least "
           f"{report.get('warmup_seconds', 0)} s of them; each invoke includes input upload "
           "(set_tensor / TensorBuffer.write) and output readback (get_tensor / read); "
           "every worker runs with fixed glibc malloc thresholds (MALLOC_TRIM_THRESHOLD_ "
           "etc., bench/run_bench.py) so that freeing each invoke's output arrays does "
           "not make the next invoke fault their pages in again",
           "- cold init: a fresh process per row; interpreter + delegate creation "
           "(ModifyGraphWithDelegate, shader compiles) + first invoke",
           "- tflite-gles runs in LiteRT's Interpreter with the default op resolver: "
           "ops it declines run on XNNPACK with all cores",
           "- ÷ peer: this row's warm median divided by the peer's (below 1 = faster than the peer)",
           "- GPU buffers MB: all GL buffers the delegate holds; in brackets the arena its "
           "intermediate tensors share, what one buffer per tensor would take, and the "
           "lifetime lower bound (most tensor bytes live at one dispatch)",
           "- rel. err vs CPU: max over outputs of ||out - cpu|| / ||cpu|| against LiteRT CPU 1 thread",
           "", "## Warm median latency, ms", "", summary_table(report), "",
           f"![warm latency]({chart_name})", ""]
    for entry in report["models"]:
        out += [f"## {entry['model']}", ""] + model_table(entry) + [""]
    return "\n".join(out)


def chart(report: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    models = [e["model"].replace(".tflite", "") for e in report["models"]]
    keys = []
    for entry in report["models"]:
        for r in entry["results"]:
            if (r["key"], r["label"]) not in keys:
                keys.append((r["key"], r["label"]))
    fig, axes = plt.subplots(1, 2, figsize=(14, 0.6 * len(models) * len(keys) / 2 + 2.5),
                             sharey=True)
    height = 0.8 / max(len(keys), 1)
    colors = {"gles_fp32": "tab:blue", "gles_fp16": "tab:cyan", "cpu_1t": "tab:green",
              "cpu_all": "tab:olive", "litert_gpu": "tab:red"}
    for ax, field, title in ((axes[0], "median_ms", "warm median latency (ms, log)"),
                             (axes[1], "cold_ms", "cold init + first invoke (ms, log)")):
        for k, (key, label) in enumerate(keys):
            ys, xs, missing = [], [], []
            for i, entry in enumerate(report["models"]):
                r = next((r for r in entry["results"] if r["key"] == key), None)
                if r and r["ok"]:
                    ys.append(i + k * height)
                    xs.append(r[field])
                elif r:
                    missing.append(i + k * height)
            color = colors.get(key)
            ax.barh(ys, xs, height=height, label=label, color=color)
            for y in missing:  # say so rather than leave a silent gap
                ax.text(0.01, y, f"{label}: did not run", transform=ax.get_yaxis_transform(),
                        va="center", fontsize=7, color=color)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_title(title)
        ax.grid(axis="x", which="both", alpha=0.3)
    axes[0].set_yticks([i + 0.4 - height / 2 for i in range(len(models))])
    axes[0].set_yticklabels(models)
    axes[0].invert_yaxis()
    axes[1].legend(loc="lower right", fontsize=8)
    m = report["machine"]
    fig.suptitle(f"tflite-gles vs LiteRT — {m['renderer']} — {report['date']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_all(report: dict, out_dir: Path, name: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{name}.md", out_dir / f"{name}.json", out_dir / f"{name}.png"]
    paths[1].write_text(json.dumps(report, indent=1) + "\n")
    try:
        chart(report, paths[2])
    except ImportError as error:
        # The GPU machine may lack matplotlib: re-render the JSON elsewhere
        # with run_bench.py --render.
        print(f"no chart: {error}")
        paths.pop()
    paths[0].write_text(markdown(report, Path(paths[1].stem + ".png").name))
    return paths
