"""Runs risky test code in a child Python process, so that a crash (a
segfault in the delegate, an abort in the driver) or a hang becomes one
failed test with the child's output, instead of killing or stalling the whole
pytest run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def run_isolated(code: str, env: dict | None = None, timeout: float = 120.0,
                 args: list[str] | None = None) -> subprocess.CompletedProcess:
    """Runs `code` (or a script given as args) in a fresh interpreter.

    The child finds gles_testing and tflite_builder on its path and inherits
    the environment plus `env`. Raises AssertionError naming the cause when
    the child dies by a signal or runs past `timeout` seconds; otherwise
    returns the CompletedProcess (text stdout/stderr) for the test to check.
    """
    child_env = dict(os.environ)
    child_env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), str(REPO / "tools"), child_env.get("PYTHONPATH", "")])
    child_env.update(env or {})
    command = [sys.executable] + (args if args is not None else ["-c", code])
    try:
        result = subprocess.run(command, env=child_env, cwd=str(REPO), text=True,
                                capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as error:
        raise AssertionError(f"child hung for more than {timeout} s; output so far:\n"
                             f"{error.stdout}\n{error.stderr}") from None
    if result.returncode < 0:
        name = signal.Signals(-result.returncode).name
        raise AssertionError(f"child crashed with {name}:\nstdout:\n{result.stdout[-4000:]}"
                             f"\nstderr:\n{result.stderr[-4000:]}")
    return result
