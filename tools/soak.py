"""Soak test: many invokes of a real model through the delegate.

Two seeded inputs alternate (so a stale output cannot pass for a fresh one);
every output must be bit-identical to the first output for the same input,
and the first must agree with the TFLite CPU kernels. Host RSS and the GPU
objects the delegate holds (GL buffers, bytes, EGL contexts) are printed after
warm-up and at the end, and must stay flat.

    python3 tools/soak.py                          # 10,000 invokes (~100 s on llvmpipe)
    python3 tools/soak.py --invokes 2000           # what CI runs (tests/python/test_soak.py)
    python3 tools/soak.py --model ../shared/models/face_detection_short_range.tflite
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from gles_testing import (assert_close, interpreter, library,  # noqa: E402
                          make_delegate, stats)
from model_catalog import SHARED_MODELS  # noqa: E402

DEFAULT_MODEL = SHARED_MODELS / "mobilenet_v1_0.25_224.tflite"
# Host memory the process may gain after warm-up: allocator and driver noise,
# far below what one leaked tensor per invoke would add.
RSS_SLACK_BYTES = 8 << 20


class LiveObjects(ctypes.Structure):
    _fields_ = [("delegates", ctypes.c_int64), ("owned_egl_contexts", ctypes.c_int64),
                ("gpu_buffers", ctypes.c_int64)]


def live_objects() -> dict:
    counts = LiveObjects()
    library().TfLiteGlesGetLiveObjects(ctypes.byref(counts))
    return {name: getattr(counts, name) for name, _ in LiveObjects._fields_}


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def snapshot(delegate) -> dict:
    return {"rss_mib": round(rss_bytes() / (1 << 20), 1), **live_objects(),
            "gpu_bytes": stats(delegate)["gpu_bytes"]}


def seeded_inputs(details, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]) for d in details]


def run(interp, inputs):
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--invokes", type=int, default=10_000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args(argv)

    options = {"log_level": "warning", "precision_loss_allowed": args.fp16}
    delegate = make_delegate(options)
    interp = interpreter(args.model, delegate)
    interp.allocate_tensors()
    s = stats(delegate)
    details = interp.get_input_details()
    inputs = [seeded_inputs(details, 1), seeded_inputs(details, 2)]

    cpu = interpreter(args.model)
    cpu.allocate_tensors()
    references = [run(interp, x) for x in inputs]
    for x, gpu_outputs in zip(inputs, references):
        assert_close(gpu_outputs, run(cpu, x), fp16=args.fp16)
    del cpu

    for i in range(args.warmup):
        run(interp, inputs[i % 2])
    before = snapshot(delegate)
    print(f"soak: {Path(args.model).name}: {s['nodes_delegated']}/{s['nodes_total']} nodes "
          f"delegated on {s['renderer']}; after warm-up: {before}", flush=True)

    start = time.monotonic()
    mismatches = 0
    for i in range(args.invokes):
        outputs = run(interp, inputs[i % 2])
        expected = references[i % 2]
        if not all(np.array_equal(a.view(np.uint8), b.view(np.uint8))
                   for a, b in zip(outputs, expected)):
            mismatches += 1
            if mismatches <= 3:
                print(f"soak: invoke {i}: output differs from the first run", flush=True)
    elapsed = time.monotonic() - start
    after = snapshot(delegate)
    print(f"soak: {args.invokes} invokes in {elapsed:.1f} s "
          f"({elapsed / max(1, args.invokes) * 1000:.2f} ms each); at the end: {after}; "
          f"{mismatches} outputs not bit-identical", flush=True)

    problems = []
    if mismatches:
        problems.append(f"{mismatches} outputs were not bit-identical run to run")
    for key in ("gpu_buffers", "owned_egl_contexts", "delegates", "gpu_bytes"):
        if after[key] != before[key]:
            problems.append(f"{key} went from {before[key]} to {after[key]}")
    growth = (after["rss_mib"] - before["rss_mib"]) * (1 << 20)
    if growth > RSS_SLACK_BYTES:
        problems.append(f"host RSS grew by {growth / (1 << 20):.1f} MiB")
    if stats(delegate)["invokes"] < args.invokes:
        problems.append("the delegate counted fewer invokes than were made")
    for problem in problems:
        print(f"soak: FAILED: {problem}", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
