#!/usr/bin/env python3
"""The main job: run a .tflite model through tflite-gles on the default EGL
device and compare it with LiteRT's CPU result.

Prints the GL renderer, how many nodes were delegated in how many partitions,
cold init, warm latency, the CPU latency and the max error against the CPU.
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

import gles_testing as gt  # noqa: E402
from tflite_builder import ModelBuilder  # noqa: E402


def default_model() -> bytes:
    """A small embedded model: an elementwise chain over a 224x224x8 tensor."""
    b = ModelBuilder()
    x = b.add_input([1, 224, 224, 8])
    y = b.add_input([1, 224, 224, 8])
    t = b.add_tensor([1, 224, 224, 8])
    u = b.add_tensor([1, 224, 224, 8])
    o = b.add_tensor([1, 224, 224, 8])
    b.add_op("MUL", [x, y], [t], {"fused_activation_function": "NONE"})
    b.add_op("ADD", [t, x], [u], {"fused_activation_function": "RELU6"})
    b.add_op("LOGISTIC", [u], [o])
    return b.build()


def model_inputs(interp, seed: int):
    rng = np.random.default_rng(seed)
    inputs = []
    for detail in interp.get_input_details():
        if np.issubdtype(detail["dtype"], np.floating):
            inputs.append(rng.uniform(-1, 1, detail["shape"]).astype(detail["dtype"]))
        else:
            info = np.iinfo(detail["dtype"])
            inputs.append(rng.integers(info.min, info.max, detail["shape"]).astype(detail["dtype"]))
    return inputs


def timed_invokes(interp, inputs, iterations: int, label: str) -> list[float]:
    times = []
    for i in range(iterations):
        start = time.perf_counter()
        for detail, value in zip(interp.get_input_details(), inputs):
            interp.set_tensor(detail["index"], value)
        interp.invoke()
        for detail in interp.get_output_details():
            interp.get_tensor(detail["index"])
        times.append((time.perf_counter() - start) * 1e3)
        if iterations >= 20 and (i + 1) % max(1, iterations // 5) == 0:
            print(f"  {label}: {i + 1}/{iterations} invokes", file=sys.stderr)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help=".tflite file (default: an embedded model)")
    parser.add_argument("--fp16", action="store_true", help="allow fp16 (precision loss)")
    parser.add_argument("--iterations", type=int, default=20, help="warm invokes to time")
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU comparison")
    parser.add_argument("--egl-platform", default="auto",
                        choices=["auto", "device", "surfaceless", "default"])
    args = parser.parse_args()

    model = args.model or default_model()
    name = args.model or "embedded elementwise model"
    options = {"precision_loss_allowed": args.fp16, "egl_platform": args.egl_platform}

    start = time.perf_counter()
    delegate = gt.make_delegate(options)
    interp = gt.interpreter(model, delegate)
    interp.allocate_tensors()
    inputs = model_inputs(interp, seed=1)
    gpu = gt.invoke(interp, inputs)
    cold_ms = (time.perf_counter() - start) * 1e3
    stats = gt.stats(delegate)
    warm = timed_invokes(interp, inputs, args.iterations, "GPU")

    print(f"model:        {name}")
    print(f"GL renderer:  {stats['renderer']}")
    print(f"GL version:   {stats['gl_version']}  ({stats['egl_display']})")
    print(f"delegated:    {stats['nodes_delegated']} of {stats['nodes_total']} nodes "
          f"in {stats['partitions']} partition(s), {stats['dispatches']} dispatches, "
          f"{stats['programs']} programs")
    print(f"precision:    {'fp16' if args.fp16 else 'fp32'}")
    print(f"cold init:    {cold_ms:.1f} ms (ModifyGraphWithDelegate + first invoke)")
    print(f"GPU latency:  {statistics.median(warm):.3f} ms median of {len(warm)} "
          f"(min {min(warm):.3f}, max {max(warm):.3f})")
    if not args.no_cpu:
        cpu_interp = gt.interpreter(model)
        cpu = gt.invoke(cpu_interp, inputs)
        cpu_times = timed_invokes(cpu_interp, inputs, args.iterations, "CPU")
        print(f"CPU latency:  {statistics.median(cpu_times):.3f} ms median "
              f"(LiteRT builtin kernels, 1 thread)")
        for i, (g, c) in enumerate(zip(gpu, cpu)):
            err = float(np.max(np.abs(g.astype(np.float64) - c.astype(np.float64))))
            print(f"max error:    output {i}: {err:.3g} (relative L2 "
                  f"{gt.relative_error(g, c):.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
