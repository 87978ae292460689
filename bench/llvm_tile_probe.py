#!/usr/bin/env python3
"""Register tiles of a 1x1 GEMM on llvmpipe, interleaved (issue 18, llvm4).

bench/llvm_pointwise_probe.py's tb formulation (weights and PHWC4 input
through samplerBuffers, the tile written out statement by statement, so
every accumulator index is a constant) for several ROWSxSLICES tiles,
compiled first and then run round-robin (one run of each per round), so
that a shared box's load hits every tile alike. Prints min and median per
tile and its ratio to the first.

    python3 bench/llvm_tile_probe.py K N ROUNDS tb:4x4 tb:8x4 tb_unroll:4x4:2 ...

PROBE_DUMP_JIT=DIR writes the JIT's code regions there (for perf).
(tb_unroll:RxS:C: the depth loop unrolled in chunks of C steps, K/4 a
multiple of C.)
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llvm_pointwise_probe as p  # noqa: E402


def main() -> int:
    k, n, rounds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    specs = sys.argv[4:]
    k_s, n_s, hw = k // 4, n // 4, p.HW
    gl = p.gl_context()
    print(f"renderer: {gl.glGetString(0x1F01).decode()}, K={k} N={n} {hw} pixels, {rounds} rounds")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((k_s, hw, 4)).astype(np.float32)
    wt = rng.standard_normal((k, n)).astype(np.float32)
    expected = (x.transpose(1, 0, 2).reshape(hw, k) @ wt).reshape(hw, n_s, 4).transpose(1, 0, 2)
    in_buf = p.buffer(gl, p.GL_TEXTURE_BUFFER, x, x.nbytes)
    p.texture_buffer(gl, 0, in_buf)
    out_bytes = n_s * hw * 16
    out_buf = p.buffer(gl, p.GL_SHADER_STORAGE_BUFFER, None, out_bytes)
    gl.glBindBufferBase(p.GL_SHADER_STORAGE_BUFFER, 0, out_buf)
    gl.glMapBufferRange.restype = ctypes.c_void_p
    flops = 2.0 * hw * k * n
    runs = []
    for spec in specs:
        variant, tile, *chunk = spec.split(":")
        chunk = int(chunk[0]) if chunk else 8
        rows, slices = (int(v) for v in tile.split("x"))
        groups = n_s // slices
        packed = wt.reshape(k_s, 4, groups, slices, 4).transpose(2, 0, 3, 1, 4).copy()
        w_buf = p.buffer(gl, p.GL_TEXTURE_BUFFER, packed, packed.nbytes)
        w_tex = ctypes.c_uint()
        gl.glGenTextures(1, ctypes.byref(w_tex))
        gl.glActiveTexture(p.GL_TEXTURE0 + 1)
        gl.glBindTexture(p.GL_TEXTURE_BUFFER, w_tex)
        gl.glTexBuffer(p.GL_TEXTURE_BUFFER, p.GL_RGBA32F, w_buf)
        t0 = time.perf_counter()
        # "T" suffix: slice groups on the dispatch's x, so that llvmpipe,
        # which runs workgroups x first, takes every group of one pixel tile
        # before the next tile (the tile's input stays in cache).
        swap = variant.endswith("T")
        # "L" suffix: workgroups of 8 pixel tiles x 8 slice groups (llvmpipe
        # runs a workgroup's rows of 8 invocations one after another, so the
        # 8 groups read one pixel tile's input while it is in cache).
        local_y = 8 if variant.endswith("L") else 1
        text = p.source(variant.rstrip("TL"), k_s, rows, slices, chunk)
        text = text.replace("layout(local_size_x = 8) in;", f"layout(local_size_x = 8, local_size_y = {local_y}) in;")
        text = text.replace(f"if (first >= {hw}) return;", f"if (first >= {hw} || GROUP >= {groups}) return;")
        if swap:
            text = text.replace("#define GROUP int(gl_GlobalInvocationID.y)",
                                "#define GROUP int(gl_WorkGroupID.x)")
            text = text.replace("int first = int(gl_GlobalInvocationID.x) *",
                                "int first = int(gl_WorkGroupID.y * 8u + gl_LocalInvocationID.x) *")
        program = p.compile_program(gl, text)
        x_groups = -(-hw // (rows * 8))
        grid = (groups, x_groups) if swap else (x_groups, -(-groups // local_y))

        def run(program=program, w_tex=w_tex.value, grid=grid):
            gl.glActiveTexture(p.GL_TEXTURE0 + 1)
            gl.glBindTexture(p.GL_TEXTURE_BUFFER, w_tex)
            gl.glUseProgram(program)
            gl.glDispatchCompute(grid[0], grid[1], 1)
            gl.glMemoryBarrier(p.GL_ALL_BARRIER_BITS)
            gl.glFinish()

        run()
        gl.glBindBuffer(p.GL_SHADER_STORAGE_BUFFER, out_buf)
        ptr = gl.glMapBufferRange(p.GL_SHADER_STORAGE_BUFFER, ctypes.c_long(0), ctypes.c_long(out_bytes),
                                  p.GL_MAP_READ_BIT)
        got = np.ctypeslib.as_array((ctypes.c_float * (out_bytes // 4)).from_address(ptr)).copy()
        gl.glUnmapBuffer(p.GL_SHADER_STORAGE_BUFFER)
        err = float(np.max(np.abs(got.reshape(expected.shape) - expected)))
        print(f"{spec:12s} JIT {time.perf_counter() - t0:5.2f} s  max err {err:.1e}", flush=True)
        runs.append((spec, run, []))
    for _ in range(rounds):
        for spec, run, times in runs:
            t = time.perf_counter()
            run()
            times.append(time.perf_counter() - t)
    dump = os.environ.get("PROBE_DUMP_JIT")
    if dump:
        # The JIT's code (executable anonymous mappings), for reading a
        # `perf record -e cpu-clock` profile of this process with objdump.
        with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb") as mem:
            for line in maps:
                fields = line.split()
                if fields[1].startswith("r-x") and len(fields) < 6:
                    lo, hi = (int(v, 16) for v in fields[0].split("-"))
                    mem.seek(lo)
                    Path(dump, f"{lo:x}.bin").write_bytes(mem.read(hi - lo))
    p.print_round_robin(runs, flops, 12, 2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
