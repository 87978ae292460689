"""Every GL/EGL call in delegate/ and egl/ goes through TFG_GL / TFG_EGL (kept
in release builds), except the documented kinds below. A raw call added
anywhere else fails this test with its file and line.

The exceptions, all in egl/ (delegate/ may have none at all):
  * the error machinery itself and pure queries that cannot fail;
  * calls whose return value is checked on the spot and turned into a Status
    (object creation, mapping), each followed by CheckGlErrors/CheckEglError
    or an explicit comparison;
  * cleanup in destructors and failure paths, where there is nothing left to
    report to (deleting, unbinding, releasing, terminating).
"""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

ERROR_MACHINERY = {"glGetError", "eglGetError"}
PURE_QUERIES = {"eglGetCurrentContext", "eglGetCurrentDisplay", "eglGetCurrentSurface",
                "eglQueryString", "eglGetProcAddress", "glGetString", "glGetStringi",
                "glIsBuffer", "glIsTexture"}
RESULT_CHECKED = {"eglGetDisplay", "eglCreateContext", "eglCreatePbufferSurface",
                  "eglMakeCurrent", "glCreateShader", "glCreateProgram", "glMapBufferRange",
                  "glUnmapBuffer", "glBufferData", "glFenceSync",
                  "glClientWaitSync",
                  # binding a texture of another target is GL_INVALID_OPERATION: the
                  # one way GLES 3.1 tells a texture's target (foreign_texture.cc)
                  "glBindTexture"}
CLEANUP = {"glDeleteBuffers", "glDeleteTextures", "glDeleteProgram", "glDeleteShader",
           "glBindBuffer", "glDeleteSync", "glDeleteSamplers", "eglDestroyContext", "eglDestroySurface", "eglTerminate"}
ALLOWED_IN_EGL = ERROR_MACHINERY | PURE_QUERIES | RESULT_CHECKED | CLEANUP

CALL = re.compile(r"\b((?:gl|egl)[A-Z][A-Za-z0-9_]*)\s*\(")
CHECKED_MACRO = re.compile(r"TFG_(?:GL|EGL)\s*\(\s*$")


def strip_comments_and_strings(text: str) -> str:
    """Blanks comments and literals, keeping offsets and line numbers."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                         re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def statement_prefix(code: str, position: int) -> str:
    """The text of the current statement before `position`."""
    start = max(code.rfind(";", 0, position), code.rfind("{", 0, position),
                code.rfind("}", 0, position)) + 1
    return code[start:position]


def raw_calls(path: Path):
    code = strip_comments_and_strings(path.read_text())
    for match in CALL.finditer(code):
        prefix = statement_prefix(code, match.start())
        # Checked: the call is the macro's argument, e.g. TFG_GL(glFoo(...)).
        if CHECKED_MACRO.search(prefix):
            continue
        if re.search(r"#\s*define", prefix):
            continue
        line = code.count("\n", 0, match.start()) + 1
        yield match.group(1), line


def sources(folder: str):
    root = REPO / folder
    return sorted(p for p in root.rglob("*") if p.suffix in (".cc", ".h"))


def test_the_scanner_finds_raw_calls_and_accepts_checked_ones(tmp_path):
    sample = tmp_path / "sample.cc"
    sample.write_text('TFG_GL(glUseProgram(p));\n'
                      'TFG_EGL(eglMakeCurrent(d, s, s,\n   c));\n'
                      '// glFinish(); in a comment\n'
                      'auto s = "glFinish()";\n'
                      'glDispatchCompute(1, 1, 1);\n')
    assert list(raw_calls(sample)) == [("glDispatchCompute", 6)]


def test_delegate_code_makes_no_raw_gl_or_egl_call():
    found = [f"{p.relative_to(REPO)}:{line}: {name}"
             for p in sources("delegate") for name, line in raw_calls(p)]
    assert not found, ("raw GL/EGL calls in delegate/ (use TFG_GL/TFG_EGL, or move GL "
                       "work into egl/):\n" + "\n".join(found))


def test_egl_layer_makes_only_documented_unchecked_calls():
    found = [f"{p.relative_to(REPO)}:{line}: {name}"
             for p in sources("egl") for name, line in raw_calls(p)
             if name not in ALLOWED_IN_EGL]
    assert not found, ("unchecked GL/EGL calls in egl/ (wrap in TFG_GL/TFG_EGL, or "
                       "document the kind in this test):\n" + "\n".join(found))
