#!/usr/bin/env python3
"""Prepares and invokes a model once through the delegate with
TFLITE_GLES_X_DUMP_SHADERS=DIR (every dispatch's assembled program, grid and
uniforms, for bench/gap_probe.py). Extra options/env as in bench/variants.py.

    python3 bench/gap_dump.py MODEL DIR [NAME:KEY=VALUE,...]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))
from bench_worker import make_inputs  # noqa: E402
import variants  # noqa: E402


def main() -> int:
    model, folder = sys.argv[1], sys.argv[2]
    _, options, env = variants.parse_variant(sys.argv[3] if len(sys.argv) > 3 else "dump:")
    os.makedirs(folder, exist_ok=True)
    env = {**env, "TFLITE_GLES_X_DUMP_SHADERS": folder}
    _, interp = variants.variant_interpreter(model, options, env)
    details = interp.get_input_details()
    for detail, value in zip(details, make_inputs([(d["shape"], d["dtype"]) for d in details],
                                                  seed=1)):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    print(f"{model}: {len(os.listdir(folder))} programs dumped to {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
