#!/usr/bin/env python3
"""Does this GLES driver compute in fp16? (issue 18: fp16 >= 1.3x fp32)

Talks to EGL/GLES directly (ctypes, bench/program_binary_probe.py's
context; no delegate). Two measurements:
  - precision: a mediump float loaded with 2049 (not a half: rounds to 2048)
    plus 1.0, stored to an SSBO: 2050 means mediump ran at fp32.
  - throughput: 8 independent vec4 FMA chains per invocation, 1M invocations,
    as highp float, mediump float, and, where an extension offers explicit
    half types (GL_NV_gpu_shader5, GL_EXT_shader_explicit_arithmetic_types_
    float16, GL_AMD_gpu_shader_half_float), f16vec4; TFLOP/s from the best of
    5 dispatches timed with glFinish.

    python3 bench/fp16_probe.py
"""

from __future__ import annotations

import ctypes
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from program_binary_probe import (GL_DYNAMIC_COPY, GL_RENDERER,  # noqa: E402
                                  GL_SHADER_STORAGE_BUFFER, compile_compute, gl_context)

GL_EXTENSIONS = 0x1F03
GL_NUM_EXTENSIONS = 0x821D
GL_INFO_LOG_LENGTH = 0x8B84
GL_SHADER_STORAGE_BARRIER_BIT = 0x2000
GL_MAP_READ_BIT = 0x0001

INVOCATIONS = 1 << 20
ITERATIONS = 512

PRECISION = """#version 310 es
%s
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Data { highp float v[]; } data;
void main() {
  %s float a = data.v[0];
  %s float b = a + data.v[1];
  data.v[2] = b;
}
"""

THROUGHPUT = """#version 310 es
%s
precision highp float;
layout(local_size_x = 128) in;
layout(std430, binding = 0) buffer Data { highp vec4 v[]; } data;
void main() {
  uint i = gl_GlobalInvocationID.x;
  %s m = %s(data.v[0]);
  %s c = %s(data.v[1]);
  %s a0 = %s(data.v[2]) + %s(float(i & 7u));
  %s a1 = a0 + c, a2 = a1 + c, a3 = a2 + c, a4 = a3 + c, a5 = a4 + c, a6 = a5 + c, a7 = a6 + c;
  for (int k = 0; k < %d; ++k) {
    a0 = MAD(a0, m, c); a1 = MAD(a1, m, c); a2 = MAD(a2, m, c); a3 = MAD(a3, m, c);
    a4 = MAD(a4, m, c); a5 = MAD(a5, m, c); a6 = MAD(a6, m, c); a7 = MAD(a7, m, c);
  }
  %s s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  if (float(s.x) == 12345.0) data.v[3 + int(i)] = vec4(s);
}
"""


def compile_program(gl, source: str):
    program, error = compile_compute(gl, source)
    return program, error and error.splitlines()[:1]


def main() -> int:
    gl = gl_context()
    gl.glGetStringi.restype = ctypes.c_char_p
    count = ctypes.c_int()
    gl.glGetIntegerv(GL_NUM_EXTENSIONS, ctypes.byref(count))
    extensions = {gl.glGetStringi(GL_EXTENSIONS, i).decode() for i in range(count.value)}
    print(f"renderer: {gl.glGetString(GL_RENDERER).decode()}")
    print("half-float extensions: " + (", ".join(sorted(
        e for e in extensions if any(k in e for k in ("half", "16", "shader5")))) or "none"))

    buffer = ctypes.c_uint()
    gl.glGenBuffers(1, ctypes.byref(buffer))
    gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, buffer)
    size = 16 * 8
    init = (ctypes.c_float * (size // 4))(2049.0, 1.0, 0.0, 0.0)
    gl.glBufferData(GL_SHADER_STORAGE_BUFFER, ctypes.c_long(size), init, GL_DYNAMIC_COPY)
    gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buffer)
    gl.glMapBufferRange.restype = ctypes.c_void_p
    for precision in ("highp", "mediump"):
        program, error = compile_program(gl, PRECISION % ("", precision, precision))
        if program is None:
            print(f"precision {precision}: {error}")
            continue
        gl.glUseProgram(program)
        gl.glDispatchCompute(1, 1, 1)
        gl.glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT)
        pointer = gl.glMapBufferRange(GL_SHADER_STORAGE_BUFFER, ctypes.c_long(0),
                                      ctypes.c_long(16), GL_MAP_READ_BIT)
        value = ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float))[2]
        gl.glUnmapBuffer(GL_SHADER_STORAGE_BUFFER)
        print(f"precision {precision}: 2049 + 1 = {value:g} "
              f"({'fp32 arithmetic' if value == 2050 else 'fp16 rounding'})")

    big = ctypes.c_uint()
    gl.glGenBuffers(1, ctypes.byref(big))
    gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, big)
    data = (ctypes.c_float * 12)(0.999, 0.999, 0.999, 0.999, 0.001, 0.002, 0.003, 0.004,
                                 0.5, 0.25, 0.125, 0.0625)
    gl.glBufferData(GL_SHADER_STORAGE_BUFFER, ctypes.c_long((INVOCATIONS + 3) * 16), None,
                    GL_DYNAMIC_COPY)
    gl.glBufferSubData(GL_SHADER_STORAGE_BUFFER, ctypes.c_long(0), ctypes.c_long(48), data)
    gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, big)
    flops = 2.0 * 4 * 8 * ITERATIONS * INVOCATIONS
    mad = "#define MAD(a, b, c) ((a) * (b) + (c))"
    fma = "#extension GL_EXT_gpu_shader5 : require\n#define MAD(a, b, c) fma(a, b, c)"
    variants = [("highp vec4, a * b + c", mad, "highp vec4"),
                ("highp vec4, fma() (GL_EXT_gpu_shader5)", fma, "highp vec4"),
                ("highp float x4 chains, a * b + c", mad, "highp float"),
                ("mediump vec4, a * b + c", mad, "mediump vec4"),
                ("mediump vec4, fma()", fma, "mediump vec4")]
    for ext in ("GL_NV_gpu_shader5", "GL_EXT_shader_explicit_arithmetic_types_float16",
                "GL_AMD_gpu_shader_half_float"):
        variants.append((f"f16vec4 ({ext})", f"#extension {ext} : require\n{mad}", "f16vec4"))
    print("| arithmetic | best ms | TFLOP/s |")
    print("|---|---|---|")
    for name, header, vtype in variants:
        ctor = vtype.split()[-1]
        if ctor == "float":  # 4x the chains of scalars: the same FMA count
            source = THROUGHPUT.replace("%s s = a0", "float s = a0").replace(
                "if (float(s.x)", "if (float(s)")
            source = source.replace("(data.v[0])", "(data.v[0].x)").replace(
                "(data.v[1])", "(data.v[1].x)").replace("(data.v[2])", "(data.v[2].x)")
            source = source % (header, vtype, ctor, vtype, ctor, vtype, ctor, ctor, vtype,
                               ITERATIONS * 4)
        else:
            source = THROUGHPUT % (header, vtype, ctor, vtype, ctor, vtype, ctor, ctor, vtype,
                                   ITERATIONS, vtype)
        program, error = compile_program(gl, source)
        if program is None:
            print(f"| {name} | did not compile: {error} | |")
            continue
        gl.glUseProgram(program)
        best = float("inf")
        for _ in range(6):
            gl.glFinish()
            start = time.perf_counter()
            gl.glDispatchCompute(INVOCATIONS // 128, 1, 1)
            gl.glFinish()
            best = min(best, time.perf_counter() - start)
        print(f"| {name} | {best * 1e3:.3f} | {flops / best / 1e12:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
