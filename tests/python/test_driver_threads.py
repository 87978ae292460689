"""llvmpipe's worker count while the delegate initializes its own display
(egl/driver_threads.h): two workers per online core unless the user chose
LP_NUM_THREADS, the variable gone from the process afterwards, and results
that still match LiteRT's CPU kernels.

Each case runs in a fresh process: Mesa reads the variable once, when the
process's llvmpipe screen is created.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gles_testing import FP32_TOLERANCE, REPO

CHILD = r"""
import ctypes, glob, json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "python"))
import numpy as np
from gles_testing import make_delegate, single_op_model, run_tflite
rng = np.random.default_rng(7)
shape = [1, 33, 17, 12]
model = single_op_model("CONV_2D", [shape], {"padding": "SAME", "stride_w": 1,
                        "stride_h": 1}, consts={1: rng.standard_normal((8, 3, 3, 12)).astype(np.float32),
                        2: rng.standard_normal(8).astype(np.float32)})
x = rng.standard_normal(shape).astype(np.float32)
delegate = make_delegate()
gpu = run_tflite(model, [x], delegates=[delegate])[0]
cpu = run_tflite(model, [x])[0]
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
left = libc.getenv(b"LP_NUM_THREADS")
workers = sum(1 for t in glob.glob("/proc/self/task/*/comm")
              if open(t).read().startswith("llvmpipe-"))
print(json.dumps({"error": float(np.linalg.norm(gpu - cpu) / np.linalg.norm(cpu)),
                  "workers": workers, "left": left.decode() if left else None}))
"""


def run_child(lp_num_threads: str | None) -> dict:
    env = dict(os.environ)
    env.pop("LP_NUM_THREADS", None)
    if lp_num_threads is not None:
        env["LP_NUM_THREADS"] = lp_num_threads
    done = subprocess.run([sys.executable, "-c", CHILD, str(REPO)], env=env, cwd=str(REPO),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["stderr"] = done.stderr
    return result


@pytest.mark.parametrize("user", [None, "3"], ids=["unset", "user_chose_3"])
def test_llvmpipe_workers_while_our_display_initializes(user):
    result = run_child(user)
    assert result["error"] <= FP32_TOLERANCE
    if "on llvmpipe" not in result["stderr"]:
        pytest.skip("not llvmpipe: other drivers do not read LP_NUM_THREADS")
    cores = os.sysconf("SC_NPROCESSORS_ONLN")
    if user is None:
        assert result["workers"] == max(2, 2 * cores)
        assert result["left"] is None, "LP_NUM_THREADS left set in the process"
        assert f"llvmpipe workers: LP_NUM_THREADS={max(2, 2 * cores)}" in result["stderr"]
    else:
        assert result["workers"] == 3
        assert result["left"] == "3"
        assert "LP_NUM_THREADS left to the user (3)" in result["stderr"]
