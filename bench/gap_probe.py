#!/usr/bin/env python3
"""Times the delegate's own programs outside it (issue 18, session 12, helper
`gap`): each file that TFLITE_GLES_X_DUMP_SHADERS wrote (the assembled source,
then `// @dump` lines with the grid, the uniform block and the label) is
compiled here and dispatched back to back under a timer query, in
bench/peak_probe.py's harness, with its buffers found by introspection (SSBOs
and samplerBuffers, filled with small random values) and its uniform block
bound as the delegate binds it. Edits of the source (EDITS below) bisect what
makes it slower than peak_probe.py's prototype of the same tile.

    python3 bench/gap_probe.py [--match TEXT] [--edit NAME ...] DUMP_DIR_OR_FILES...
"""

from __future__ import annotations

import argparse
import ctypes
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peak_probe import (GL_SHADER_STORAGE_BUFFER, GL_UNIFORM_BUFFER, Gl, heat)  # noqa: E402

GL_TEXTURE_BUFFER = 0x8C2A
GL_TEXTURE0 = 0x84C0
GL_RGBA32F = 0x8814
GL_RGBA16F = 0x881A
GL_R32F = 0x822E
GL_R32UI = 0x8236
GL_SHADER_STORAGE_BLOCK = 0x92E6
GL_UNIFORM = 0x92E1
GL_ACTIVE_RESOURCES = 0x92F5
GL_BUFFER_BINDING = 0x9302
GL_TYPE = 0x92FA
GL_LOCATION = 0x930E
GL_SAMPLER_BUFFER = 0x8DC2
GL_UNSIGNED_INT_SAMPLER_BUFFER = 0x8DD8
BYTES = 48 << 20  # every buffer: more than any style / DeepLab tensor


def sub(pattern, repl):
    return lambda s: re.sub(pattern, repl, s, flags=re.M)


# Source edits, applied in order to the dumped text (bisection steps).
EDITS = {
    "ssbo": sub(r"^#define READ_TEXBUF 1$", "#define READ_TEXBUF 0"),
    "noprologue": sub(r"^#define PROLOGUE_IN 1$", ""),
    "noupsample": sub(r"^#define GATHER_UPSAMPLE \d+$", "#define GATHER_UPSAMPLE 1"),
    "nomirror": sub(r"^#define GATHER_MIRROR \d+$", ""),
    # The program's own define only (the shader's fallback `(x)` define follows it).
    "noepilogue": lambda s: re.sub(r"^#define EPILOGUE\(.*$", "", s, count=1, flags=re.M),
    "mediump": lambda s: re.sub(r"^#define (MATH_P|ACC_P) \w+$", r"#define \1 mediump", s,
                                flags=re.M),
    "noreuse": sub(r"^#define ROW_REUSE 1$", ""),
    "reuse": sub(r"^(#define PX \d+)$", r"\1\n#define ROW_REUSE 1"),
    "accmedium": sub(r"^#define ACC_P \w+$", "#define ACC_P mediump"),
    "highp": lambda s: re.sub(r"^#define (MATH_P|ACC_P) \w+$", r"#define \1 highp", s,
                              flags=re.M),
}


def edit(name):
    """EDITS[name], or a generic edit: def.NAME=VALUE (a #define set, replacing the
    program's own) or part.PATH (the text of the shader part the program includes, whose
    first line PATH's file shares, replaced by that file's)."""
    if name.startswith("def."):
        key, _, value = name[4:].partition("=")

        def define(s):
            s = re.sub(rf"^#define {key}\b.*\n", "", s, flags=re.M)
            return re.sub(r"^(#version[^\n]*\n)", rf"\1#define {key} {value}\n", s, count=1)
        return define
    if name.startswith("part."):
        text = Path(name[5:]).read_text()
        first = text.splitlines()[0][:30]

        def part(s):
            start = s.index("#line 1\n" + first)
            end = s.index("\n#line ", start + 8)
            return s[:start] + "#line 1\n" + text.rstrip("\n") + s[end:]
        return part
    return EDITS[name]


def parse(path: Path):
    text = path.read_text()
    source, _, tail = text.partition("\n// @dump label ")
    meta = {"label": tail.splitlines()[0] if tail else path.stem}
    for line in tail.splitlines():
        if line.startswith("// @dump "):
            key, _, value = line[9:].partition(" ")
            meta[key] = value
    groups = tuple(int(v) for v in meta.get("groups", "1 1 1").split())
    uniforms = [int(v) for v in meta.get("uniforms", "").split()]
    flops = int(meta.get("flops", "0"))
    return source, groups, uniforms, flops, meta["label"]


