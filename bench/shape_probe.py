#!/usr/bin/env python3
"""The shape's own ceiling (issue 18, session 16, helper `peak5`): for each
program that TFLITE_GLES_X_DUMP_SHADERS wrote (bench/gap_probe.py's dumps),
how fast could a kernel of its exact dispatch geometry be, with its loads
taken away?

Per dumped program (all timed here, outside the delegate, each dispatch in
its own timer query, the fastest of --reps, after bench/peak_probe.py's heat):
  real   the dumped program itself, its buffers filled as gap_probe.py fills them;
  empty  an empty main() on the same grid (workgroup size and count): launch,
         ramp and drain of that grid;
  fma    a synthetic main() on the same grid: every invocation does the layer's
         FMAs per invocation (flops / 2 / invocations) into the same number of
         vec4 accumulators (PX or TILE_ROWS x TILE_SLICES), products of input
         vec4s by 4 weight vec4s per output slice held in registers (the FMA_CHAIN
         form), inputs stepped by one FMA each per iteration (counted in the
         total); no memory traffic;
  smem   fma plus the dumped program's shared arrays (same bytes per workgroup,
         one element written and read per invocation): the occupancy that the
         shared memory allows;
and once: the floor, an empty one-invocation dispatch (single query, and the
mean over back-to-back dependent dispatches).
--alt LX/LY/LZ/ROWS/SLICES/SMEM (SMEM in bytes, -1: the layer's own) adds a
synthetic row per layer of another geometry doing the same total FMAs: the
workgroup count follows from the FMAs per invocation (the layer's, scaled by
ROWS x SLICES over its own accumulators).

    python3 bench/shape_probe.py [--match TEXT] [--alt 16/8/1/4/2/-1] DUMP_DIR...
"""

from __future__ import annotations

import argparse
import ctypes
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gap_probe import Probe, parse  # noqa: E402
from peak_probe import GL_SHADER_STORAGE_BUFFER, GL_TIME_ELAPSED_EXT, SMALL, heat  # noqa: E402

GL_QUERY_RESULT_EXT = 0x8866
PEAK = 67.0  # TFLOP/s, the H100 / H200 fp32 FMA rate the issue measures against
TYPES = ("vec4", "uvec2", "uvec4", "vec2", "float", "uint", "ivec4")
SIZES = {"vec4": 16, "uvec2": 8, "uvec4": 16, "vec2": 8, "float": 4, "uint": 4, "ivec4": 16}


def defines(source: str) -> dict:
    out = {}
    for name, value in re.findall(r"^#define (\w+) (\S+)\s*$", source, flags=re.M):
        out.setdefault(name, value)
    return out


def as_int(d, name, default):
    try:
        return int(d.get(name, default))
    except ValueError:
        return default


def synthetic_main(prec, rows, slices, it, touch=(), lds=0):
    """main(): rows x slices vec4 accumulators, each iteration 16 FMAs per
    accumulator and 4 per input (rows inputs); `touch`: shared arrays, one
    element each written and, after a barrier, another read into the sum.
    lds > 0: `shared vec4 p5_lds[lds]` (declared by the caller) is filled
    first, and each iteration reads the 4 weight vec4s of every output slice
    from it (the same address in every invocation: broadcasts, as the taps'
    weights) and the rows inputs (each invocation its own addresses); no FMAs
    step the inputs then."""
    p = prec
    L = ["layout(std430, binding = 0) buffer P5Data { highp vec4 v[]; } p5_data;",
         "void main() {",
         "  uint p5_i = gl_LocalInvocationIndex;",
         f"  {p} vec4 p5_m = p5_data.v[0];", f"  {p} vec4 p5_c = p5_data.v[1];"]
    for r in range(rows):
        L.append(f"  {p} vec4 p5_x{r} = p5_data.v[2] + vec4(float(p5_i & 7u) + {0.01 * r:.2f});")
    for s in range(slices):
        for k in range(4):
            L.append(f"  {p} vec4 p5_w{s}_{k} = p5_data.v[{3 + s * 4 + k}];")
    for r in range(rows):
        for s in range(slices):
            L.append(f"  {p} vec4 p5_a{r}_{s} = vec4(0.0);")
    step = slices * 4
    if lds:
        L += ["  uint p5_n = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;",
              f"  for (uint p5_j = p5_i; p5_j < {lds}u; p5_j += p5_n) "
              "p5_lds[p5_j] = p5_c * float(p5_j & 7u) + p5_m;",
              "  barrier();",
              f"  int p5_off = int(p5_i) * {rows} % {lds}, p5_b = 0;"]
    L.append(f"  for (int p5_k = 0; p5_k < {it}; ++p5_k) {{")
    if lds:
        for s in range(slices):
            for k in range(4):
                L.append(f"    p5_w{s}_{k} = p5_lds[p5_b + {s * 4 + k}];")
        for r in range(rows):
            L.append(f"    p5_x{r} = p5_lds[(p5_b + p5_off + {r}) % {lds}];")
        L.append(f"    p5_b = p5_b + {step} >= {lds - step} ? 0 : p5_b + {step};")
    for s in range(slices):
        for r in range(rows):
            for k, c in enumerate("xyzw"):
                L.append(f"    p5_a{r}_{s} += p5_w{s}_{k} * p5_x{r}.{c};")
    if not lds:
        for r in range(rows):
            L.append(f"    p5_x{r} = p5_x{r} * p5_m + p5_c;")
    L.append("  }")
    total = " + ".join(f"p5_a{r}_{s}" for r in range(rows) for s in range(slices))
    L.append(f"  highp vec4 p5_s = vec4({total});")
    for name, _ in touch:
        L.append(f"  {name}[int(p5_i) % {name}.length()] = "
                 f"{name}[int(p5_i * 7u + 1u) % {name}.length()];")
    if touch:
        L.append("  barrier();")
        for name, t in touch:
            x = "" if t in ("float", "uint") else ".x"
            L.append(f"  p5_s.x += float({name}[int(p5_i * 3u + 2u) % {name}.length()]{x});")
    L.append("  if (dot(p5_s, vec4(1.0)) == 12345.0) p5_data.v[4 + int(p5_i)] = p5_s;")
    L.append("}")
    return "\n".join(L) + "\n"


