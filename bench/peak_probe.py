#!/usr/bin/env python3
"""What arithmetic rate does this GLES driver give, and what can a convolution
reach? (issue 18, session 11, helper `peak`)

Talks to EGL/GLES directly (ctypes, bench/program_binary_probe.py's context;
no delegate). GPU times come from GL_EXT_disjoint_timer_query around REPS
back-to-back dispatches (so launch gaps and clock ramp-up wash out), best of
3 rounds.

  fma:  pure FMA loops, varying precision, scalar vs vec4, the number of
        independent chains, workgroup size, dispatch size, loop length and
        where the multiplier comes from (register, literal, per chain).
  conv: prototype direct convolutions on PHWC4 buffers of the style-transfer
        layer shapes: input read straight from the SSBO or staged through a
        shared-memory tile, weights from an SSBO or a uniform block, RX
        consecutive output pixels per invocation with the window's input row
        held in registers (each input vec4 feeds KS taps), highp or mediump.
        Every variant's output is checked against numpy.

    python3 bench/peak_probe.py [fma] [conv] [lds]
    python3 bench/peak_probe.py shape [bench/shape_probe.py's arguments]
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from program_binary_probe import (GL_DYNAMIC_COPY, GL_RENDERER,  # noqa: E402
                                  GL_SHADER_STORAGE_BUFFER, compile_compute, gl_context)

GL_UNIFORM_BUFFER = 0x8A11
GL_TIME_ELAPSED_EXT = 0x88BF
GL_QUERY_RESULT_EXT = 0x8866
GL_SHADER_STORAGE_BARRIER_BIT = 0x2000
GL_MAP_READ_BIT = 0x0001
GL_MAX_COMPUTE_SHARED_MEMORY_SIZE = 0x8262
GL_MAX_UNIFORM_BLOCK_SIZE = 0x8A30
SM_COUNT = 132  # H100 SXM5; the figure the % of peak below uses
REPS = 20
TILES = ((1, 32, 4), (2, 32, 4), (2, 16, 8))
# (shared input tile, weight source, #pragma optionNV(unroll all))
VARIANTS = [(s, w, u) for u in (False, True) for s, w in ((False, 'ssbo'), (False, 'ubo'),
            (True, 'ssbo'), (True, 'ubo'), (True, 'smemw'))]
# PEAK_SMALL=1: tiny sizes, to check the shaders on llvmpipe.
SMALL = 64 if os.environ.get("PEAK_SMALL") else 1


class Gl:
    def __init__(self):
        self.gl = gl_context()
        gl = self.gl
        egl = ctypes.CDLL("libEGL.so.1")
        egl.eglGetProcAddress.restype = ctypes.c_void_p
        egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]

        def proc(name, *args):
            return ctypes.CFUNCTYPE(None, *args)(egl.eglGetProcAddress(name))
        self.gen_queries = proc(b"glGenQueriesEXT", ctypes.c_int, ctypes.c_void_p)
        self.begin_query = proc(b"glBeginQueryEXT", ctypes.c_uint, ctypes.c_uint)
        self.end_query = proc(b"glEndQueryEXT", ctypes.c_uint)
        self.query_u64 = proc(b"glGetQueryObjectui64vEXT", ctypes.c_uint, ctypes.c_uint,
                              ctypes.c_void_p)
        self.query = ctypes.c_uint()
        self.gen_queries(1, ctypes.byref(self.query))
        gl.glMapBufferRange.restype = ctypes.c_void_p

    def compile(self, source: str):
        program, error = compile_compute(self.gl, source)
        return program, error and error[:300]

    def buffer(self, target, data: bytes | int, binding: int):
        gl = self.gl
        b = ctypes.c_uint()
        gl.glGenBuffers(1, ctypes.byref(b))
        gl.glBindBuffer(target, b)
        if isinstance(data, int):
            gl.glBufferData(target, ctypes.c_long(data), None, GL_DYNAMIC_COPY)
        else:
            gl.glBufferData(target, ctypes.c_long(len(data)), data, GL_DYNAMIC_COPY)
        gl.glBindBufferBase(target, binding, b)
        return b

    def read(self, b, size: int) -> bytes:
        gl = self.gl
        gl.glMemoryBarrier(0xFFFFFFFF)
        gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, b)
        p = gl.glMapBufferRange(GL_SHADER_STORAGE_BUFFER, ctypes.c_long(0), ctypes.c_long(size),
                                GL_MAP_READ_BIT)
        data = ctypes.string_at(p, size)
        gl.glUnmapBuffer(GL_SHADER_STORAGE_BUFFER)
        return data

    def time_dispatch(self, program, groups, reps=REPS, rounds=3):
        """GPU ms per dispatch (timer query over reps back-to-back), best round."""
        gl = self.gl
        gl.glUseProgram(program)
        gl.glDispatchCompute(*groups)  # warm-up
        gl.glFinish()
        best = float("inf")
        result = ctypes.c_uint64()
        for _ in range(rounds):
            self.begin_query(GL_TIME_ELAPSED_EXT, self.query.value)
            for _ in range(reps):
                gl.glDispatchCompute(*groups)
                gl.glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT)
            self.end_query(GL_TIME_ELAPSED_EXT)
            self.query_u64(self.query.value, GL_QUERY_RESULT_EXT, ctypes.byref(result))
            best = min(best, result.value / 1e6 / reps)
        return best

    def integer(self, name):
        v = ctypes.c_int()
        self.gl.glGetIntegerv(name, ctypes.byref(v))
        return v.value


FMA_HEAD = """#version 310 es
precision P float;
layout(local_size_x = LOCAL) in;
layout(std430, binding = 0) buffer Data { highp vec4 v[]; } data;
layout(std140, binding = 0) uniform Consts { highp vec4 u[16]; } consts;
void main() {
  uint i = gl_GlobalInvocationID.x;
  T m = T(data.v[0]);
  T c = T(data.v[1]);
  T x = T(data.v[2]) + T(float(i & 7u));
"""


def fma_source(p, t, chains, local, it, form):
    """Each chain j: a_j = FORM, written out (no arrays, so no loop the compiler
    might keep rolled). Every chain feeds the guarded store, all components."""
    comp = {"float": "", "vec2": ".xy", "vec4": ""}[t]
    head = FMA_HEAD.replace("P float", f"{p} float").replace("LOCAL", str(local))
    head = head.replace("T(", f"{t}(").replace("T ", f"{t} ")
    if t == "float":
        head = head.replace("data.v[0])", "data.v[0].x)").replace("data.v[1])", "data.v[1].x)")
        head = head.replace("data.v[2])", "data.v[2].x)")
    elif t == "vec2":
        head = head.replace("data.v[0])", "data.v[0].xy)").replace("data.v[1])", "data.v[1].xy)")
        head = head.replace("data.v[2])", "data.v[2].xy)")
    lines = [head]
    for j in range(chains):
        lines.append(f"  {t} a{j} = x + {t}({0.01 * (j + 1):.2f});")
        if form == "conv_reg":
            lines.append(f"  {t} w{j} = c + {t}({0.001 * (j + 1):.3f});")
    lines.append(f"  for (int k = 0; k < {it}; ++k) {{")
    for j in range(chains):
        u = f"{t}(consts.u[{j % 16}]{comp if t != 'float' else '.x'})"
        rhs = {"reg": f"a{j} * m + c", "lit": f"a{j} * {t}(0.999) + {t}(0.001)",
               "litmul": f"a{j} * {t}(0.999) + c", "litadd": f"a{j} * m + {t}(0.001)",
               "ubo": f"a{j} * {u} + c",
               "conv_reg": f"x * w{j} + a{j}", "conv_ubo": f"x * {u} + a{j}"}[form]
        lines.append(f"    a{j} = {rhs};")
    if form.startswith("conv"):
        lines.append(f"    x = x * m + c;")
    lines.append("  }")
    lines.append(f"  {t} s = " + " + ".join(f"a{j}" for j in range(chains)) + ";")
    total = {"float": "s", "vec2": "s.x + s.y", "vec4": "dot(s, vec4(1.0))"}[t]
    lines.append(f"  if (float({total}) == 12345.0) data.v[3 + int(i)] = vec4(float({total}));")
    lines.append("}")
    return "\n".join(lines) + "\n"


def heat(g: Gl, ms: float = 30.0):
    """Keeps the GPU busy for about ms before a timing: it idles at ~345 MHz and
    a short burst of dispatches ends before the clock has ramped to 1980."""
    gl = g.gl
    if SMALL > 1:
        return
    if not hasattr(g, "heater"):
        g.heater, _ = g.compile(fma_source("highp", "vec4", 8, 128, 256, "reg"))
        g.heat_buffer = g.buffer(GL_SHADER_STORAGE_BUFFER, (1 << 20) * 16 + 64, 3)
    gl.glUseProgram(g.heater)
    gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, g.heat_buffer)
    for _ in range(int(ms / 0.7) + 1):
        gl.glDispatchCompute(1 << 13, 1, 1)
    gl.glFinish()


def fma_probe(g: Gl):
    gl = g.gl
    big = g.buffer(GL_SHADER_STORAGE_BUFFER, (4 << 20) * 16 + 64, 0)
    init = (ctypes.c_float * 12)(0.999, 0.999, 0.999, 0.999, 0.001, 0.002, 0.003, 0.004,
                                 0.5, 0.25, 0.125, 0.0625)
    gl.glBufferSubData(GL_SHADER_STORAGE_BUFFER, ctypes.c_long(0), ctypes.c_long(48), init)
    consts = (ctypes.c_float * 64)(*([0.999, 0.998, 0.997, 0.996] * 16))
    ubo = g.buffer(GL_UNIFORM_BUFFER, bytes(consts), 0)
    base = dict(p="highp", t="vec4", chains=8, local=128, inv=1 << 20, it=512, form="reg")
    cases = [("base: a = a * m + c, registers", {}),
             ("iter 4096 (8x longer)", dict(it=4096)), ("4M invocations", dict(inv=4 << 20)),
             ("local 32", dict(local=32)), ("local 256", dict(local=256)),
             ("local 1024", dict(local=1024)),
             ("2 chains", dict(chains=2, it=2048)), ("4 chains", dict(chains=4, it=1024)),
             ("16 chains", dict(chains=16, it=256)),
             ("float 8 chains", dict(t="float", it=2048)),
             ("float 32 chains", dict(t="float", chains=32, it=512)),
             ("vec2 16 chains", dict(t="vec2", chains=16, it=512)),
             ("a * 0.999 + 0.001 (2 literals)", dict(form="lit")),
             ("a * 0.999 + c", dict(form="litmul")), ("a * m + 0.001", dict(form="litadd")),
             ("a * ubo_j + c (uniform block)", dict(form="ubo")),
             ("conv-like: a_j += x * w_j, registers", dict(form="conv_reg")),
             ("conv-like: a_j += x * ubo_j", dict(form="conv_ubo")),
             ("mediump base", dict(p="mediump")),
             ("mediump 2 literals", dict(p="mediump", form="lit")),
             ("mediump conv-like registers", dict(p="mediump", form="conv_reg")),
             ("mediump conv-like ubo", dict(p="mediump", form="conv_ubo")),
             ("mediump float 32 chains", dict(p="mediump", t="float", chains=32))]
    print("| fma variant | ms/dispatch | TFLOP/s | % of 67 | % of 134 |")
    print("|---|---|---|---|---|")
    for name, change in cases:
        c = {**base, **change}
        width = {"float": 1, "vec2": 2, "vec4": 4}[c["t"]]
        it = max(c["it"] // SMALL, 1)
        src = fma_source(c["p"], c["t"], c["chains"], c["local"], it, c["form"])
        program, err = g.compile(src)
        if program is None:
            print(f"| {name} | {err} | | | |")
            continue
        inv = c["inv"] // SMALL
        gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, big)
        heat(g, 20)
        gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, big)
        ms = max(g.time_dispatch(program, (inv // c["local"], 1, 1), reps=10), 1e-6)
        tf = 2.0 * width * c["chains"] * it * inv / (ms * 1e-3) / 1e12
        print(f"| {name} | {ms:.3f} | {tf:.1f} | {tf / 67 * 100:.0f} % | {tf / 134 * 100:.0f} % |",
              flush=True)
    gl.glDeleteBuffers(1, ctypes.byref(big))
    gl.glDeleteBuffers(1, ctypes.byref(ubo))


CONV = """#version 310 es
precision highp float;
precision highp int;
layout(local_size_x = LX, local_size_y = LY) in;
layout(std430, binding = 0) readonly buffer In { highp vec4 v[]; } inp;
layout(std430, binding = 1) writeonly buffer Out { highp vec4 v[]; } outp;
#ifdef UBO_W
layout(std140, binding = 0) uniform Wt { highp vec4 w[NWVEC]; } wts;
#define WT(i) wts.w[i]
#elif defined(SMEM_W)
// The group's weights staged once per workgroup (read as broadcasts).
layout(std430, binding = 2) readonly buffer Wt { highp vec4 w[]; } wts;
#define NW_GROUP (KS * KS * IN_S * TS * 4)
shared MATH_P vec4 wtile[NW_GROUP];
#define WT(i) wtile[(i) - og * NW_GROUP]
#else
#define WT(i) wts.w[i]
layout(std430, binding = 2) readonly buffer Wt { highp vec4 w[]; } wts;
#endif
#define PAD (KS / 2)
#define TW (LX * RX)
#define SW (TW + KS - 1)
#define SH (LY + KS - 1)
// c + c / 8: lanes RX apart read distinct banks (RX = 1, 2, 4, 8).
#define SKEW(c) ((c) + (c) / 8)
#define SWP (SKEW(SW - 1) + 1)
#ifdef SMEM
shared MATH_P vec4 tile[SH * SWP];
#endif
void main() {
  int lx = int(gl_LocalInvocationID.x);
  int ly = int(gl_LocalInvocationID.y);
  int ox0 = int(gl_WorkGroupID.x) * TW;
  int oy0 = int(gl_WorkGroupID.y) * LY;
  int og = int(gl_WorkGroupID.z);
  int oy = oy0 + ly;
  int ox = ox0 + lx * RX;
  MATH_P vec4 acc[RX * TS];
  for (int i = 0; i < RX * TS; ++i) acc[i] = vec4(0.0);
#ifdef SMEM_W
  for (int i = ly * LX + lx; i < NW_GROUP; i += LX * LY) wtile[i] = wts.w[og * NW_GROUP + i];
  barrier();
#endif
  for (int s = 0; s < IN_S; ++s) {
#ifdef SMEM
    barrier();
    for (int i = ly * LX + lx; i < SH * SW; i += LX * LY) {
      int r = i / SW;
      int c = i - r * SW;
      int y = oy0 - PAD + r;
      int x = ox0 - PAD + c;
      bool inside = y >= 0 && y < H && x >= 0 && x < W;
      tile[r * SWP + SKEW(c)] = inside ? inp.v[(s * H + y) * W + x] : vec4(0.0);
    }
    barrier();
#endif
    for (int ky = 0; ky < KS; ++ky) {
      MATH_P vec4 row[RX + KS - 1];
#ifdef SMEM
      for (int j = 0; j < RX + KS - 1; ++j) row[j] = tile[(ly + ky) * SWP + SKEW(lx * RX + j)];
#else
      int y = oy - PAD + ky;
      bool yin = y >= 0 && y < H;
      for (int j = 0; j < RX + KS - 1; ++j) {
        int x = ox - PAD + j;
        row[j] = yin && x >= 0 && x < W ? inp.v[(s * H + y) * W + x] : vec4(0.0);
      }
#endif
      for (int kx = 0; kx < KS; ++kx) {
        int wi = (((og * KS + ky) * KS + kx) * IN_S + s) * TS * 4;
        for (int o = 0; o < TS; ++o) {
          MATH_P vec4 w0 = WT(wi + o * 4);
          MATH_P vec4 w1 = WT(wi + o * 4 + 1);
          MATH_P vec4 w2 = WT(wi + o * 4 + 2);
          MATH_P vec4 w3 = WT(wi + o * 4 + 3);
          for (int p = 0; p < RX; ++p) {
            MATH_P vec4 x = row[p + kx];
            acc[p * TS + o] += w0 * x.x + w1 * x.y + w2 * x.z + w3 * x.w;
          }
        }
      }
    }
  }
  if (oy >= H) return;
  for (int p = 0; p < RX; ++p) {
    if (ox + p >= W) break;
    for (int o = 0; o < TS; ++o) outp.v[((og * TS + o) * H + oy) * W + ox + p] = acc[p * TS + o];
  }
}
"""

# name, H=W, KS, in channels, out channels (the style-transfer layers)
LAYERS = [("@256 3x3 16->8", 384, 3, 16, 8), ("@240 3x3 32->16", 192, 3, 32, 16),
          ("@3 9x9 3->8", 384, 9, 3, 8), ("@272 9x9 8->3", 384, 9, 8, 3)]


def reference(x, w, ks):
    """x [H][W][Cin], w [ks][ks][Cin][Cout] -> [H][W][Cout], same padding."""
    h, wd, _ = x.shape
    pad = ks // 2
    xp = np.pad(x, ((pad, pad), (pad, pad), (0, 0)))
    out = np.zeros((h, wd, w.shape[3]), np.float64)
    for ky in range(ks):
        for kx in range(ks):
            out += xp[ky:ky + h, kx:kx + wd, :] @ w[ky, kx]
    return out


def conv_probe(g: Gl, only=None):
    gl = g.gl
    smem_limit = g.integer(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE)
    ubo_limit = g.integer(GL_MAX_UNIFORM_BLOCK_SIZE)
    print(f"max shared {smem_limit} B, max uniform block {ubo_limit} B")
    rng = np.random.default_rng(1)
    rows = []
    for lname, hw, ks, cin, cout in LAYERS:
        hw = hw // SMALL * 4 if SMALL > 1 else hw
        in_s, out_s = (cin + 3) // 4, (cout + 3) // 4
        x = rng.standard_normal((hw, hw, cin)).astype(np.float32)
        w = (rng.standard_normal((ks, ks, cin, cout)) / np.sqrt(ks * ks * cin)).astype(np.float32)
        ref = reference(x.astype(np.float64), w.astype(np.float64), ks)
        xs = np.zeros((in_s, hw, hw, 4), np.float32)
        for c in range(cin):
            xs[c // 4, :, :, c % 4] = x[:, :, c]
        flops = 2.0 * hw * hw * ks * ks * cin * cout
        inb = g.buffer(GL_SHADER_STORAGE_BUFFER, xs.tobytes(), 0)
        outb = g.buffer(GL_SHADER_STORAGE_BUFFER, out_s * hw * hw * 16, 1)
        for ts in [min(out_s, 2)]:
            groups_z = out_s // ts
            # [og][ky][kx][s][o][k] vec4: vec4 k of slice o = weights of input lane k.
            wp = np.zeros((groups_z, ks, ks, in_s, ts, 4, 4), np.float32)
            for ci in range(cin):
                for co in range(cout):
                    wp[co // 4 // ts, :, :, ci // 4, (co // 4) % ts, ci % 4, co % 4] = w[:, :, ci, co]
            wbytes = wp.tobytes()
            wb = g.buffer(GL_SHADER_STORAGE_BUFFER, wbytes, 2)
            ub = g.buffer(GL_UNIFORM_BUFFER, wbytes, 0) if len(wbytes) <= ubo_limit else None
            for smem, wsrc, unroll in VARIANTS:
                ubo = wsrc == "ubo"
                if ubo and ub is None:
                    continue
                if True:
                    for rx, lx, ly in TILES:
                        shared_bytes = (ly + ks - 1) * ((lx * rx + ks - 1) * 9 // 8 + 2) * 16
                        shared_bytes = shared_bytes if smem else 0
                        if wsrc == "smemw":
                            shared_bytes += ks * ks * in_s * ts * 64
                        if shared_bytes > smem_limit:
                            continue
                        for prec in ("highp", "mediump"):
                            defs = (f"#define LX {lx}\n#define LY {ly}\n#define RX {rx}\n"
                                    f"#define TS {ts}\n#define KS {ks}\n#define IN_S {in_s}\n"
                                    f"#define H {hw}\n#define W {hw}\n#define MATH_P {prec}\n"
                                    f"#define NWVEC {len(wbytes) // 16}\n")
                            defs += "#define SMEM\n" if smem else ""
                            defs += "#define UBO_W\n" if ubo else ""
                            defs += "#define SMEM_W\n" if wsrc == "smemw" else ""
                            src = CONV.replace("precision highp int;\n",
                                               "precision highp int;\n" + defs)
                            if unroll:
                                src = src.replace("#version 310 es\n", "#version 310 es\n"
                                                  "#pragma optionNV(unroll all)\n")
                            name = (f"{'smem' if smem else 'direct'} {wsrc} "
                                    f"{'unroll ' if unroll else ''}rx{rx} {lx}x{ly} ts{ts} {prec}")
                            if only and only not in name:
                                continue
                            program, err = g.compile(src)
                            if program is None:
                                rows.append((lname, name, err, "", ""))
                                continue
                            groups = (-(-hw // (lx * rx)), -(-hw // ly), groups_z)
                            heat(g)
                            gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, inb)
                            if ub is not None:
                                gl.glBindBufferBase(GL_UNIFORM_BUFFER, 0, ub)
                            ms = max(g.time_dispatch(program, groups, reps=REPS // SMALL + 1), 1e-6)
                            got = np.frombuffer(g.read(outb, out_s * hw * hw * 16), np.float32)
                            got = got.reshape(out_s, hw, hw, 4).transpose(1, 2, 0, 3).reshape(
                                hw, hw, out_s * 4)[:, :, :cout]
                            err = float(np.abs(got - ref).max())
                            tf = flops / (ms * 1e-3) / 1e12
                            rows.append((lname, name, f"{ms * 1e3:.1f}", f"{tf:.1f}",
                                         f"{err:.1e}"))
                            print(f"{lname} | {name} | {ms * 1e3:.1f} us | {tf:.1f} TF | "
                                  f"err {err:.1e}", flush=True)
                            gl.glDeleteProgram(program)
            gl.glDeleteBuffers(1, ctypes.byref(wb))
            if ub is not None:
                gl.glDeleteBuffers(1, ctypes.byref(ub))
        gl.glDeleteBuffers(1, ctypes.byref(inb))
        gl.glDeleteBuffers(1, ctypes.byref(outb))
    print("| layer | variant | us | TFLOP/s | max err |")
    print("|---|---|---|---|---|")
    for layer in LAYERS:
        best = sorted((r for r in rows if r[0] == layer[0] and r[3]),
                      key=lambda r: -float(r[3]))
        for r in best[:6]:
            print("| " + " | ".join(r) + " |")


LDS = """#version 310 es
precision P float;
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer Data { highp vec4 v[]; } data;
shared vec4 wsm[256];
void main() {
  uint i = gl_GlobalInvocationID.x;
  int lid = int(gl_LocalInvocationID.x);
  wsm[lid] = data.v[0] * float(lid & 7) + data.v[1];
  barrier();
  vec4 x0 = data.v[2] + vec4(float(i & 7u));
"""


def lds_source(p, r, w, it, spread):
    """Shared-memory vec4 reads against FMAs, as conv2d_window.comp's taps: per
    iteration W weight vec4s read (the same address for every invocation, or
    each its own when spread), each multiplied into R input vec4s (R x W vec4
    accumulators, 4 FMAs each). If a broadcast vec4 read costs the SM's 128
    B/clock datapath 4 clocks like any warp-wide vec4 read, R = 1, 2, 4 reach
    25, 50, 100 % of the FMA rate; if a broadcast costs 1, all ~100 %."""
    lines = [LDS.replace("P float", f"{p} float")]
    for k in range(1, r):
        lines.append(f"  vec4 x{k} = x0 + vec4({0.01 * k:.2f});")
    for k in range(r):
        for j in range(w):
            lines.append(f"  vec4 a{k}_{j} = vec4({0.001 * (k * w + j):.3f});")
    lines.append(f"  for (int k = 0; k < {it}; ++k) {{")
    for j in range(w):
        offset = " + lid" if spread else ""
        lines.append(f"    vec4 w{j} = wsm[(k * {w} + {j}{offset}) & 255];")
        for k in range(r):
            lines.append(f"    a{k}_{j} += x{k} * w{j};")
    lines.append("  }")
    total = " + ".join(f"a{k}_{j}" for k in range(r) for j in range(w))
    lines.append(f"  vec4 s = {total};")
    lines.append("  if (dot(s, vec4(1.0)) == 12345.0) data.v[3 + int(i)] = s;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def lds_probe(g: Gl):
    gl = g.gl
    big = g.buffer(GL_SHADER_STORAGE_BUFFER, (1 << 20) * 16 + 64, 0)
    print("| shared-memory probe (W=4 weight vec4s per step) | ms | TFLOP/s | % of 67 |")
    print("|---|---|---|---|")
    inv, w = (1 << 20) // SMALL, 4
    for p, r, spread in [("highp", 1, False), ("highp", 2, False), ("highp", 4, False),
                         ("highp", 8, False), ("highp", 1, True), ("highp", 4, True),
                         ("mediump", 1, False), ("mediump", 4, False)]:
        it = max(512 // r // SMALL, 1)
        program, err = g.compile(lds_source(p, r, w, it, spread))
        name = f"{p} R={r} {'own addresses' if spread else 'broadcast'}"
        if program is None:
            print(f"| {name} | {err} | | |")
            continue
        heat(g, 20)
        gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, big)
        ms = max(g.time_dispatch(program, (inv // 256, 1, 1), reps=10), 1e-6)
        tf = 2.0 * 4 * r * w * it * inv / (ms * 1e-3) / 1e12
        print(f"| {name} | {ms:.3f} | {tf:.1f} | {tf / 67 * 100:.0f} % |", flush=True)
        gl.glDeleteProgram(program)
    gl.glDeleteBuffers(1, ctypes.byref(big))


def main() -> int:
    if sys.argv[1:2] == ["shape"]:  # the shapes' own ceilings (bench/shape_probe.py)
        import shape_probe
        sys.argv = sys.argv[:1] + sys.argv[2:]
        return shape_probe.main()
    g = Gl()
    print(f"renderer: {g.gl.glGetString(GL_RENDERER).decode()}")
    what = sys.argv[1:] or ["fma", "conv"]
    start = time.time()
    if "fma" in what:
        fma_probe(g)
    if "lds" in what:
        lds_probe(g)
    if "conv" in what:
        conv_probe(g, next((a[5:] for a in what if a.startswith("only=")), None))
    print(f"probe took {time.time() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
