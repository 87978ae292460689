#!/usr/bin/env python3
"""Style transfer's 9x9 layers in other instruction streams (issue 18, session
18, helper `win7`): standalone kernels of the real @272 (9x9 8->3) and @3 (9x9
3->8) shapes at 384x384, random data, every output checked against numpy.

Session 11's FMA probe ("peak, session 11" in docs/perf/log.md): register-
operand FFMA loops run at 37-54 % of the fp32 peak, two literal operands 95 %,
`a * 0.999 + c` 63 %, and 32 independent float chains 77 %. peak5's shape
probe: the delegate's window kernel holds 2 px x vec3 = 6 float chains on @272.
So each variant here changes how many chains an invocation holds and where the
weights come from:
  px      output pixels per invocation (consecutive in x); with `acc s` every
          output channel of every pixel is its own float chain (@272: 3 x px,
          @3: 8 x px), with `acc v` a vec3 / vec4 per pixel and output slice
          (the delegate's form);
  w       smem: staged once per workgroup in shared memory, read as broadcast
          vec4s (the delegate's form); ubo: a uniform block, indexed by
          constants when ky is written out (constant-bank FFMA operands);
          lit: the weights written into the code as float literals (FFMA
          immediates; ky written out, every index constant); const: a const
          vec4 array in the shader (with kyu every index into it constant:
          the form a delegate define can carry), else a dynamic index;
  kyu     ky written out (else a loop; kx, the pixels and channels always are).
The input window of one input slice at a time sits in shared memory (the
slices written out, barriers between), its rows skewed so that lanes PX apart
read distinct banks. Timing: GL_EXT_disjoint_timer_query over 20 back-to-back
dispatches after bench/peak_probe.py's heat, --rounds rounds over all variants
(min and median); `setup` is compile +
link + first dispatch (the driver's compile time; the code grows with px).

    python3 bench/window_probe.py [--layer 272|3] [--only TEXT] [--max-seconds S]
    PEAK_SMALL=1 ...   (48x48 maps: checks the shaders on llvmpipe)
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peak_probe import (GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, GL_SHADER_STORAGE_BUFFER,  # noqa: E402
                        GL_UNIFORM_BUFFER, SMALL, Gl, heat, reference)

PEAK = 67.0  # TFLOP/s fp32 FMA, H100 SXM / H200 (the issue's figure)
K = 9
# name: (map size, input channels, output channels)
LAYERS = {"272": (384, 8, 3), "3": (384, 3, 8)}


def lit(v: float) -> str:
    """A float32 as a GLSL literal that parses back to the same float."""
    s = f"{float(v):.9g}"
    if "e" not in s and "." not in s:
        s += ".0"
    return f"({s})" if s.startswith("-") else s


class Variant:
    def __init__(self, layer, px=2, lx=16, ly=8, w="smem", kyu=False, acc="s", prec="highp"):
        self.layer, self.px, self.lx, self.ly = layer, px, lx, ly
        self.w, self.kyu, self.acc, self.prec = w, kyu or w == "lit", acc, prec

    @property
    def name(self):
        return (f"@{self.layer} px{self.px} {self.lx}x{self.ly} w={self.w}"
                f"{' kyu' if self.kyu else ''} acc={self.acc} {self.prec[:3]}")


def smem_bytes(v: Variant, cin, cout):
    ww = v.lx * v.px + K - 1
    pad = 0 if v.px % 2 else 1
    wp = ww + (ww - 1) // v.px * pad + 1
    window = (v.ly + K - 1) * wp * 16
    weights = K * K * cin * ((cout + 3) // 4) * 16 if v.w == "smem" else 0
    return window + weights


def source(v: Variant, hw, cin, cout, wts):
    """The variant's GLSL. wts [ky][kx][cin][cout] float32."""
    px, lx, ly = v.px, v.lx, v.ly
    in_s, out_s = (cin + 3) // 4, (cout + 3) // 4
    ww = lx * px + K - 1
    wh = ly + K - 1
    pad = 0 if px % 2 else 1  # an odd stride in vec4s between lanes px apart
    wp = ww + (ww - 1) // px * pad + 1
    nwv = K * K * cin * out_s
    p = v.prec
    L = ["#version 310 es", f"precision {p} float;", "precision highp int;",
         f"layout(local_size_x = {lx}, local_size_y = {ly}) in;",
         "layout(std430, binding = 0) readonly buffer In { highp vec4 v[]; } inp;",
         "layout(std430, binding = 1) writeonly buffer Out { highp vec4 v[]; } outp;",
         f"shared {p} vec4 win[{wh * wp}];",
         f"#define SK(c) ((c) + ((c) / {px}) * {pad})"]
    packed = np.zeros((K, K, cin, out_s * 4), np.float32)
    packed[:, :, :, :cout] = wts
    flat = packed.reshape(-1, 4)
    if v.w == "smem":
        L += ["layout(std430, binding = 2) readonly buffer Wt { highp vec4 v[]; } wts;",
              f"shared {p} vec4 wsm[{nwv}];"]
        wsrc = "wsm"
    elif v.w == "ubo":
        L.append(f"layout(std140, binding = 0) uniform Wt {{ highp vec4 u[{nwv}]; }} wts;")
        wsrc = "wts.u"
    elif v.w == "const":
        items = ",".join(f"vec4({','.join(lit(x) for x in row)})" for row in flat)
        L.append(f"const highp vec4 WC[{nwv}] = vec4[{nwv}]({items});")
        wsrc = "WC"
    else:
        wsrc = None
    L += ["void main() {",
          "  int lx = int(gl_LocalInvocationID.x), ly = int(gl_LocalInvocationID.y);",
          f"  int inv = ly * {lx} + lx;",
          f"  int ox0 = int(gl_WorkGroupID.x) * {lx * px}, oy0 = int(gl_WorkGroupID.y) * {ly};",
          f"  int c0 = lx * {px};"]
    if v.w == "smem":
        L.append(f"  for (int i = inv; i < {nwv}; i += {lx * ly}) wsm[i] = wts.v[i];")
    lanes_of = [min(4, cout - 4 * o) for o in range(out_s)]
    vt = {1: "float", 2: "vec2", 3: "vec3", 4: "vec4"}
    sw = "xyzw"
    if v.acc == "s":
        for q in range(px):
            L.append("  " + p + " float " + ", ".join(f"a{q}_{c} = 0.0" for c in range(cout)) + ";")
    else:
        for q in range(px):
            for o in range(out_s):
                L.append(f"  {p} {vt[lanes_of[o]]} a{q}_{o} = {vt[lanes_of[o]]}(0.0);")
    for s in range(in_s):
        L += ["  barrier();",
              f"  for (int i = inv; i < {wh * ww}; i += {lx * ly}) {{",
              f"    int r = i / {ww}, c = i - r * {ww};",
              "    int y = oy0 - 4 + r, x = ox0 - 4 + c;",
              f"    bool inside = y >= 0 && y < {hw} && x >= 0 && x < {hw};",
              f"    win[r * {wp} + SK(c)] = inside ? inp.v[({s} * {hw} + y) * {hw} + x] : vec4(0.0);",
              "  }", "  memoryBarrierShared();", "  barrier();"]
        kys = [str(k) for k in range(K)] if v.kyu else ["ky"]
        if not v.kyu:
            L.append(f"  for (int ky = 0; ky < {K}; ++ky) {{")
        for ky_i, ky in enumerate(kys):
            L.append("  {")
            for j in range(px + K - 1):
                L.append(f"    {p} vec4 r{j} = win[(ly + {ky}) * {wp} + SK(c0 + {j})];")
            for kx in range(K):
                for k in range(4):
                    ci = 4 * s + k
                    if ci >= cin:
                        continue
                    L.append("    {")
                    if wsrc:
                        for o in range(out_s):
                            idx = f"(({ky} * {K} + {kx}) * {cin} + {ci}) * {out_s} + {o}"
                            L.append(f"      {p} vec4 w{o} = {wsrc}[{idx}];")
                    for q in range(px):
                        xv = f"r{q + kx}.{sw[k]}"
                        if v.acc == "s":
                            for c in range(cout):
                                wexpr = (lit(wts[ky_i, kx, ci, c]) if not wsrc
                                         else f"w{c // 4}.{sw[c % 4]}")
                                L.append(f"      a{q}_{c} += {xv} * {wexpr};")
                        else:
                            for o in range(out_s):
                                n = lanes_of[o]
                                if wsrc:
                                    wexpr = f"w{o}" + ("" if n == 4 else "." + sw[:n])
                                else:
                                    wexpr = f"{vt[n]}(" + ", ".join(
                                        lit(wts[ky_i, kx, ci, 4 * o + c]) for c in range(n)) + ")"
                                L.append(f"      a{q}_{o} += {xv} * {wexpr};")
                    L.append("    }")
            L.append("  }")
        if not v.kyu:
            L.append("  }")
    L.append(f"  int oy = oy0 + ly;")
    for q in range(px):
        L.append(f"  if (oy < {hw} && ox0 + c0 + {q} < {hw}) {{")
        for o in range(out_s):
            if v.acc == "s":
                comps = [f"a{q}_{4 * o + c}" if 4 * o + c < cout else "0.0" for c in range(4)]
                val = f"vec4({', '.join(comps)})"
            else:
                n = lanes_of[o]
                val = f"a{q}_{o}" if n == 4 else f"vec4(a{q}_{o}{', 0.0' * (4 - n)})"
            L.append(f"    outp.v[({o} * {hw} + oy) * {hw} + ox0 + c0 + {q}] = {val};")
        L.append("  }")
    L.append("}")
    return "\n".join(L) + "\n", flat


