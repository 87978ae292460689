"""Sweep of shapes at and around the GLES 3.1 minimum limits, each op run
through the delegate with device_profile=gles31-minimum against LiteRT's
CPU kernels (relative L2 <= 1e-5, fp32): every case must be delegated and
agree, or be declined with a reason; a crash ends the run. Prints one line
per case and a summary (docs/device_profiles.md records a run).

    python3 tests/python/sweep_minimum_profile.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gles_testing as gt  # noqa: E402

OPTIONS = {"device_profile": "gles31-minimum"}


def cases():
    # Texel counts around 65536 (PHWC4 texels = H * W * slices) and past it.
    for hw, c in [(128, 16), (128, 17), (256, 4), (256, 5), (181, 8), (256, 8), (512, 4)]:
        yield "ADD", [[1, hw, hw, c], [1, hw, hw, c]], {}, None
        yield "MUL", [[1, hw, hw, c], [1, 1, 1, c]], {}, None
    # Concats whose slices take channels from 2..4 inputs, 2..10 inputs.
    for n in range(2, 11):
        for c in (1, 2, 3, 5):
            yield "CONCATENATION", [[1, 4, 6, c]] * n, {"axis": 3}, None
        yield "CONCATENATION", [[1, 3, 4, 4]] * n, {"axis": 1}, None
    # Means over windows around 128 invocations and far past them.
    for h, w in [(8, 16), (11, 12), (16, 16), (64, 64), (1, 4097)]:
        yield "MEAN", [[1, h, w, 6]], {"keep_dims": True}, {1: np.array([1, 2], np.int32)}
    # Softmax over long rows (workgroup reductions).
    for c in (127, 128, 129, 1001, 4096):
        yield "SOFTMAX", [[1, c]], {"beta": 1.0}, None
    # Convolutions whose output feeds a residual ADD (5 buffers if fused).
    for c in (3, 8, 33):
        yield "CONV_RESIDUAL", [[1, 17, 19, c]], {}, None


def conv_residual(shape):
    b = gt.ModelBuilder()
    c = shape[-1]
    rng = np.random.default_rng(1)
    x = b.add_input(shape)
    w = b.add_const(rng.standard_normal((c, 3, 3, c)).astype(np.float32) * 0.2)
    bias = b.add_const(rng.standard_normal(c).astype(np.float32))
    y, z = b.add_tensor(shape), b.add_tensor(shape)
    b.add_op("CONV_2D", [x, w, bias], [y], {"padding": "SAME", "stride_w": 1, "stride_h": 1})
    b.add_op("ADD", [y, x], [z], {})
    return b.build()


def main() -> int:
    rng = np.random.default_rng(5)
    counts = {"agree": 0, "declined": 0, "wrong": 0}
    for i, (op, shapes, options, consts) in enumerate(cases()):
        if op == "CONV_RESIDUAL":
            model = conv_residual(shapes[0])
        else:
            model = gt.single_op_model(op, shapes, options, consts=consts)
        inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        cpu, gpu, stats = gt.run_cpu_and_gpu(model, inputs, OPTIONS)
        error = max(gt.relative_error(g, c) for g, c in zip(gpu, cpu))
        if stats["nodes_delegated"] < stats["nodes_total"]:
            outcome = "declined"
        else:
            outcome = "agree" if error <= 1e-5 else "wrong"
        counts[outcome] += 1
        print(f"{i:3d} {op} {shapes[0]} x{len(shapes)}: {outcome} "
              f"(error {error:.2g}, {stats['dispatches']} dispatches)", flush=True)
    print("summary:", counts)
    return 1 if counts["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
