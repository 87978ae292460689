#!/usr/bin/env python3
"""The hair stand-in's builtin twin against TFLite's CPU kernels, with the
bottleneck heads (TFLITE_GLES_X_FUSE_CHAIN_HEADS) off and on, or the given
variants (bench/variants.py's NAME:env.X=V,... syntax; delegate options
other than the precision are not taken), fp32 and fp16: relative L2 of the
logits and the agreement of the argmax mask (the model catalog's criterion
for segmentation: >= 0.995). bench/device_chain3.sh, bench/device_chain5.sh.

    python3 bench/device_chain3_accuracy.py MODEL [VARIANT...]
"""

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "bench"))

import gles_testing as gt  # noqa: E402
import variants  # noqa: E402
from bench_worker import make_inputs  # noqa: E402


def main() -> int:
    model = sys.argv[1]
    interp = gt.interpreter(model)
    interp.allocate_tensors()
    details = interp.get_input_details()
    inputs = make_inputs([(d["shape"], d["dtype"]) for d in details], seed=1)
    cpu = np.asarray(gt.invoke(interp, inputs)[0], np.float64)
    texts = sys.argv[2:] or [f"{h}:env.TFLITE_GLES_X_FUSE_CHAIN_HEADS={h}" for h in "01"]
    print("| precision | variant | dispatches | relative L2 | mask agreement |")
    print("|---|---|---|---|---|")
    for fp16 in (False, True):
        for text in texts:
            name, _, env = variants.parse_variant(text)
            with variants.environment(env):
                out, stats = gt.run_gpu(model, inputs, {"precision_loss_allowed": fp16})
            gpu = np.asarray(out[0], np.float64)
            agree = float(np.mean(np.argmax(gpu, -1) == np.argmax(cpu, -1)))
            print(f"| {'fp16' if fp16 else 'fp32'} | {name} | {stats['dispatches']} | "
                  f"{gt.relative_error(gpu, cpu):.2e} | {agree:.5f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
