#!/usr/bin/env python3
"""Style transfer's largest 3x3 layers in standalone shared-memory kernels
(issue 18, session 18, helper `tri7`): more accumulator chains per
invocation, 64-invocation workgroups, weights staged once, several input
slices per barrier, double-buffered tiles and weights as uniform-block or
literal operands, on the real shapes (@256 3x3 16->8 at 384x384, @240 3x3
32->16 at 192x192; same padding, PHWC4 buffers, the delegate's weight
packing [group][tap][slice][TS][4]), random data, every variant's output
checked against numpy.

Timed in bench/peak_probe.py's harness (as bench/gap_probe.py times the
delegate's dumped programs): timer query over back-to-back dispatches after
its heat, best of 3. Every loop of the generated kernels is written out
here (accumulators and window rows are scalars of their own: nothing the
compiler could keep in local memory).

A variant is NAME=KEY:VALUE,...: lx, ly (invocations), px (pixels along x
per invocation), ts (output slices per invocation), p (MATH_P: h/m), a
(ACC_P: h/m), w (weights: slice = staged per input slice as the delegate
does, once = all slices staged once per workgroup, ubo = uniform block, lit
= literals in the code, empty = an empty kernel of the grid), sb (input slices
staged per barrier step), db (1:
two tile buffers, one barrier per step, the next step's loads issued before
this step's FMAs), chain (1: one FMA per product, FMA_CHAIN's form).

    python3 bench/tri_probe.py [--layer @256] [--variant NAME=...]...

Session 19 (helper `tri8`): --timing also times each kernel as the delegate's
profiler does (`each`: a timer query per dispatch, the memory barrier inside it,
all read after the last; `out`: the barrier before the query), and --dump times
the delegate's dumped programs (TFLITE_GLES_X_DUMP_SHADERS; gap_probe.py's
bindings and edits, plus `spec`: the uniform shapes compiled in) the same ways.
"""

from __future__ import annotations

import argparse
import ctypes
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peak_probe import (GL_SHADER_STORAGE_BUFFER, GL_UNIFORM_BUFFER, SMALL, Gl,  # noqa: E402
                        heat, reference)
import gap_probe  # noqa: E402

GL_TIME_ELAPSED_EXT = 0x88BF
GL_QUERY_RESULT_EXT = 0x8866
TIMINGS = ("b2b", "each", "out")


def time_modes(g, jobs, reps, modes):
    """us per dispatch (per set of dispatches: jobs, a list of (program, groups), e.g. one
    program per slice group): b2b = peak_probe's (one query over reps back-to-back
    dispatches, a barrier between, best of 3 rounds); each = the delegate's profiler
    (egl/gpu_timer.cc, PartitionRuntime::DispatchProfiled: a query per dispatch with
    glMemoryBarrier inside it, read after the last; a set's queries summed), min over reps;
    out = each with the barrier before the query."""
    gl = g.gl
    res = {}
    r = ctypes.c_uint64()
    for program, groups in jobs:  # warm-up
        gl.glUseProgram(program)
        gl.glDispatchCompute(*groups)
    gl.glFinish()
    if "b2b" in modes:
        best = float("inf")
        for _ in range(3):
            g.begin_query(GL_TIME_ELAPSED_EXT, g.query.value)
            for _ in range(reps):
                for program, groups in jobs:
                    gl.glUseProgram(program)
                    gl.glDispatchCompute(*groups)
                    gl.glMemoryBarrier(0x2000)  # GL_SHADER_STORAGE_BARRIER_BIT
            g.end_query(GL_TIME_ELAPSED_EXT)
            g.query_u64(g.query.value, GL_QUERY_RESULT_EXT, ctypes.byref(r))
            best = min(best, r.value / 1e3 / reps)
        res["b2b"] = best
    for mode in ("each", "out"):
        if mode not in modes:
            continue
        n = reps * len(jobs)
        qs = (ctypes.c_uint * n)()
        g.gen_queries(n, qs)
        for i in range(n):
            program, groups = jobs[i % len(jobs)]
            gl.glUseProgram(program)
            if mode == "out":
                gl.glMemoryBarrier(0x2000)
            g.begin_query(GL_TIME_ELAPSED_EXT, qs[i])
            if mode == "each":
                gl.glMemoryBarrier(0x2000)
            gl.glDispatchCompute(*groups)
            g.end_query(GL_TIME_ELAPSED_EXT)
        vals = []
        for i in range(n):
            g.query_u64(qs[i], GL_QUERY_RESULT_EXT, ctypes.byref(r))
            vals.append(r.value / 1e3)
        k = len(jobs)
        res[mode] = min(sum(vals[j * k:(j + 1) * k]) for j in range(reps))
    return res