def standalone(local, prec, rows, slices, it, smem_bytes=0, empty=False, lds=False):
    head = ("#version 310 es\nprecision highp float;\nprecision highp int;\n"
            f"layout(local_size_x = {local[0]}, local_size_y = {local[1]}, "
            f"local_size_z = {local[2]}) in;\n")
    if empty:
        return head + ("layout(std430, binding = 0) buffer P5Data { highp vec4 v[]; } p5_data;\n"
                       "void main() {\n  if (gl_LocalInvocationIndex == 4095u) "
                       "p5_data.v[0] = vec4(1.0);\n}\n")
    touch = ()
    n = max(smem_bytes // 16, slices * 8 + rows + 1)
    if lds:
        return head + f"shared {prec} vec4 p5_lds[{n}];\n" + synthetic_main(
            prec, rows, slices, it, lds=n)
    if smem_bytes > 0:
        head += f"shared vec4 p5_smem[{n}];\n"
        touch = (("p5_smem", "vec4"),)
    return head + synthetic_main(prec, rows, slices, it, touch)


class ShapeProbe(Probe):
    def __init__(self, reps):
        super().__init__()
        self.reps = reps
        n = max(reps, 1)
        self.queries = (ctypes.c_uint * n)()
        self.g.gen_queries(n, self.queries)

    def single(self, program, groups):
        """Fastest single dispatch (each in its own query; dependent ones)."""
        gl, g = self.gl, self.g
        gl.glUseProgram(program)
        gl.glDispatchCompute(*groups)
        gl.glFinish()
        for q in self.queries:
            g.begin_query(GL_TIME_ELAPSED_EXT, q)
            gl.glDispatchCompute(*groups)
            g.end_query(GL_TIME_ELAPSED_EXT)
            gl.glMemoryBarrier(0x2000)
        best = float("inf")
        result = ctypes.c_uint64()
        for q in self.queries:
            g.query_u64(q, GL_QUERY_RESULT_EXT, ctypes.byref(result))
            best = min(best, result.value / 1e3)
        return best

    def run(self, source, groups, uniforms=None):
        """µs (fastest single dispatch) of source on groups, or an error text."""
        program, err = self.g.compile(source)
        if program is None:
            return None, err
        heat(self.g, 25)
        ubo = self.bind(program, source, uniforms or [])
        us = self.single(program, groups)
        self.gl.glDeleteProgram(program)
        if ubo is not None:
            self.gl.glDeleteBuffers(1, ctypes.byref(ubo))
        return us, None

    def shared_arrays(self, source):
        """[(name, type, length)] of the dumped program's active shared arrays."""
        body = re.sub(r"\bvoid main\(\)", "void p5_real_main()", source)
        out = []
        for name in dict.fromkeys(re.findall(r"^\s*shared\s+(?:\w+\s+)*?(\w+)\s*\[", body,
                                             flags=re.M)):
            for t in TYPES:
                src = (body + "layout(std430, binding = 0) buffer P5Data { highp vec4 v[]; } "
                       f"p5_data;\nvoid main() {{ {t} p5_t = {name}[0]; "
                       f"p5_data.v[0] = vec4(float({name}.length())); }}\n")
                program, _ = self.g.compile(src)
                if program is None:
                    continue
                gl = self.gl
                gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, self.buffer(("len", 0)))
                gl.glUseProgram(program)
                gl.glDispatchCompute(1, 1, 1)
                n = int(np.frombuffer(self.g.read(self.buffer(("len", 0)), 16), np.float32)[0])
                gl.glDeleteProgram(program)
                out.append((name, t, n))
                break
        return body, out