def variants():
    """In the order measured (a time budget keeps the first): each layer's
    delegate-like form, more chains, literals, then the rest."""
    A = lambda **kw: Variant("272", **kw)  # noqa: E731
    B = lambda **kw: Variant("3", **kw)  # noqa: E731
    return [A(px=2, acc="v"), A(px=3), A(px=3, w="const", kyu=True),
            B(px=3, w="const", kyu=True), A(px=8, lx=8), A(px=3, w="lit"), A(px=4, w="lit"),
            A(px=8, lx=8, w="lit"), B(px=2, acc="v"), B(px=4), B(px=2, w="lit"),
            B(px=4, w="lit"), A(px=4, w="const", kyu=True), B(px=4, w="const", kyu=True),
            A(px=2, w="const", kyu=True), A(px=4, w="ubo", kyu=True), B(px=4, w="ubo", kyu=True),
            A(px=2), A(px=4), A(px=9, lx=8), A(px=2, w="lit"), B(px=3), B(px=3, w="lit"),
            A(px=2, acc="v", prec="mediump"), A(px=4, w="lit", acc="v", prec="mediump"),
            B(px=2, acc="v", prec="mediump"), B(px=4, w="lit", acc="v", prec="mediump"),
            A(px=4, w="lit", prec="mediump"),
            A(px=8, lx=8, w="ubo", kyu=True), A(px=8, lx=8, w="ubo"), A(px=8, lx=8, w="const"),
            B(px=4, w="const"), B(px=4, acc="v"), A(px=3, w="lit", ly=4), A(px=4, w="lit", lx=8),
            B(px=4, w="lit", lx=8), A(px=4, acc="v", prec="mediump"),
            A(px=8, lx=8, w="lit", acc="v", prec="mediump"), B(px=4, acc="v", prec="mediump"),
            # win8, session 19: 1 pixel per invocation (the delegate's @272 since session 18)
            B(px=1, w="lit"), B(px=1, w="lit", acc="v"), A(px=1, w="lit")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layer", action="append", default=[])
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--max-seconds", type=float, default=1e9)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    start = time.time()
    g = Gl()
    gl = g.gl
    limit = g.integer(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE)
    rng = np.random.default_rng(18)
    rows = []
    data = {}
    for layer in args.layer or ["272", "3"]:
        hw, cin, cout = LAYERS[layer]
        hw = hw // SMALL * 8 if SMALL > 1 else hw
        in_s, out_s = (cin + 3) // 4, (cout + 3) // 4
        x = rng.standard_normal((hw, hw, cin)).astype(np.float32)
        w = (rng.standard_normal((K, K, cin, cout)) / np.sqrt(K * K * cin)).astype(np.float32)
        ref = reference(x.astype(np.float64), w.astype(np.float64), K)
        xs = np.zeros((in_s, hw, hw, 4), np.float32)
        for c in range(cin):
            xs[c // 4, :, :, c % 4] = x[:, :, c]
        data[layer] = (hw, cin, cout, w, ref, xs.tobytes())
    built = []  # every selected variant compiled and run once first
    for v in variants():
        if v.layer not in data or (args.only and not any(o in v.name for o in args.only)):
            continue
        if time.time() - start > args.max_seconds:
            print(f"{v.name} | skipped: time", flush=True)
            continue
        hw, cin, cout, w, ref, xs = data[v.layer]
        out_s = (cout + 3) // 4
        if smem_bytes(v, cin, cout) > limit:
            print(f"{v.name} | skipped: {smem_bytes(v, cin, cout)} B of shared memory")
            continue
        src, flat = source(v, hw, cin, cout, w)
        nan = np.full(out_s * hw * hw * 4, np.nan, np.float32).tobytes()
        bufs = (g.buffer(GL_SHADER_STORAGE_BUFFER, xs, 0),
                g.buffer(GL_SHADER_STORAGE_BUFFER, nan, 1),  # unwritten outputs show as errors
                g.buffer(GL_SHADER_STORAGE_BUFFER, flat.tobytes(), 2),
                g.buffer(GL_UNIFORM_BUFFER, flat.tobytes(), 0))
        t0 = time.time()
        program, err = g.compile(src)
        groups = (-(-hw // (v.lx * v.px)), -(-hw // v.ly), 1)
        if program is None:
            print(f"{v.name} | compile error {err[:200]}", flush=True)
            continue
        gl.glUseProgram(program)
        gl.glDispatchCompute(*groups)
        gl.glFinish()
        built.append((v, program, bufs, groups, time.time() - t0, len(src), []))
    # --rounds rounds over all variants (a neighbour's load or a clock change
    # hits every variant alike; the fastest round counts).
    for _ in range(args.rounds):
        for v, program, bufs, groups, _, _, times in built:
            heat(g, 10)
            for i, b in enumerate(bufs[:3]):
                gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, i, b)
            gl.glBindBufferBase(GL_UNIFORM_BUFFER, 0, bufs[3])
            times.append(g.time_dispatch(program, groups, reps=max(args.reps // SMALL, 2),
                                         rounds=1) * 1e3)
    for v, program, bufs, groups, setup, size, times in built:
        hw, cin, cout, w, ref, xs = data[v.layer]
        out_s = (cout + 3) // 4
        flops = 2.0 * hw * hw * K * K * cin * cout
        # Read back only after the timing: a buffer mapped for reading may be
        # moved to host memory by the driver, and then every dispatch writes
        # its outputs across PCIe (call 1: 5-15x slower rows).
        got = np.frombuffer(g.read(bufs[1], out_s * hw * hw * 16), np.float32)
        got = got.reshape(out_s, hw, hw, 4).transpose(1, 2, 0, 3).reshape(
            hw, hw, out_s * 4)[:, :, :cout]
        err = float(np.abs(got - ref).max())
        us = min(times)
        pct = flops / (us * 1e-6) / 1e12 / PEAK * 100 if us else 0.0
        rows.append((v.name, us, float(np.median(times)), pct, err, setup, size))
        gl.glDeleteProgram(program)
        for b in bufs:
            gl.glDeleteBuffers(1, ctypes.byref(b))
    print("| variant | µs min | µs median | % of 67 (min) | max err | setup s | source KB |")
    print("|---|---|---|---|---|---|---|")
    for name, us, med, pct, err, setup, size in rows:
        print(f"| {name} | {us:.1f} | {med:.1f} | {pct:.0f} % | {err:.0e} | {setup:.2f} | "
              f"{size // 1024} |")
    print(f"window_probe took {time.time() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
