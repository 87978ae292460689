#!/usr/bin/env python3
"""What a driver's program binary holds, and what its first dispatch costs.

Talks to EGL/GLES directly (ctypes; no delegate), so the answer does not
depend on the delegate's code. One compute program (a loop heavy enough that
compiling it to machine code takes measurable time) is handled in modes:

  compile OUT.bin    compile + link from source, time the link, retrieve the
                     binary right after linking (OUT.bin) and again after one
                     dispatch (OUT.bin.after); print the sizes, whether the two
                     are byte-identical, whether either holds an ELF object
                     (machine code) and the first/second dispatch times
  load IN.bin        glProgramBinary from IN.bin, time it and the first and
                     second dispatch

    python3 bench/program_binary_probe.py experiment   # runs the matrix below

`experiment` runs each mode in a fresh process with Mesa's and NVIDIA's disk
caches pointed at private folders: (1) compile with an empty driver cache,
(2) load the binary with a new empty driver cache, (3) load it with the driver
cache that (1) filled, (4) load the binary retrieved after the first dispatch
with an empty driver cache. If (2) pays the compile at its first dispatch and
(3) does not, the machine code lives only in the driver's own disk cache.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time

EGL_PLATFORM_SURFACELESS_MESA = 0x31DD
EGL_PLATFORM_DEVICE_EXT = 0x313F
EGL_NONE = 0x3038
EGL_RENDERABLE_TYPE = 0x3040
EGL_OPENGL_ES3_BIT = 0x40
EGL_SURFACE_TYPE = 0x3033
EGL_CONTEXT_MAJOR_VERSION = 0x3098
EGL_CONTEXT_MINOR_VERSION = 0x30FB
EGL_OPENGL_ES_API = 0x30A0
GL_COMPUTE_SHADER = 0x91B9
GL_COMPILE_STATUS = 0x8B81
GL_LINK_STATUS = 0x8B82
GL_PROGRAM_BINARY_LENGTH = 0x8741
GL_PROGRAM_BINARY_RETRIEVABLE_HINT = 0x8257
GL_SHADER_STORAGE_BUFFER = 0x90D2
GL_DYNAMIC_COPY = 0x88EA
GL_RENDERER = 0x1F01
GL_TRUE = 1

SOURCE = """#version 310 es
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { vec4 v[]; } data;
uniform int steps;
void main() {
  uint i = gl_GlobalInvocationID.x;
  vec4 a = data.v[i];
  vec4 acc = vec4(0.0);
  for (int k = 0; k < steps; ++k) {
    %s
  }
  data.v[i] = acc;
}
"""
# Distinct, unrollable arithmetic: what a conv tile's inner loop looks like.
BODY = "\n    ".join(
    f"acc += a.{'xyzw'[j % 4]}{'yzwx'[j % 4]}{'zwxy'[j % 4]}{'wxyz'[j % 4]} * "
    f"vec4({j}.5, {j}.25, -{j}.125, {j}.75) + sin(acc * {j + 1}.0);"
    for j in range(16))


def gl_context():
    egl = ctypes.CDLL("libEGL.so.1")
    gl = ctypes.CDLL("libGLESv2.so.2")
    egl.eglGetProcAddress.restype = ctypes.c_void_p
    egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]
    get_platform_display = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p,
                                            ctypes.c_void_p)(
        egl.eglGetProcAddress(b"eglGetPlatformDisplayEXT"))
    display = None
    query_devices = egl.eglGetProcAddress(b"eglQueryDevicesEXT")
    egl.eglInitialize.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    # PROBE_PLATFORM=device: the EGL device platform (NVIDIA headless).
    if os.environ.get("PROBE_PLATFORM") == "device" and query_devices:
        devices = (ctypes.c_void_p * 8)()
        count = ctypes.c_int(0)
        ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(
            query_devices)(8, devices, ctypes.byref(count))
        display = get_platform_display(EGL_PLATFORM_DEVICE_EXT, devices[0], None)
    else:
        display = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, None, None)
    assert egl.eglInitialize(display, None, None), "eglInitialize failed"
    egl.eglBindAPI(EGL_OPENGL_ES_API)
    attribs = (ctypes.c_int * 5)(EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE, 0,
                                 EGL_NONE)
    config = ctypes.c_void_p()
    n = ctypes.c_int()
    egl.eglChooseConfig.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_int, ctypes.c_void_p]
    assert egl.eglChooseConfig(display, attribs, ctypes.byref(config), 1, ctypes.byref(n))
    ctx_attribs = (ctypes.c_int * 5)(EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1,
                                     EGL_NONE)
    egl.eglCreateContext.restype = ctypes.c_void_p
    egl.eglCreateContext.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_void_p]
    context = egl.eglCreateContext(display, config, None, ctx_attribs)
    assert context, "eglCreateContext failed"
    egl.eglMakeCurrent.argtypes = [ctypes.c_void_p] * 4
    assert egl.eglMakeCurrent(display, None, None, context)
    gl.glGetString.restype = ctypes.c_char_p
    return gl


def compile_compute(gl, source: str):
    """(program, None) for a compute shader's source, or (None, the compiler's
    log) -- the probes that build their own shaders share this."""
    shader = gl.glCreateShader(GL_COMPUTE_SHADER)
    text = ctypes.c_char_p(source.encode())
    gl.glShaderSource(shader, 1, ctypes.byref(text), None)
    gl.glCompileShader(shader)
    status = ctypes.c_int()
    gl.glGetShaderiv(shader, GL_COMPILE_STATUS, ctypes.byref(status))
    if status.value != GL_TRUE:
        log = ctypes.create_string_buffer(8192)
        gl.glGetShaderInfoLog(shader, 8192, None, log)
        return None, log.value.decode(errors="replace").strip()
    program = gl.glCreateProgram()
    gl.glAttachShader(program, shader)
    gl.glLinkProgram(program)
    gl.glGetProgramiv(program, GL_LINK_STATUS, ctypes.byref(status))
    return (program, None) if status.value == GL_TRUE else (None, "link failed")


def program_binary(gl, program):
    length = ctypes.c_int()
    gl.glGetProgramiv(program, GL_PROGRAM_BINARY_LENGTH, ctypes.byref(length))
    data = ctypes.create_string_buffer(length.value)
    fmt = ctypes.c_uint()
    written = ctypes.c_int()
    gl.glGetProgramBinary(program, length, ctypes.byref(written), ctypes.byref(fmt), data)
    return fmt.value, data.raw[:written.value]


def dispatch_ms(gl, program, buffer):
    gl.glUseProgram(program)
    gl.glUniform1i(gl.glGetUniformLocation(program, b"steps"), 4)
    gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buffer)
    start = time.perf_counter()
    gl.glDispatchCompute(4, 1, 1)
    gl.glFinish()
    return (time.perf_counter() - start) * 1e3


def child(mode: str, path: str) -> dict:
    gl = gl_context()
    buffer = ctypes.c_uint()
    gl.glGenBuffers(1, ctypes.byref(buffer))
    gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, buffer)
    gl.glBufferData(GL_SHADER_STORAGE_BUFFER, ctypes.c_long(256 * 16), None, GL_DYNAMIC_COPY)
    result = {"renderer": gl.glGetString(GL_RENDERER).decode()}
    program = gl.glCreateProgram()
    status = ctypes.c_int()
    start = time.perf_counter()
    if mode == "compile":
        shader = gl.glCreateShader(GL_COMPUTE_SHADER)
        text = ctypes.c_char_p((SOURCE % BODY).encode())
        gl.glShaderSource(shader, 1, ctypes.byref(text), None)
        gl.glCompileShader(shader)
        gl.glGetShaderiv(shader, GL_COMPILE_STATUS, ctypes.byref(status))
        assert status.value == GL_TRUE, "compile failed"
        gl.glAttachShader(program, shader)
        gl.glProgramParameteri(program, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE)
        gl.glLinkProgram(program)
    else:
        with open(path, "rb") as f:
            fmt = int.from_bytes(f.read(4), "little")
            blob = f.read()
        gl.glProgramBinary(program, fmt, blob, len(blob))
    gl.glGetProgramiv(program, GL_LINK_STATUS, ctypes.byref(status))
    assert status.value == GL_TRUE, "link / glProgramBinary failed"
    result["create_ms"] = (time.perf_counter() - start) * 1e3
    if mode == "compile":
        fmt, before = program_binary(gl, program)
        with open(path, "wb") as f:
            f.write(fmt.to_bytes(4, "little") + before)
    result["first_dispatch_ms"] = dispatch_ms(gl, program, buffer)
    result["second_dispatch_ms"] = dispatch_ms(gl, program, buffer)
    if mode == "compile":
        fmt, after = program_binary(gl, program)
        with open(path + ".after", "wb") as f:
            f.write(fmt.to_bytes(4, "little") + after)
        result.update(binary_bytes=len(before), after_dispatch_bytes=len(after),
                      identical_after_dispatch=before == after,
                      elf_object_inside=b"\x7fELF" in before or b"\x7fELF" in after,
                      format=hex(fmt))
    return result


def experiment() -> None:
    def run(mode, path, cache):
        env = dict(os.environ, MESA_SHADER_CACHE_DIR=cache, __GL_SHADER_DISK_CACHE_PATH=cache,
                   __GL_SHADER_DISK_CACHE_SKIP_CLEANUP="1")
        out = subprocess.run([sys.executable, __file__, mode, path], env=env, text=True,
                             capture_output=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    with tempfile.TemporaryDirectory() as work:
        binary = os.path.join(work, "prog.bin")
        filled = os.path.join(work, "filled")
        rows = [("compile, empty driver cache", run("compile", binary, filled))]
        rows.append(("load binary, new empty driver cache",
                     run("load", binary, os.path.join(work, "empty1"))))
        rows.append(("load binary, driver cache filled by the compile",
                     run("load", binary, filled)))
        rows.append(("load binary retrieved after 1st dispatch, empty driver cache",
                     run("load", binary + ".after", os.path.join(work, "empty2"))))
        files = sum(len(f) for _, _, f in os.walk(filled))
    print(f"renderer: {rows[0][1]['renderer']}")
    facts = rows[0][1]
    print(f"binary format {facts['format']}: {facts['binary_bytes']} bytes right after link, "
          f"{facts['after_dispatch_bytes']} after a dispatch (identical: "
          f"{facts['identical_after_dispatch']}); ELF object inside: "
          f"{facts['elf_object_inside']}; files the driver put in its cache: {files}")
    print("| case | create ms | first dispatch ms | second dispatch ms |")
    print("|---|---|---|---|")
    for name, row in rows:
        print(f"| {name} | {row['create_ms']:.1f} | {row['first_dispatch_ms']:.1f} | "
              f"{row['second_dispatch_ms']:.2f} |")


if __name__ == "__main__":
    if sys.argv[1] == "experiment":
        experiment()
    else:
        print(json.dumps(child(sys.argv[1], sys.argv[2])))
