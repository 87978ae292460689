#!/usr/bin/env python3
"""The dilated 3x3 depthwise window on llvmpipe: rolled or unrolled row loop (issue 18, llvm4).

depthwise_conv2d.comp's FAST_3X3 path (a window of three input rows slides
down a BLOCK_W x BLOCK_H block of outputs DILATION apart; PHWC4 planar
slices, input through a samplerBuffer, output SSBO stores) written two ways:
  - rolled:   the row loop rolled, three row arrays carried across
              iterations and rotated (the shader today);
  - unrolled: the rows written out one after another, so no array is
              carried by a loop (each row a fresh set of values).
Compiled first, then run round-robin; each output checked against numpy.

    python3 bench/llvm_dw_probe.py ROUNDS [H C DILATION BW BH]
"""

from __future__ import annotations

import ctypes
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llvm_pointwise_probe as p  # noqa: E402

HEAD = """#version 310 es
#extension GL_EXT_texture_buffer : require
layout(local_size_x = 64) in;
layout(binding = 0) uniform highp samplerBuffer in0;
layout(binding = 1) uniform highp samplerBuffer weights;
layout(std430, binding = 0) writeonly buffer Out { vec4 out0[]; };
"""


def source(variant: str, h: int, s: int, d: int, bw: int, bh: int) -> str:
    foot = bw + 2
    lattice = -(-h // d)
    bx_n = d * -(-lattice // bw)
    by_n = d * -(-lattice // bh)
    blocks = bx_n * by_n
    c = [HEAD, "void main() {",
         "  int block = int(gl_GlobalInvocationID.x); int slice = int(gl_GlobalInvocationID.y);",
         f"  if (block >= {blocks}) return;",
         f"  int by = block / {bx_n}; int bx = block % {bx_n};",
         f"  int first_y = by % {d} + (by / {d}) * {bh * d};",
         f"  int first_x = bx % {d} + (bx / {d}) * {bw * d};",
         f"  int y0 = first_y - {d}; int x0 = first_x - {d};",
         "  vec4 w[9];",
         "  for (int t = 0; t < 9; ++t) w[t] = texelFetch(weights, slice * 9 + t);",
         f"  int rows_left = ({h} - first_y + {d - 1}) / {d};",
         f"  int columns_left = ({h} - first_x + {d - 1}) / {d};",
         f"  int plane = slice * {h * h} + x0;",
         f"  int out_index = (slice * {h} + first_y) * {h} + first_x;",
         f"  bool column_inside[{foot}];",
         f"  for (int c = 0; c < {foot}; ++c) column_inside[c] = x0 + c * {d} >= 0 && x0 + c * {d} < {h};"]

    def load_row(name, y):
        out = [f"  {{ bool row_inside = ({y}) >= 0 && ({y}) < {h}; int row_start = plane + ({y}) * {h};"]
        for cc in range(foot):
            out.append(f"    {{ bool inside = row_inside && column_inside[{cc}];"
                       f" {name}[{cc}] = inside ? texelFetch(in0, inside ? row_start + {cc * d} : 0) : vec4(0.0); }}")
        out.append("  }")
        return out

    def row_body(r0, r1, r2, oy_expr, guard):
        out = []
        for ox in range(bw):
            terms = " + ".join(f"{r}[{ox + kx}] * w[{3 * k + kx}]" for k, r in enumerate((r0, r1, r2))
                               for kx in range(3))
            out.append(f"    {{ vec4 sum = {terms};")
            out.append(f"      if ({ox} < columns_left{guard}) out0[out_index + {oy_expr} + {ox * d}] = sum; }}")
        return out

    if variant == "nostore":
        # The rolled loop with the outputs summed into one vec4 stored once:
        # what the per-output stores cost.
        c += [f"  vec4 row0[{foot}]; vec4 row1[{foot}]; vec4 row2[{foot}]; vec4 total = vec4(0.0);"]
        c += load_row("row0", "y0")
        c += load_row("row1", f"y0 + {d}")
        c += [f"  for (int oy = 0; oy < {bh}; ++oy) {{", "    if (oy >= rows_left) break;",
              f"    int top = y0 + oy * {d};"]
        c += load_row("row2", f"top + {2 * d}")
        body = row_body("row0", "row1", "row2", "0", "")
        c += [line.replace(f"out0[out_index + 0 + ", "total += vec4(float(").replace("] = sum;", ")) * sum;")
              for line in body]
        c += [f"    for (int c = 0; c < {foot}; ++c) {{ row0[c] = row1[c]; row1[c] = row2[c]; }}", "  }",
              "  out0[out_index] = total;"]
    elif variant == "rolled":
        c += [f"  vec4 row0[{foot}]; vec4 row1[{foot}]; vec4 row2[{foot}];"]
        c += load_row("row0", "y0")
        c += load_row("row1", f"y0 + {d}")
        c += [f"  for (int oy = 0; oy < {bh}; ++oy) {{", "    if (oy >= rows_left) break;",
              f"    int top = y0 + oy * {d};"]
        c += load_row("row2", f"top + {2 * d}")
        c += row_body("row0", "row1", "row2", "0", "")
        c += [f"    out_index += {h * d};",
              f"    for (int c = 0; c < {foot}; ++c) {{ row0[c] = row1[c]; row1[c] = row2[c]; }}", "  }"]
    else:
        names = [f"r{i}" for i in range(bh + 2)]
        c += [f"  vec4 {n}[{foot}];" for n in names]
        c += load_row(names[0], "y0")
        c += load_row(names[1], f"y0 + {d}")
        for oy in range(bh):
            c += [f"  if ({oy} < rows_left) {{"]
            c += load_row(names[oy + 2], f"y0 + {(oy + 2) * d}")
            c += row_body(names[oy], names[oy + 1], names[oy + 2], str(oy * h * d), "")
            c += ["  }"]
    c.append("}")
    return "\n".join(c)


def reference(x, w, d):
    s, h, _, _ = x.shape
    pad = np.zeros((s, h + 2 * d, h + 2 * d, 4), np.float32)
    pad[:, d:d + h, d:d + h] = x
    out = np.zeros_like(x)
    for ky in range(3):
        for kx in range(3):
            out += pad[:, ky * d:ky * d + h, kx * d:kx * d + h] * w[:, None, None, ky * 3 + kx]
    return out


def main() -> int:
    rounds = int(sys.argv[1])
    h, ch, d, bw, bh = (int(v) for v in (sys.argv[2:7] or [33, 480, 4, 5, 5]))
    s = ch // 4
    gl = p.gl_context()
    print(f"renderer: {gl.glGetString(0x1F01).decode()}, {h}x{h}x{ch} dilation {d} block {bw}x{bh}, {rounds} rounds")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((s, h, h, 4)).astype(np.float32)
    w = rng.standard_normal((s, 9, 4)).astype(np.float32)
    expected = reference(x, w, d)
    p.texture_buffer(gl, 0, p.buffer(gl, p.GL_TEXTURE_BUFFER, x, x.nbytes))
    p.texture_buffer(gl, 1, p.buffer(gl, p.GL_TEXTURE_BUFFER, w, w.nbytes))
    out_bytes = x.nbytes
    out_buf = p.buffer(gl, p.GL_SHADER_STORAGE_BUFFER, None, out_bytes)
    gl.glBindBufferBase(p.GL_SHADER_STORAGE_BUFFER, 0, out_buf)
    gl.glMapBufferRange.restype = ctypes.c_void_p
    lattice = -(-h // d)
    blocks = d * -(-lattice // bw) * d * -(-lattice // bh)
    runs = []
    for variant in ("rolled", "unrolled", "nostore"):
        t0 = time.perf_counter()
        program = p.compile_program(gl, source(variant, h, s, d, bw, bh))

        def run(program=program):
            gl.glUseProgram(program)
            gl.glDispatchCompute(-(-blocks // 64), s, 1)
            gl.glMemoryBarrier(p.GL_ALL_BARRIER_BITS)
            gl.glFinish()

        run()
        gl.glBindBuffer(p.GL_SHADER_STORAGE_BUFFER, out_buf)
        ptr = gl.glMapBufferRange(p.GL_SHADER_STORAGE_BUFFER, ctypes.c_long(0), ctypes.c_long(out_bytes),
                                  p.GL_MAP_READ_BIT)
        got = np.ctypeslib.as_array((ctypes.c_float * (out_bytes // 4)).from_address(ptr)).copy()
        gl.glUnmapBuffer(p.GL_SHADER_STORAGE_BUFFER)
        err = float(np.max(np.abs(got.reshape(expected.shape) - expected))) if variant != "nostore" else float("nan")
        print(f"{variant:9s} JIT {time.perf_counter() - t0:5.2f} s  max err {err:.1e}", flush=True)
        runs.append((variant, run, []))
    for _ in range(rounds):
        for _, run, times in runs:
            t = time.perf_counter()
            run()
            times.append(time.perf_counter() - t)
    p.print_round_robin(runs, 2.0 * 9 * h * h * ch, 9, 3)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
