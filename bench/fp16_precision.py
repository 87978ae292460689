#!/usr/bin/env python3
"""fp16 precision of delegate variants at the model level, against LiteRT's
CPU kernels, with tests/python/test_models.py's fp16 criteria and their
margins: image models' relative L2 (bound 1e-2), segmentation masks'
agreement (bound 99.5 %), and the largest absolute difference.

    python3 bench/fp16_precision.py --model style_transfer_f16_384 \\
        --variant f16: --variant acc16:env.TFLITE_GLES_X_WINDOW_ACC16=1

Variants as bench/options_ab.py (NAME:KEY=VALUE,...; env.NAME set while
that variant's delegate is created); precision_loss_allowed is on for all.
Models by their tools/model_catalog.py name (real inputs, as the tests).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tools"))

import gles_testing as gt  # noqa: E402
import model_catalog as mc  # noqa: E402
import test_models as tm  # noqa: E402
import variants  # noqa: E402


def measure(spec, gpu: dict, cpu: dict, fp32: bool) -> str:
    g, c = gpu["outputs"][0], cpu["outputs"][0]
    worst = float(np.max(np.abs(g.astype(np.float64) - c)))
    rel = gt.relative_error(g, c)
    if spec.kind == "segmentation_argmax":
        agree = float(np.mean(g[0].argmax(-1) == c[0].argmax(-1)))
        return f"masks agree {agree:.4%} (bound 99.5 %), rel L2 {rel:.3g}, max |d| {worst:.3g}"
    if spec.kind == "segmentation_threshold":
        agree = float(np.mean((g > 0.5) == (c > 0.5)))
        return f"masks agree {agree:.4%} (bound 99.5 %), rel L2 {rel:.3g}, max |d| {worst:.3g}"
    bound = 1e-4 if fp32 else 1e-2  # test_models: fp32 every output, fp16 images
    return f"rel L2 {rel:.3g} (bound {bound:g}: {rel / bound:.0%} of it), max |d| {worst:.3g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", required=True)
    parser.add_argument("--variant", action="append", required=True)
    args = parser.parse_args()
    for name in args.model:
        spec = mc.CATALOG[name]
        cpu = tm.cpu_result(name)
        for text in args.variant:
            vname, options, env = variants.parse_variant(text)
            with variants.environment(env):
                gpu = tm.gpu_result(name, fp16=True, options=options)
            fp32 = options.get("precision_loss_allowed") == "false"
            print(f"| {name} | {vname} | {measure(spec, gpu, cpu, fp32)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