def specialize(source, uniforms):
    """The dumped program with its uniform block's members as #defines of the dumped values
    (as Dispatch::specialize compiles shapes in; SPECIALIZED 1: div_mod divides as ints)."""
    m = re.search(r"layout\(std140, binding = 0\) uniform DispatchUniforms \{(.*?)\};", source,
                  flags=re.S)
    if not m:
        return source
    names = re.findall(r"highp int (\w+);", m.group(1))
    defs = "".join(f"#define {n} {v}\n" for n, v in zip(names, uniforms))
    source = source[:m.start()] + defs + source[m.end():]
    return source.replace("#define SPECIALIZED 0", "#define SPECIALIZED 1")


def run_dumps(args) -> int:
    """--dump: each file's program (and its --edit variants) timed every --timing way."""
    probe = gap_probe.Probe()
    modes = args.timing.split(",")
    print("| dump | variant | " + " | ".join(modes) + " |")
    print("|---|---|" + "---|" * len(modes))
    for path in args.dump:
        source, groups, uniforms, flops, label = gap_probe.parse(Path(path))
        for variant in ["dump"] + args.edit:
            text = source
            if variant != "dump":
                for name in variant.split("+"):
                    text = specialize(text, uniforms) if name == "spec" else \
                        gap_probe.edit(name)(text)
            program, err = probe.g.compile(text)
            if program is None:
                print(f"| {label[-16:]} | {variant} | compile failed: {err[:100]} |")
                continue
            ubo = probe.bind(program, text, uniforms)
            heat(probe.g, 25)
            res = time_modes(probe.g, [(program, groups)], max(args.reps // SMALL, 2), modes)
            cells = [f"{res[m]:.1f} ({flops / (res[m] * 1e-6) / 1e12 / PEAK * 100:.0f} %)"
                     for m in modes]
            print(f"| {label[-16:]} | {variant} | " + " | ".join(cells) + " |", flush=True)
            probe.gl.glDeleteProgram(program)
            if ubo is not None:
                probe.gl.glDeleteBuffers(1, ctypes.byref(ubo))
    return 0

PEAK = 67.0
# name, H = W, input channels, output channels (3x3, stride 1, same padding)
LAYERS = {"@256": (384, 16, 8), "@240": (192, 32, 16)}
# The delegate's forms first (16 x 8 of 2 px x 2 slices; 1 px x 2 slices), then the brief's.
DEFAULT_VARIANTS = [
    "cur22=lx:16,ly:8,px:2,ts:2,w:slice,sb:1",
    "cur12=lx:16,ly:8,px:1,ts:2,w:slice,sb:1",
    "g64_42=lx:16,ly:4,px:4,ts:2,w:once,sb:1",
    "g64_42db=lx:16,ly:4,px:4,ts:2,w:once,sb:1,db:1",
    "g64_81=lx:8,ly:8,px:8,ts:1,w:once,sb:1",
    "g64_42lit=lx:16,ly:4,px:4,ts:2,w:lit,sb:1",
    "g64_42ubo=lx:16,ly:4,px:4,ts:2,w:ubo,sb:1",
    "g64_82=lx:8,ly:8,px:8,ts:2,w:once,sb:1",
    "g64_44=lx:16,ly:4,px:4,ts:4,w:once,sb:1",
    "once22=lx:16,ly:8,px:2,ts:2,w:once,sb:1",
    "g64_42sb=lx:16,ly:4,px:4,ts:2,w:once,sb:4",
    "g128_42=lx:16,ly:8,px:4,ts:2,w:once,sb:1",
    "g64_42c=lx:16,ly:4,px:4,ts:2,w:once,sb:1,chain:1",
    "cur12m=lx:16,ly:8,px:1,ts:2,w:slice,sb:1,p:m",
    "g64_42m=lx:16,ly:4,px:4,ts:2,w:once,sb:1,p:m",
    "g64_42mm=lx:16,ly:4,px:4,ts:2,w:once,sb:1,p:m,a:m",
    "g64_81m=lx:8,ly:8,px:8,ts:1,w:once,sb:1,p:m",
    "g64_42dbm=lx:16,ly:4,px:4,ts:2,w:once,sb:1,db:1,p:m",
]


def parse_variant(text):
    name, _, spec = text.partition("=")
    v = dict(lx=16, ly=8, px=2, ts=2, p="h", a="h", w="slice", sb=1, db=0, chain=0)
    for item in spec.split(","):
        if item:
            k, _, val = item.partition(":")
            v[k] = val if k in ("p", "a", "w", "lg") else int(val)
    return name, v


def skew(c):
    return c + c // 8


def kernel(hw, in_s, out_s, v, wpacked, og_const=None):
    """The GLSL of variant v; None where it cannot be made (the reason). Literal weights
    over several slice groups (session 19): lg:branch, one program whose taps branch on the
    workgroup's (uniform) slice group, each branch with its group's literals; lg:split, one
    program per group (og_const: the group, compiled in; grid z 1)."""
    lx, ly, px, ts, sb = v["lx"], v["ly"], v["px"], min(v["ts"], out_s), v["sb"]
    sb = min(sb, in_s)
    if in_s % sb:
        return None, f"sb {sb} does not divide {in_s} slices"
    groups_z = -(-out_s // ts)
    mp = {"h": "highp", "m": "mediump"}[v["p"]]
    ap = {"h": "highp", "m": "mediump"}[v["a"]]
    n = lx * ly
    tw, sw, sh = lx * px, lx * px + 2, ly + 2
    swp = skew(sw - 1) + 1
    tile = sh * swp  # vec4s of one slice's tile
    steps = in_s // sb
    bufs = 2 if v["db"] else 1
    nw = 9 * in_s * ts * 4  # a group's weights
    L = ["#version 310 es", "precision highp float;", "precision highp int;",
         f"layout(local_size_x = {lx}, local_size_y = {ly}) in;",
         "layout(std430, binding = 0) readonly buffer In { highp vec4 v[]; } inp;",
         "layout(std430, binding = 1) writeonly buffer Out { highp vec4 v[]; } outp;",
         "layout(std430, binding = 2) readonly buffer Wt { highp vec4 v[]; } wts;",
         f"shared {mp} vec4 st_in[{bufs * sb * tile}];"]
    w = v["w"]
    if w == "empty":  # w:empty, the grid of an empty kernel: a dispatch's fixed cost alone
        return ("\n".join(L[:4]) + "\nvoid main() {}\n",
                (-(-hw // tw), -(-hw // ly), groups_z), 0, ts), None
    if w in ("slice", "once"):
        L.append(f"shared {mp} vec4 st_w[{nw if w == 'once' else 9 * sb * ts * 4}];")
    if w == "ubo":
        if nw * 16 > 65536:  # NVIDIA's GL_MAX_UNIFORM_BLOCK_SIZE (GLES 3.1's minimum: 16 KB)
            return None, "weights over 64 KB of uniform block"
        L.append(f"layout(std140, binding = 0) uniform Wu {{ highp vec4 w[{nw}]; }} wu;")
    lg = v.get("lg", "")
    if w == "lit" and groups_z != 1 and lg not in ("branch", "split"):
        return None, "literals need one slice group (or lg:branch / lg:split)"
    split = w == "lit" and groups_z != 1 and lg == "split"
    if split and og_const is None:
        return None, "lg:split: one program per group"
    L += ["void main() {",
          "  int lid = int(gl_LocalInvocationIndex);",
          "  int lxi = int(gl_LocalInvocationID.x), lyi = int(gl_LocalInvocationID.y);",
          f"  int x0 = int(gl_WorkGroupID.x) * {tw} - 1, y0 = int(gl_WorkGroupID.y) * {ly} - 1;",
          f"  int og = {og_const};" if split else "  int og = int(gl_WorkGroupID.z);"]
    for p in range(px):
        for o in range(ts):
            L.append(f"  {ap} vec4 a{p}_{o} = vec4(0.0);")
    if w == "once":
        L.append(f"  for (int i = lid; i < {nw}; i += {n}) st_w[i] = wts.v[og * {nw} + i];")
    loads = -(-(sb * sh * sw) // n)

    def fetch(step, dst):
        """Loads of step's tile into raw registers (dst: variable prefix)."""
        out = []
        for k in range(loads):
            out.append(f"  {{ int i = lid + {k * n}; int sl = i / {sh * sw}; "
                       f"int r = (i - sl * {sh * sw}) / {sw}; int c = i - sl * {sh * sw} - r * {sw};"
                       f" int y = y0 + r, x = x0 + c;"
                       f" bool ok = i < {sb * sh * sw} && y >= 0 && y < {hw} && x >= 0 && x < {hw};"
                       f" {dst}{k} = ok ? inp.v[(({step * sb} + sl) * {hw} + y) * {hw} + x]"
                       f" : vec4(0.0); }}")
        return out

    def put(buf, src):
        out = []
        for k in range(loads):
            out.append(f"  {{ int i = lid + {k * n}; int sl = i / {sh * sw}; "
                       f"int r = (i - sl * {sh * sw}) / {sw}; int c = i - sl * {sh * sw} - r * {sw};"
                       f" if (i < {sb * sh * sw}) st_in[{buf * sb * tile} + sl * {tile} + r * {swp}"
                       f" + c + c / 8] = {src}{k}; }}")
        return out

    def wstage(step):
        cnt = 9 * sb * ts * 4
        # st_w [tap][slice in step][o][k] from [og][tap][slice][o][k]
        return [f"  for (int i = lid; i < {cnt}; i += {n}) {{ int tap = i / {sb * ts * 4};"
                f" st_w[i] = wts.v[og * {nw} + tap * {in_s * ts * 4} + {step * sb * ts * 4}"
                f" + i - tap * {sb * ts * 4}]; }}"]

    def weight(step, sl, tap, o, k, gsel=0):
        s = step * sb + sl
        gi = (tap * in_s + s) * ts * 4 + o * 4 + k  # within the group
        if w == "once":
            return f"st_w[{gi}]"
        if w == "slice":
            return f"st_w[{(tap * sb + sl) * ts * 4 + o * 4 + k}]"
        if w == "ubo":
            return f"wu.w[{gi}]" if groups_z == 1 else f"wu.w[og * {nw} + {gi}]"
        vals = wpacked[gsel * nw + gi]
        return "vec4(" + ", ".join(f"{float(x):.9e}" for x in vals) + ")"

    def compute(step, buf):
        if w == "lit" and groups_z != 1 and not split:  # lg:branch
            out = []
            for gsel in range(groups_z):
                out.append(f"  {'if' if gsel == 0 else '} else if'} (og == {gsel}) {{")
                out += compute_g(step, buf, gsel)
            return out + ["  }"]
        return compute_g(step, buf, og_const if split else 0)

    def compute_g(step, buf, gsel):
        out = []
        for sl in range(sb):
            for ky in range(3):
                base = f"{buf * sb * tile + sl * tile} + (lyi + {ky}) * {swp}"
                for j in range(px + 2):
                    out.append(f"  {mp} vec4 r{j}_{sl}_{ky}_{step} = st_in[{base} + "
                               f"(lxi * {px} + {j}) + (lxi * {px} + {j}) / 8];")
                for kx in range(3):
                    tap = ky * 3 + kx
                    for o in range(ts):
                        ws = [weight(step, sl, tap, o, k, gsel) for k in range(4)]
                        if w in ("once", "slice"):
                            for k in range(4):
                                out.append(f"  {mp} vec4 w{k}_{sl}_{tap}_{o}_{step} = {ws[k]};")
                            ws = [f"w{k}_{sl}_{tap}_{o}_{step}" for k in range(4)]
                        for p in range(px):
                            x = f"r{p + kx}_{sl}_{ky}_{step}"
                            acc = f"a{p}_{o}"
                            if v["chain"]:
                                for k, c in enumerate("xyzw"):
                                    out.append(f"  {acc} += {ws[k]} * {x}.{c};")
                            else:
                                out.append(f"  {acc} += {ws[0]} * {x}.x + {ws[1]} * {x}.y + "
                                           f"{ws[2]} * {x}.z + {ws[3]} * {x}.w;")
        return out

    L.append(f"  vec4 " + ", ".join(f"q{k}" for k in range(loads)) + ";")
    if v["db"]:
        L += fetch(0, "q") + put(0, "q")
        if w == "slice":
            return None, "db needs w:once/ubo/lit"
        L.append("  memoryBarrierShared(); barrier();")
        for step in range(steps):
            buf = step % 2
            if step + 1 < steps:
                L += fetch(step + 1, "q")
            L += compute(step, buf)
            if step + 1 < steps:
                L += put(1 - buf, "q")
            L.append("  memoryBarrierShared(); barrier();")
    else:
        if w == "once":
            L.append("  memoryBarrierShared(); barrier();")
        for step in range(steps):
            L += fetch(step, "q") + put(0, "q")
            if w == "slice":
                L += wstage(step)
            L.append("  memoryBarrierShared(); barrier();")
            L += compute(step, 0)
            if step + 1 < steps:
                L.append("  barrier();")
    L.append(f"  int oy = int(gl_WorkGroupID.y) * {ly} + lyi;")
    L.append(f"  int ox = int(gl_WorkGroupID.x) * {tw} + lxi * {px};")
    L.append(f"  if (oy >= {hw}) return;")
    for p in range(px):
        for o in range(ts):
            L.append(f"  if (ox + {p} < {hw} && og * {ts} + {o} < {out_s}) "
                     f"outp.v[((og * {ts} + {o}) * {hw} + oy) * {hw} + ox + {p}] = a{p}_{o};")
    L.append("}")
    groups = (-(-hw // tw), -(-hw // ly), 1 if split else groups_z)
    smem = (bufs * sb * tile + (nw if w == "once" else 9 * sb * ts * 4 if w == "slice" else 0)) * 16
    return ("\n".join(L) + "\n", groups, smem, ts), None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layer", action="append", default=[])
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--show", help="print this variant's source and stop")
    parser.add_argument("--max-seconds", type=float, default=1e9)
    parser.add_argument("--timing", default="b2b", help="comma-separated: " + ",".join(TIMINGS))
    parser.add_argument("--dump", action="append", default=[],
                        help="a dumped delegate program to time (with --edit variants)")
    parser.add_argument("--edit", action="append", default=[],
                        help="with --dump: gap_probe.py edits joined by '+', or spec")
    args = parser.parse_args()
    if args.dump:
        return run_dumps(args)
    variants = [parse_variant(t) for t in (args.variant or DEFAULT_VARIANTS)]
    g = Gl()
    gl = g.gl
    rng = np.random.default_rng(7)
    rows = []
    start = time.time()
    layers = {}
    for lname in args.layer or list(LAYERS):
        hw, cin, cout = LAYERS[lname]
        hw = max(hw // SMALL * 2, 16) if SMALL > 1 else hw
        in_s, out_s = cin // 4, cout // 4
        x = rng.standard_normal((hw, hw, cin)).astype(np.float32)
        wt = (rng.standard_normal((3, 3, cin, cout)) / np.sqrt(9 * cin)).astype(np.float32)
        ref = reference(x.astype(np.float64), wt.astype(np.float64), 3)
        xs = np.ascontiguousarray(x.reshape(hw, hw, in_s, 4).transpose(2, 0, 1, 3))
        layers[lname] = dict(hw=hw, cin=cin, cout=cout, in_s=in_s, out_s=out_s, wt=wt, ref=ref,
                             flops=2.0 * hw * hw * 9 * cin * cout, packed={},
                             inb=g.buffer(GL_SHADER_STORAGE_BUFFER, xs.tobytes(), 0),
                             outb=g.buffer(GL_SHADER_STORAGE_BUFFER, out_s * hw * hw * 16, 1))
    for name, v in variants:
        for lname, d in layers.items():
            if time.time() - start > args.max_seconds:
                rows.append((lname, name, "skipped (time)"))
                continue
            hw, cin, cout, in_s, out_s = d["hw"], d["cin"], d["cout"], d["in_s"], d["out_s"]
            ts = min(v["ts"], out_s)
            if ts not in d["packed"]:
                gz = -(-out_s // ts)
                # [og][tap][s][o][k] vec4, lane c = weight of input lane k to output 4 * slice + c
                wp = np.zeros((gz, 9, in_s, ts, 4, 4), np.float32)
                for ci in range(cin):
                    for co in range(cout):
                        wp[co // 4 // ts, :, ci // 4, (co // 4) % ts, ci % 4, co % 4] = \
                            d["wt"][:, :, ci, co].reshape(9)
                d["packed"][ts] = (wp, g.buffer(GL_SHADER_STORAGE_BUFFER, wp.tobytes(), 2),
                                   g.buffer(GL_UNIFORM_BUFFER, wp.tobytes()[:65536], 0))
            wp, wb, ub = d["packed"][ts]
            gz = -(-out_s // ts)
            ogs = list(range(gz)) if v.get("lg") == "split" and v["w"] == "lit" and gz > 1 \
                else [None]
            jobs, why, t0 = [], None, time.time()
            for og in ogs:
                made, why = kernel(hw, in_s, out_s, v, wp.reshape(-1, 4), og)
                if made is None:
                    break
                src, groups, smem, _ = made
                if args.show == name:
                    print(src)
                    return 0
                program, err = g.compile(src)
                if program is None:
                    why = f"compile: {err[:100]}"
                    break
                jobs.append((program, groups))
            if why is not None:
                rows.append((lname, name, why))
                continue
            compile_s = time.time() - t0
            inb, outb = d["inb"], d["outb"]
            heat(g, 25)
            gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, inb)
            gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, outb)
            gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, wb)
            gl.glBindBufferBase(GL_UNIFORM_BUFFER, 0, ub)
            modes = args.timing.split(",")
            res = time_modes(g, jobs, max(args.reps // SMALL, 2), modes)
            ms = res[modes[0]] / 1e3
            got = np.frombuffer(g.read(outb, out_s * hw * hw * 16), np.float32)
            got = got.reshape(out_s, hw, hw, 4).transpose(1, 2, 0, 3).reshape(hw, hw, cout)
            err = float(np.abs(got - d["ref"]).max())
            us = ms * 1e3
            pct = d["flops"] / (us * 1e-6) / 1e12 / PEAK * 100
            more = "".join(f" {m} {res[m]:.1f}" for m in modes[1:])
            rows.append((lname, name, f"{us:.1f} us ({pct:.0f} %){more} err {err:.1e} "
                         f"smem {smem} B "
                         f"grid {groups[0]}x{groups[1]}x{groups[2]} compile {compile_s:.1f} s"))
            print(f"{lname} {name}: {rows[-1][2]}", flush=True)
            for program, _ in jobs:
                gl.glDeleteProgram(program)
            # The output zeroed between variants: a variant that stores nothing fails the check.
            gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, outb)
            gl.glBufferData(GL_SHADER_STORAGE_BUFFER, ctypes.c_long(out_s * hw * hw * 16),
                            None, 0x88EA)
    print(f"probe took {time.time() - start:.1f} s")
    print("| layer | variant | result |")
    print("|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
