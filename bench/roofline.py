#!/usr/bin/env python3
"""How close each large layer comes to the GPU's limits (issue 18).

Profiles a model through tflite-gles (bench/profile.py's collect: GPU timer
queries on NVIDIA, glFinish wall time on llvmpipe), fp32 and fp16, and for
every dispatch that runs a CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV or
FULLY_CONNECTED node computes, independently of the delegate's own counters:

  flops    2 x multiply-adds of the node, from the model's tensor shapes
           (the delegate's counter pads channels to 4; this one does not)
  bytes    the least the layer must move: its input, weights and output
           once, at 4 bytes (fp32) or 2 bytes (fp16) per element
  limit    max(flops / FMA peak, bytes / bandwidth): the time no kernel
           can beat on that GPU
  reached  limit / measured time, and flops / time as a fraction of the
           FMA peak

The dispatch labels carry the node index ("CONV_2D v1 @12"), which is how a
row is matched to its node. Peaks come from --peak-tflops/--bandwidth-gbs or
from the table below, picked by GL_RENDERER.

    python3 bench/roofline.py --model ../shared/models/deeplabv3_257_mv_gpu.tflite
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile import collect  # noqa: E402

# Public dense (non-tensor-core) figures, boost clock. fp16 on the FMA units
# is twice fp32 on these parts (packed half2). NVIDIA's GL_RENDERER says
# "/PCIe/" on every part, so the part is told by its name: "H100 80GB HBM3"
# is the SXM5 board, "H100 PCIe" and "H200 NVL" the PCIe ones. Sources:
# NVIDIA's H100 and H200 datasheets (H100 SXM5 67 TF fp32, 3.35 TB/s; H100
# PCIe 51 TF, 2.0 TB/s; H200 SXM 67 TF, 4.8 TB/s; H200 NVL 60 TF, 4.8 TB/s).
# llvmpipe on this box: 2 cores x 2 AVX2 FMA x 8 lanes x 2 flops x ~2.5 GHz
# = 160 GFLOP/s; bandwidth of one DDR channel ~20 GB/s.
PEAKS = [  # (renderer pattern, fp32 TFLOP/s, fp16 TFLOP/s, GB/s, source)
    (r"H200 NVL", 60.0, 120.0, 4800.0, "NVIDIA H200 NVL datasheet"),
    (r"H200", 67.0, 134.0, 4800.0, "NVIDIA H200 SXM datasheet"),
    (r"H100 PCIe", 51.2, 102.4, 2000.0, "NVIDIA H100 PCIe datasheet"),
    (r"H100", 67.0, 134.0, 3350.0, "NVIDIA H100 SXM5 datasheet"),
    (r"llvmpipe", 0.16, 0.16, 20.0, "2 cores x 2 AVX2 FMA x 8 lanes x 2.5 GHz"),
]
CONV_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "FULLY_CONNECTED"}


def node_costs(model: str) -> dict[int, dict]:
    """FLOPs and least bytes (in elements) of every conv-like node."""
    from ai_edge_litert.interpreter import Interpreter

    interp = Interpreter(model_path=model)
    interp.allocate_tensors()
    shapes = {t["index"]: tuple(int(d) for d in t["shape"]) for t in interp.get_tensor_details()}
    costs = {}
    for op in interp._get_ops_details():  # pylint: disable=protected-access
        name = op["op_name"]
        if name not in CONV_OPS:
            continue
        ins = [i for i in op["inputs"] if i >= 0]
        out = shapes[op["outputs"][0]]
        if name == "TRANSPOSE_CONV":  # inputs: output shape, weights, data[, bias]
            weights, data = shapes[ins[1]], shapes[ins[2]]
            macs = int(np.prod(data)) * weights[0] * weights[1] * weights[2]
            operands = [data, weights, out]
        else:
            data, weights = shapes[ins[0]], shapes[ins[1]]
            if name == "CONV_2D":  # weights OHWI
                macs = int(np.prod(out)) * weights[1] * weights[2] * weights[3]
            elif name == "DEPTHWISE_CONV_2D":  # weights 1HWC
                macs = int(np.prod(out)) * weights[1] * weights[2]
            else:  # FULLY_CONNECTED: weights [units, depth]
                macs = int(np.prod(out)) * weights[1]
            operands = [data, weights, out]
        costs[op["index"]] = {"op": name, "flops": 2 * macs,
                              "elements": sum(int(np.prod(s)) for s in operands),
                              "shape": "x".join(map(str, out))}
    return costs


def peaks_for(renderer: str, args) -> tuple[float, float, float, str]:
    if args.peak_tflops:
        return args.peak_tflops, 2 * args.peak_tflops, args.bandwidth_gbs, "given"
    for pattern, fp32, fp16, gbs, source in PEAKS:
        if re.search(pattern, renderer):
            return fp32, fp16, gbs, source
    raise SystemExit(f"no peak known for {renderer!r}: pass --peak-tflops and --bandwidth-gbs")


def analyse(model: str, fp16: bool, iterations: int, args) -> dict:
    rows, stats, wall = collect(model, fp16, iterations, 1)
    fp32_peak, fp16_peak, gbs, source = peaks_for(stats["renderer"], args)
    peak = (fp16_peak if fp16 else fp32_peak) * 1e12
    costs = node_costs(model)
    layers = []
    for row in rows:
        nodes = [int(n) for n in re.findall(r"@(\d+)", row["label"])]
        conv = [n for n in nodes if n in costs]
        if not conv or row["ms"] <= 0:
            continue
        flops = sum(costs[n]["flops"] for n in conv)
        bytes_ = sum(costs[n]["elements"] for n in conv) * (2 if fp16 else 4)
        seconds = row["ms"] / 1e3
        limit = max(flops / peak, bytes_ / (gbs * 1e9))
        layers.append({"label": row["label"], "shape": costs[conv[0]]["shape"],
                       "ms": row["ms"], "flops": flops, "bytes": bytes_,
                       "tflops": flops / seconds / 1e12,
                       "peak_fraction": flops / seconds / peak,
                       "bound": "compute" if flops / peak >= bytes_ / (gbs * 1e9) else "memory",
                       "limit_fraction": limit / seconds})
    total = sum(r["ms"] for r in rows)
    return {"model": Path(model).stem, "fp16": fp16, "renderer": stats["renderer"],
            "peak_tflops": peak / 1e12, "bandwidth_gbs": gbs, "peak_source": source,
            "dispatch_ms": total, "wall_ms": wall, "dispatches": len(rows),
            "conv_ms": sum(layer["ms"] for layer in layers), "layers": layers}


def print_report(result: dict, top: int) -> None:
    precision = "fp16" if result["fp16"] else "fp32"
    print(f"\n## {result['model']} {precision} on {result['renderer']} "
          f"(peak {result['peak_tflops']:.2f} TFLOP/s, {result['bandwidth_gbs']:.0f} GB/s: "
          f"{result['peak_source']})")
    print(f"invoke {result['wall_ms']:.3f} ms wall, dispatches {result['dispatch_ms']:.3f} ms "
          f"({result['dispatches']}), conv-like {result['conv_ms']:.3f} ms")
    print("| layer | output | ms | GFLOP | MB | TFLOP/s | % FMA peak | bound | % of limit |")
    print("|---|---|---|---|---|---|---|---|---|")
    for layer in sorted(result["layers"], key=lambda r: -r["flops"])[:top]:
        print(f"| {layer['label'][:48]} | {layer['shape']} | {layer['ms']:.3f} | "
              f"{layer['flops'] / 1e9:.3f} | {layer['bytes'] / 1e6:.2f} | {layer['tflops']:.3f} | "
              f"{100 * layer['peak_fraction']:.1f} | {layer['bound']} | "
              f"{100 * layer['limit_fraction']:.1f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", required=True)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--top", type=int, default=5, help="largest layers shown per model")
    parser.add_argument("--peak-tflops", type=float, help="fp32 FMA peak (fp16: twice)")
    parser.add_argument("--bandwidth-gbs", type=float, default=0.0)
    parser.add_argument("--json", help="write every row here")
    args = parser.parse_args()
    results = []
    for model in args.model:
        for fp16 in (False, True):
            result = analyse(model, fp16, args.iterations, args)
            print_report(result, args.top)
            results.append(result)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