def pct(flops, us):
    return flops / (us * 1e-6) / 1e12 / PEAK * 100 if us else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--match", action="append", default=[])
    parser.add_argument("--alt", action="append", default=[])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--no-real", action="store_true")
    # Only programs of at least this many GFLOP (a label's small twin left out).
    parser.add_argument("--min-gflop", type=float, default=0.0)
    args = parser.parse_args()
    files = []
    for p in args.paths:
        path = Path(p)
        files += sorted(path.glob("*.comp")) if path.is_dir() else [path]
    probe = ShapeProbe(args.reps)
    floor1, _ = probe.run(standalone((1, 1, 1), "highp", 1, 1, 1, empty=True), (1, 1, 1))
    src = standalone((1, 1, 1), "highp", 1, 1, 1, empty=True)
    program, _ = probe.g.compile(src)
    b2b = probe.g.time_dispatch(program, (1, 1, 1), reps=50) * 1e3
    print(f"floor: empty 1-invocation dispatch {floor1:.1f} us single, {b2b:.1f} us per "
          "dependent dispatch back to back")
    print("| layer | grid (groups x local, inv) | acc | FMA/inv | smem B/wg | real | empty | "
          "fma | smem | lds | alt |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for path in files:
        source, groups, uniforms, flops, label = parse(path)
        if args.match and not any(re.search(re.escape(m) + r"\b", label) for m in args.match):
            continue
        if flops < args.min_gflop * 1e9:
            continue
        d = defines(source)
        local = tuple(as_int(d, k, 1) for k in ("LOCAL_X", "LOCAL_Y", "LOCAL_Z"))
        prec = d.get("ACC_P", d.get("MATH_P", "highp"))
        prec = prec if prec in ("highp", "mediump") else "highp"
        rows = as_int(d, "PX", as_int(d, "TILE_ROWS", 1))
        slices = as_int(d, "TILE_SLICES", 1)
        inv = groups[0] * groups[1] * groups[2] * local[0] * local[1] * local[2]
        fma_inv = flops / 2 / inv if flops else 0
        per_iter = rows * slices * 16 + rows * 4
        it = max(1, round(fma_inv / per_iter / SMALL))
        body, arrays = probe.shared_arrays(source)
        smem = sum(SIZES[t] * n for _, t, n in arrays)
        cells = []
        real = None
        if not args.no_real:
            real, err = probe.run(source, groups, uniforms)
            cells.append(f"{real:.1f} ({pct(flops, real):.0f} %)" if real else err[:40])
        else:
            cells.append("-")
        empty, _ = probe.run(standalone(local, prec, rows, slices, it, empty=True), groups)
        cells.append(f"{empty:.1f}")
        fma, err = probe.run(standalone(local, prec, rows, slices, it), groups)
        cells.append(f"{fma:.1f} ({pct(flops, fma):.0f} %)" if fma else err[:60])
        touch = tuple((n, t) for n, t, _ in arrays)
        src = body + synthetic_main(prec, rows, slices, it, touch)
        sm, err = probe.run(src, groups)
        cells.append(f"{sm:.1f} ({pct(flops, sm):.0f} %)" if sm else err[:60])
        lds_it = max(1, round(fma_inv / (rows * slices * 16) / SMALL))
        ld, err = probe.run(standalone(local, prec, rows, slices, lds_it, smem, lds=True), groups)
        cells.append(f"{ld:.1f} ({pct(flops, ld):.0f} %)" if ld else err[:60])
        alts = []
        for alt in args.alt:
            lx, ly, lz, ar, asl, ab = (int(v) for v in alt.split("/"))
            a_fma = fma_inv * (ar * asl) / (rows * slices)
            a_inv = flops / 2 / a_fma if a_fma else 1
            a_groups = (max(1, round(a_inv / (lx * ly * lz))), 1, 1)
            a_it = max(1, round(a_fma / (ar * asl * 16 + ar * 4) / SMALL))
            us, err = probe.run(standalone((lx, ly, lz), prec, ar, asl, a_it,
                                           smem if ab < 0 else ab), a_groups)
            alts.append(f"{alt}: {us:.1f} ({pct(flops, us):.0f} %)" if us else f"{alt}: "
                        f"{err[:30]}")
        short = re.sub(r"^.*?(\S+ v\d+ @\d+)$", r"\1", label)
        print(f"| {short} {prec[:3]} | {groups[0]}x{groups[1]}x{groups[2]} x "
              f"{local[0]}x{local[1]}x{local[2]}, {inv} | {rows}x{slices} | {fma_inv:.0f} | "
              f"{smem} ({', '.join(f'{n} {t}[{k}]' for n, t, k in arrays)}) | "
              + " | ".join(cells) + " | " + "; ".join(alts) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
