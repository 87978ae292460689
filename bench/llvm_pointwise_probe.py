#!/usr/bin/env python3
"""How should a 1x1 convolution read its weights on llvmpipe? (issue 18)

Talks to EGL/GLES directly (ctypes, bench/program_binary_probe.py's
context; no delegate). One DeepLab-sized pointwise GEMM (33x33 pixels,
K and N channels as given), PHWC4 input read through a samplerBuffer, and
weights read in one of these ways:
  - tb:       a samplerBuffer, index from the slice group and a rolled depth
              loop (conv2d.comp's 1x1 path today): every weight fetch is an
              8-lane gather.
  - tb_unroll: the same, depth loop unrolled in chunks of CHUNK steps.
  - ubo_dyn:  one dispatch per slice group, weights in a UBO range bound for
              that group, rolled depth loop (dynamic UBO index).
  - ubo_const: one dispatch per slice group, the depth loop fully unrolled,
              so every weight offset is a constant: gallivm loads it once
              and broadcasts it (lp_bld_nir_soa.c, emit_load_ubo).
  - tb_img:   tb, the output stored with imageStore into an rgba32f
              imageBuffer view of the output buffer instead of SSBO stores.
  - ib / ib_in: tb with the weights (ib) or weights and input (ib_in) read
              with imageLoad from rgba32f imageBuffer views.
PROBE_HW=N sets the pixel count (default 33x33).
Every variant's output is checked against numpy; GFLOP/s from the median
of REPEAT timed runs (each all dispatches of the layer, glFinish).

    python3 bench/llvm_pointwise_probe.py [K N] [variant:ROWSxSLICES ...]
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from program_binary_probe import compile_compute, gl_context  # noqa: E402

GL_SHADER_STORAGE_BUFFER = 0x90D2
GL_UNIFORM_BUFFER = 0x8A11
GL_TEXTURE_BUFFER = 0x8C2A
GL_RGBA32F = 0x8814
GL_TEXTURE0 = 0x84C0
GL_STATIC_DRAW = 0x88E4
GL_MAP_READ_BIT = 0x0001
GL_ALL_BARRIER_BITS = 0xFFFFFFFF
HW = int(os.environ.get("PROBE_HW", 33 * 33))
REPEAT = int(os.environ.get("PROBE_REPEAT", 7))

HEADER = """#version 310 es
#extension GL_EXT_texture_buffer : require
layout(local_size_x = 8) in;
layout(binding = 0) uniform highp samplerBuffer in0;
"""
SSBO_OUT = "layout(std430, binding = 0) writeonly buffer Out { vec4 out0[]; };\n#define STORE(i, v) out0[i] = (v)\n"
IMAGE_OUT = ("layout(rgba32f, binding = 0) writeonly uniform highp imageBuffer out0;\n"
             "#define STORE(i, v) imageStore(out0, (i), (v))\n")


def body_step(s_expr: str, w_expr, rows: int, slices: int) -> str:
    """One depth step: TILE_ROWS input fetches, TILE_SLICES x 4 weight vec4s."""
    lines = [f"{{ int s_ = {s_expr};"]
    for p in range(rows):
        lines.append(f"vec4 x{p} = FETCH_IN(in0, base[{p}] + s_ * {HW});")
    for o in range(slices):
        for j in range(4):
            lines.append(f"vec4 w{o}_{j} = {w_expr(o, j)};")
        for p in range(rows):
            lines.append(f"acc[{p * slices + o}] += w{o}_0 * x{p}.x + w{o}_1 * x{p}.y + "
                         f"w{o}_2 * x{p}.z + w{o}_3 * x{p}.w;")
    lines.append("}")
    return "\n".join(lines)


def source(variant: str, k_s: int, rows: int, slices: int, chunk: int) -> str:
    tile = rows * slices
    group_size = k_s * slices * 4
    head = HEADER + (IMAGE_OUT if variant.endswith("_img") else SSBO_OUT)
    if variant == "ib_in":
        head = head.replace("layout(binding = 0) uniform highp samplerBuffer in0;",
                            "layout(rgba32f, binding = 2) readonly uniform highp imageBuffer in0;")
    if variant.startswith("ib"):
        head += "layout(rgba32f, binding = 1) readonly uniform highp imageBuffer weights;\n"
        head += "#define GROUP int(gl_GlobalInvocationID.y)\n"
        w_index = f"GROUP * {group_size}"
    elif variant.startswith("tb"):
        head += "layout(binding = 1) uniform highp samplerBuffer weights;\n"
        head += "#define GROUP int(gl_GlobalInvocationID.y)\n"
        w_index = f"GROUP * {group_size}"
    else:
        head += f"layout(std140, binding = 1) uniform W {{ vec4 w[{group_size}]; }};\n"
        head += "layout(location = 0) uniform int group;\n#define GROUP group\n"
        w_index = "0"
    head += ("#define FETCH_IN(t, i) imageLoad(t, i)\n" if variant == "ib_in"
             else "#define FETCH_IN(t, i) texelFetch(t, i)\n")
    code = [head, "void main() {",
            f"  int first = int(gl_GlobalInvocationID.x) * {rows};",
            f"  if (first >= {HW}) return;",
            f"  int base[{rows}];",
            f"  for (int p = 0; p < {rows}; ++p) base[p] = min(first + p, {HW - 1});",
            f"  vec4 acc[{tile}];",
            f"  for (int i = 0; i < {tile}; ++i) acc[i] = vec4(0.0);",
            f"  int wb = {w_index};"]
    if variant in ("ib", "ib_in"):
        code.append(f"  for (int s = 0; s < {k_s}; ++s) {{")
        code.append(body_step("s", lambda o, j: f"imageLoad(weights, wb + s * {slices * 4} + {o * 4 + j})", rows, slices))
        code.append("  }")
    elif variant in ("tb", "tb_img"):
        code.append(f"  for (int s = 0; s < {k_s}; ++s) {{")
        code.append(body_step("s", lambda o, j: f"texelFetch(weights, wb + s * {slices * 4} + {o * 4 + j})", rows, slices))
        code.append("  }")
    elif variant == "tb_unroll":
        code.append(f"  for (int c = 0; c < {k_s}; c += {chunk}) {{")
        for i in range(chunk):
            code.append(body_step(f"c + {i}", lambda o, j, i=i: f"texelFetch(weights, wb + (c + {i}) * {slices * 4} + {o * 4 + j})", rows, slices))
        code.append("  }")
    elif variant == "ubo_dyn":
        code.append(f"  for (int s = 0; s < {k_s}; ++s) {{")
        code.append(body_step("s", lambda o, j: f"w[s * {slices * 4} + {o * 4 + j}]", rows, slices))
        code.append("  }")
    elif variant == "ubo_const":
        for s in range(k_s):
            code.append(body_step(str(s), lambda o, j, s=s: f"w[{s * slices * 4 + o * 4 + j}]", rows, slices))
    else:
        raise SystemExit(f"unknown variant {variant}")
    code.append(f"  for (int p = 0; p < {rows}; ++p) {{")
    code.append(f"    if (first + p >= {HW}) break;")
    code.append(f"    for (int o = 0; o < {slices}; ++o) STORE((GROUP * {slices} + o) * {HW} + first + p, acc[p * {slices} + o]);")
    code.append("  }\n}\n")
    return "\n".join(code)


def compile_program(gl, text: str) -> int:
    program, error = compile_compute(gl, text)
    if program is None:
        raise SystemExit(error)
    return program


def buffer(gl, target: int, data: np.ndarray | None, size: int) -> int:
    b = ctypes.c_uint()
    gl.glGenBuffers(1, ctypes.byref(b))
    gl.glBindBuffer(target, b)
    ptr = data.ctypes.data_as(ctypes.c_void_p) if data is not None else None
    gl.glBufferData(target, ctypes.c_long(size), ptr, GL_STATIC_DRAW)
    return b.value


def texture_buffer(gl, unit: int, buf: int) -> None:
    t = ctypes.c_uint()
    gl.glGenTextures(1, ctypes.byref(t))
    gl.glActiveTexture(GL_TEXTURE0 + unit)
    gl.glBindTexture(GL_TEXTURE_BUFFER, t)
    gl.glTexBuffer(GL_TEXTURE_BUFFER, GL_RGBA32F, buf)


def print_round_robin(runs, flops: float, width: int, decimals: int) -> None:
    """One line per (name, _, times) of a round-robin run: median and min,
    each also as a fraction of the first variant's, and GFLOP/s at the min
    (shared by llvm_tile_probe.py and llvm_dw_probe.py)."""
    base = None
    for name, _, times in runs:
        med = sorted(times)[len(times) // 2]
        base = base or (med, min(times))
        print(f"{name:{width}s} median {med * 1e3:7.{decimals}f} ms ({med / base[0]:.3f})  "
              f"min {min(times) * 1e3:7.{decimals}f} ({min(times) / base[1]:.3f})  "
              f"{flops / min(times) / 1e9:5.1f} GFLOP/s at min")


def main() -> int:
    args = sys.argv[1:]
    k, n = 320, 256
    if len(args) >= 2 and args[0].isdigit():
        k, n = int(args[0]), int(args[1])
        args = args[2:]
    variants = args or ["tb:4x4", "tb_unroll:4x4", "ubo_dyn:4x4", "ubo_const:4x4", "ubo_const:2x4",
                        "ubo_const:1x8", "ubo_const:2x8"]
    k_s, n_s = k // 4, n // 4
    gl = gl_context()
    print(f"renderer: {gl.glGetString(0x1F01).decode()}, K={k} N={n} {HW} pixels")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((k_s, HW, 4)).astype(np.float32)  # PHWC4
    wt = rng.standard_normal((k, n)).astype(np.float32)
    expected = (x.transpose(1, 0, 2).reshape(HW, k) @ wt).reshape(HW, n_s, 4).transpose(1, 0, 2)
    in_buf = buffer(gl, GL_TEXTURE_BUFFER, x, x.nbytes)
    texture_buffer(gl, 0, in_buf)
    out_bytes = n_s * HW * 16
    out_buf = buffer(gl, GL_SHADER_STORAGE_BUFFER, None, out_bytes)
    gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, out_buf)
    out_tex = ctypes.c_uint()
    gl.glGenTextures(1, ctypes.byref(out_tex))
    gl.glActiveTexture(GL_TEXTURE0 + 2)
    gl.glBindTexture(GL_TEXTURE_BUFFER, out_tex)
    gl.glTexBuffer(GL_TEXTURE_BUFFER, GL_RGBA32F, out_buf)
    # image unit 0: the output buffer's rgba32f view (tb_img)
    gl.glBindImageTexture(0, out_tex, 0, 0, 0, 0x88B9, GL_RGBA32F)  # GL_WRITE_ONLY
    gl.glMapBufferRange.restype = ctypes.c_void_p
    flops = 2.0 * HW * k * n
    for spec in variants:
        variant, tile = spec.split(":")
        rows, slices = (int(v) for v in tile.split("x"))
        groups = n_s // slices
        # [group][step][slice o][lane j] vec4 of 4 output channels.
        packed = wt.reshape(k_s, 4, groups, slices, 4).transpose(2, 0, 3, 1, 4).copy()
        w_buf = buffer(gl, GL_TEXTURE_BUFFER, packed, packed.nbytes)
        zeros = np.zeros(out_bytes // 4, np.float32)
        gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, out_buf)
        gl.glBufferSubData(GL_SHADER_STORAGE_BUFFER, ctypes.c_long(0), ctypes.c_long(out_bytes),
                           zeros.ctypes.data_as(ctypes.c_void_p))
        if variant.startswith("tb"):
            texture_buffer(gl, 1, w_buf)
        if variant.startswith("ib"):
            texture_buffer(gl, 3, w_buf)
            w_tex = ctypes.c_uint()
            gl.glGetIntegerv(0x8C2C, ctypes.byref(w_tex))  # GL_TEXTURE_BINDING_BUFFER
            gl.glBindImageTexture(1, w_tex.value, 0, 0, 0, 0x88B8, GL_RGBA32F)  # GL_READ_ONLY
            gl.glActiveTexture(GL_TEXTURE0)
            in_tex = ctypes.c_uint()
            gl.glGetIntegerv(0x8C2C, ctypes.byref(in_tex))
            gl.glBindImageTexture(2, in_tex.value, 0, 0, 0, 0x88B8, GL_RGBA32F)
        t0 = time.perf_counter()
        program = compile_program(gl, source(variant, k_s, rows, slices, 8))
        gl.glUseProgram(program)
        x_groups = -(-HW // (rows * 8))
        group_bytes = packed.nbytes // groups

        def run():
            if variant.startswith(("tb", "ib")):
                gl.glDispatchCompute(x_groups, groups, 1)
            else:
                for g in range(groups):
                    gl.glBindBufferRange(GL_UNIFORM_BUFFER, 1, w_buf, ctypes.c_long(g * group_bytes),
                                         ctypes.c_long(group_bytes))
                    gl.glUniform1i(0, g)
                    gl.glDispatchCompute(x_groups, 1, 1)
            gl.glMemoryBarrier(GL_ALL_BARRIER_BITS)
            gl.glFinish()

        run()
        compile_s = time.perf_counter() - t0
        times = []
        for _ in range(REPEAT):
            t = time.perf_counter()
            run()
            times.append(time.perf_counter() - t)
        gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, out_buf)
        ptr = gl.glMapBufferRange(GL_SHADER_STORAGE_BUFFER, ctypes.c_long(0), ctypes.c_long(out_bytes),
                                  GL_MAP_READ_BIT)
        got = np.ctypeslib.as_array((ctypes.c_float * (out_bytes // 4)).from_address(ptr)).copy()
        gl.glUnmapBuffer(GL_SHADER_STORAGE_BUFFER)
        err = float(np.max(np.abs(got.reshape(expected.shape) - expected)))
        med = sorted(times)[len(times) // 2]
        print(f"{spec:16s} median {med * 1e3:7.2f} ms  min {min(times) * 1e3:7.2f}  "
              f"{flops / med / 1e9:6.1f} GFLOP/s  first run (JIT) {compile_s:5.2f} s  max err {err:.2e}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