class Probe:
    def __init__(self):
        self.g = Gl()
        gl = self.g.gl
        self.gl = gl
        rng = np.random.default_rng(1)
        self.data32 = (rng.standard_normal(BYTES // 4) * 0.1).astype(np.float32).tobytes()
        self.buffers = {}
        self.textures = {}
        gl.glGetProgramInterfaceiv.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                                               ctypes.c_void_p]
        gl.glGetProgramResourceiv.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                                              ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                                              ctypes.c_void_p, ctypes.c_void_p]
        gl.glGetProgramResourceName.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                                                ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p]
        gl.glGetUniformiv.argtypes = [ctypes.c_uint, ctypes.c_int, ctypes.c_void_p]

    def buffer(self, key):
        if key not in self.buffers:
            self.buffers[key] = self.g.buffer(GL_SHADER_STORAGE_BUFFER, self.data32, 7)
        return self.buffers[key]

    def resources(self, program, interface, props):
        gl = self.gl
        count = ctypes.c_int()
        gl.glGetProgramInterfaceiv(program, interface, GL_ACTIVE_RESOURCES, ctypes.byref(count))
        out = []
        for i in range(count.value):
            p = (ctypes.c_uint * len(props))(*props)
            v = (ctypes.c_int * len(props))()
            gl.glGetProgramResourceiv(program, interface, i, len(props), p, len(props), None, v)
            out.append(list(v))
        return out

    def bind(self, program, source, uniforms):
        gl = self.gl
        for (binding,) in self.resources(program, GL_SHADER_STORAGE_BLOCK, [GL_BUFFER_BINDING]):
            gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, binding, self.buffer(("ssbo", binding)))
        fp16 = "#define STORAGE_FP16 1" in source
        gl.glUseProgram(program)
        floats = set(re.findall(r"^FLOATS_IN\((\w+),", source, flags=re.M))
        for index, (kind, location) in enumerate(
                self.resources(program, GL_UNIFORM, [GL_TYPE, GL_LOCATION])):
            if kind not in (GL_SAMPLER_BUFFER, GL_UNSIGNED_INT_SAMPLER_BUFFER) or location < 0:
                continue
            name = ctypes.create_string_buffer(256)
            gl.glGetProgramResourceName(program, GL_UNIFORM, index, 256, None, name)
            unit = ctypes.c_int()
            gl.glGetUniformiv(program, location, ctypes.byref(unit))
            fmt = (GL_R32UI if kind == GL_UNSIGNED_INT_SAMPLER_BUFFER else
                   GL_R32F if name.value.decode() in floats else
                   GL_RGBA16F if fp16 else GL_RGBA32F)
            key = (unit.value, fmt)
            if key not in self.textures:
                t = ctypes.c_uint()
                gl.glGenTextures(1, ctypes.byref(t))
                gl.glBindTexture(GL_TEXTURE_BUFFER, t)
                gl.glTexBuffer(GL_TEXTURE_BUFFER, fmt, self.buffer(("tex", unit.value)))
                self.textures[key] = t
            gl.glActiveTexture(GL_TEXTURE0 + unit.value)
            gl.glBindTexture(GL_TEXTURE_BUFFER, self.textures[key])
        if uniforms:
            block = np.array(uniforms + [0] * 4, np.int32).tobytes()
            ubo = self.g.buffer(GL_UNIFORM_BUFFER, block, 0)
            return ubo
        return None

    def time(self, source, groups, uniforms, reps=20):
        program, err = self.g.compile(source)
        if program is None:
            return None, err
        ubo = self.bind(program, source, uniforms)
        heat(self.g, 25)
        ms = self.g.time_dispatch(program, groups, reps=reps)
        self.gl.glDeleteProgram(program)
        if ubo is not None:
            self.gl.glDeleteBuffers(1, ctypes.byref(ubo))
        return ms, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--match", action="append", default=[],
                        help="only files whose label has one of these (ending at a word boundary)")
    parser.add_argument("--edit", action="append", default=[],
                        help="a variant: edit names joined by '+' (see EDITS and edit())")
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    files = []
    for p in args.paths:
        path = Path(p)
        files += sorted(path.glob("*.comp")) if path.is_dir() else [path]
    probe = Probe()
    print("| dump | label | variant | us | TFLOP/s |")
    print("|---|---|---|---|---|")
    for path in files:
        source, groups, uniforms, flops, label = parse(path)
        if args.match and not any(re.search(re.escape(m) + r"\b", label) for m in args.match):
            continue
        for variant in ["dump"] + args.edit:
            text = source
            if variant != "dump":
                for name in variant.split("+"):
                    text = edit(name)(text)
            ms, err = probe.time(text, groups, uniforms, args.reps)
            if ms is None:
                print(f"| {path.parent.name}/{path.name[:4]} | {label[:40]} | {variant} | "
                      f"compile failed: {err[:120]} | |")
                continue
            tf = flops / (ms * 1e-3) / 1e12 if flops else 0.0
            print(f"| {path.parent.name}/{path.name[:4]} | {label[:40]} | {variant} | "
                  f"{ms * 1e3:.1f} | {tf:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
