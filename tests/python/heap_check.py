"""Whose crash is it? Re-runs a Python child under valgrind's memcheck and
says whether TFLite's own CPU kernels read or write memory they do not own.

A child that crashes with the delegate is replayed on the CPU alone; when
that does not crash (the bad write lands inside the arena TFLite allocates
in one block, or somewhere harmless), memcheck still sees an access past the
end of a heap block where the kernel's tensor ends the block. Accesses are
attributed by the first frame of each report: one inside LiteRT's library
(libpywrap_litert_common.so, the runtime and its kernels) is the runtime's.
glibc's dynamic loader reports (optimized strncmp over rpath strings) are
valgrind noise and are ignored.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

RUNTIME_LIBRARY = re.compile(r"libpywrap_litert|_pywrap_litert|libtensorflowlite")
LOADER_NOISE = re.compile(r"dl-load\.c|dl-open\.c|ld-linux|strcmp-sse|is_dst")
# Frames of the C library (memcpy and friends, as memcheck replaces them):
# the access is attributed to the first frame after them, their caller.
LIBC_FRAME = re.compile(r"vgpreload_memcheck|libc\.so|\b(memmove|memcpy|memset|"
                        r"__memcpy\w*|__memmove\w*|__memset\w*)\b")


def available() -> bool:
    return shutil.which("valgrind") is not None


def memcheck(args: list, env: dict | None = None, cwd: str | None = None,
             timeout: float = 600) -> dict:
    """Runs `python args...` under memcheck. Returns {"returncode",
    "runtime_errors": [first lines of reports in the runtime's code],
    "other_errors": [...], "stdout"}."""
    child_env = dict(env or os.environ)
    # CPython's small-object allocator reads outside its arenas by design;
    # plain malloc lets memcheck see every Python allocation exactly.
    child_env["PYTHONMALLOC"] = "malloc"
    # Not under another checker (the ASan run preloads libasan into Python).
    child_env.pop("LD_PRELOAD", None)
    result = subprocess.run(
        ["valgrind", "-q", "--leak-check=no", "--error-exitcode=99",
         "--num-callers=8", sys.executable, *args],
        env=child_env, cwd=cwd, text=True, capture_output=True, timeout=timeout)
    runtime_errors, other_errors = [], []
    for report in _reports(result.stderr):
        frames = report[1:]
        if frames and LOADER_NOISE.search(frames[0]):
            continue
        callers = [frame for frame in frames if not LIBC_FRAME.search(frame)]
        first_frame = callers[0] if callers else (frames[0] if frames else "")
        summary = f"{report[0]} {first_frame.strip()}"
        (runtime_errors if RUNTIME_LIBRARY.search(first_frame) else other_errors).append(
            summary[:400])
    return {"returncode": result.returncode, "runtime_errors": runtime_errors,
            "other_errors": other_errors, "stdout": result.stdout}


def _reports(stderr: str) -> list:
    """memcheck's "Invalid read/write" reports, each as its lines without
    the ==pid== prefix: [kind, "at ...", "by ...", ...]."""
    reports, current = [], None
    for line in stderr.splitlines():
        text = re.sub(r"^==\d+==\s?", "", line)
        if text.startswith("Invalid read") or text.startswith("Invalid write"):
            current = [text]
            reports.append(current)
        elif current is not None and text.strip().startswith(("at ", "by ")):
            current.append(text)
        else:
            current = None
    return reports
