#!/usr/bin/env python3
"""Measures one backend on one model in this (fresh) process and prints one
JSON line: cold init, warm latencies, delegate stats. run_bench.py starts one
of these per (model, backend), so nothing is cached in memory between them;
only on-disk caches (Mesa's or NVIDIA's shader cache) survive, and run_bench.py
says which were present.

Backends:
  gles_fp32, gles_fp16  tflite-gles through load_delegate, in LiteRT's
                        Interpreter (ops it declines run on LiteRT's default
                        CPU kernels, XNNPACK, with --threads threads)
  cpu                   LiteRT's Interpreter with its default op resolver
                        (XNNPACK), --threads threads
  litert_gpu            LiteRT's CompiledModel with the GPU accelerator
                        (WebGPU through Dawn over Vulkan), default options
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

RESULT_PREFIX = "BENCH_RESULT "


def make_inputs(details, seed: int):
    """Fixed-seed inputs: floats uniform in [-1, 1] (no exact zeros), integers
    over their type's range."""
    rng = np.random.default_rng(seed)
    arrays = []
    for shape, dtype in details:
        dtype = np.dtype(dtype)
        if np.issubdtype(dtype, np.floating):
            a = rng.uniform(-1, 1, shape).astype(dtype)
            a[np.abs(a) < 1e-3] = 1e-3
        else:
            info = np.iinfo(dtype)
            a = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
        arrays.append(a)
    return arrays


def timed_loop(step, iterations: int, warmup: int, max_seconds: float,
               warmup_seconds: float = 0.0):
    """Runs step() untimed `warmup` times and for at least `warmup_seconds`,
    then times up to `iterations` runs (at least 5) within about
    `max_seconds`. The time-based warm-up is there for GPUs that idle at a
    low clock (the H100 at 345 MHz): three invokes of 2 ms do not bring it
    up, and whichever backend ran first after a pause paid for the ramp."""
    warm_until = time.perf_counter() + warmup_seconds
    done = 0
    while done < warmup or time.perf_counter() < warm_until:
        step()
        done += 1
    times = []
    deadline = time.perf_counter() + max_seconds
    while len(times) < iterations and (len(times) < 5 or time.perf_counter() < deadline):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def time_invokes(step, start: float, init_done: float, args, result) -> list:
    """Runs the first invoke (cold init ends there) and the timed loop; fills
    result's init/first-invoke/cold times and times_ms. Returns the first
    invoke's outputs."""
    outputs = step()
    first_done = time.perf_counter()
    result["init_ms"] = (init_done - start) * 1e3
    result["first_invoke_ms"] = (first_done - init_done) * 1e3
    result["cold_ms"] = (first_done - start) * 1e3
    result["times_ms"] = timed_loop(step, args.iterations, args.warmup, args.max_seconds,
                                    args.warmup_seconds)
    return outputs


def run_interpreter(args, result):
    from ai_edge_litert.interpreter import Interpreter

    import gles_testing as gt

    delegate = None
    start = time.perf_counter()
    if args.backend.startswith("gles"):
        options = {"precision_loss_allowed": args.backend == "gles_fp16"}
        if args.profile:
            options["enable_profiling"] = "true"
        delegate = gt.make_delegate(options)
    # The Interpreter constructor runs ModifyGraphWithDelegate.
    interp = Interpreter(model_path=args.model, num_threads=args.threads,
                         experimental_delegates=[delegate] if delegate else None)
    interp.allocate_tensors()
    init_done = time.perf_counter()
    input_details = interp.get_input_details()
    output_details = interp.get_output_details()
    inputs = make_inputs([(d["shape"], d["dtype"]) for d in input_details], args.seed)

    def step():
        for detail, value in zip(input_details, inputs):
            interp.set_tensor(detail["index"], value)
        interp.invoke()
        # get_tensor already returns a new array that owns a copy of the data
        # (checked: np.shares_memory with a second get_tensor is False), the
        # one copy LiteRT GPU's buffer.read() also makes; a .copy() on top of
        # it timed a second 5.5 MB memcpy on DeepLab for the Interpreter rows only.
        return [interp.get_tensor(d["index"]) for d in output_details]

    outputs = time_invokes(step, start, init_done, args, result)
    if delegate is not None:
        stats = gt.stats(delegate)
        result["stats"] = stats
        result["gpu_bytes"] = stats["gpu_bytes"]
        result["memory"] = gt.memory_stats(delegate)
        if args.profile:
            result["profile"] = gt.profile(delegate)
    return outputs


def run_compiled_model(args, result):
    from ai_edge_litert.compiled_model import CompiledModel
    from ai_edge_litert.hardware_accelerator import HardwareAccelerator

    start = time.perf_counter()
    model = CompiledModel.from_file(args.model, hardware_accel=HardwareAccelerator.GPU)
    result["fully_accelerated"] = model.is_fully_accelerated()
    input_buffers = model.create_input_buffers(0)
    output_buffers = model.create_output_buffers(0)
    init_done = time.perf_counter()
    signature = model.get_signature_list()
    key = next(iter(signature))
    in_details = model.get_input_tensor_details(key)
    out_details = model.get_output_tensor_details(key)
    in_specs = [(in_details[name]["shape"], in_details[name]["dtype"])
                for name in signature[key]["inputs"]]
    out_specs = [(out_details[name]["shape"], out_details[name]["dtype"])
                 for name in signature[key]["outputs"]]
    inputs = make_inputs(in_specs, args.seed)

    def step():
        for buffer, value in zip(input_buffers, inputs):
            buffer.write(value)
        model.run_by_index(0, input_buffers, output_buffers)
        return [buffer.read(int(np.prod(shape)), dtype).reshape(shape)
                for buffer, (shape, dtype) in zip(output_buffers, out_specs)]

    outputs = time_invokes(step, start, init_done, args, result)
    return outputs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", required=True,
                        choices=["gles_fp32", "gles_fp16", "cpu", "litert_gpu"])
    parser.add_argument("--model", required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--warmup-seconds", type=float, default=0.0)
    parser.add_argument("--max-seconds", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--outputs", help="save the outputs here (.npz)")
    parser.add_argument("--profile", action="store_true",
                        help="gles only: enable_profiling, report the last invoke's profile")
    args = parser.parse_args()

    result = {"backend": args.backend, "model": args.model, "threads": args.threads}
    try:
        if args.backend == "litert_gpu":
            outputs = run_compiled_model(args, result)
        else:
            outputs = run_interpreter(args, result)
    except Exception as error:  # noqa: BLE001 - reported, not hidden
        # The runtimes' exceptions often carry only a source location; the
        # parent adds the reasons they logged on stderr.
        result["error"] = f"{type(error).__name__}: {error}".strip()
        print(RESULT_PREFIX + json.dumps(result), flush=True)
        return 1
    if args.outputs:
        np.savez(args.outputs, *outputs)
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
