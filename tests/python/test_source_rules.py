"""Two project rules that are easy to break without noticing, checked on the
source tree (no GPU, well under a second):

  * every source file stays under 600 lines (split along a seam that
    explains itself when one grows past it);
  * every delegate option key (delegate/options.cc) is named in README's
    options paragraph and in the message that lists them on a bad key, and
    every function of the C API is named in README.md or docs/;
  * the developer switches: every TFLITE_GLES_* variable the library reads
    (the one getenv table in delegate/device/developer_overrides.cc, plus the
    two that egl/ reads itself) has a row in docs/developer_overrides.md, and
    every row there names a variable the library still reads.
"""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SOURCE_DIRS = ["delegate", "egl", "tools", "tests", "shaders", "bench", "python"]
SOURCE_SUFFIXES = {".cc", ".h", ".py", ".comp", ".glsl", ".sh"}
MAX_LINES = 600


def test_source_files_stay_under_600_lines():
    too_long = []
    for folder in SOURCE_DIRS:
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            lines = path.read_text(errors="replace").count("\n")
            if lines >= MAX_LINES:
                too_long.append(f"{path.relative_to(REPO)}: {lines} lines")
    assert not too_long, "files at or over 600 lines:\n" + "\n".join(too_long)


# A variable name as a string literal.
VARIABLE = re.compile(r'"(TFLITE_GLES_[A-Z0-9_]+)"')
# A table row of docs/developer_overrides.md: | `TFLITE_GLES_...` | ...
ROW = re.compile(r"^\|\s*`(TFLITE_GLES_[A-Z0-9_]+)`\s*\|", re.MULTILINE)
TABLE = "delegate/device/developer_overrides.cc"


def variables_read_by_the_library() -> dict[str, set[str]]:
    """Variable -> the files that read it: every name in the table's
    ReadDeveloperOverrides, and every getenv of one anywhere in delegate/
    and egl/."""
    found: dict[str, set[str]] = {}
    for folder in ["delegate", "egl"]:
        for path in sorted((REPO / folder).rglob("*.cc")):
            relative = str(path.relative_to(REPO))
            text = path.read_text()
            if relative == TABLE:
                body = text[text.index("DeveloperOverrides ReadDeveloperOverrides()"):]
                names = VARIABLE.findall(body)
            else:
                names = []
            names += [n for line in text.splitlines() if "getenv" in line
                      for n in VARIABLE.findall(line)]
            for name in names:
                found.setdefault(name, set()).add(relative)
    return found


def test_developer_switch_table_matches_the_code():
    read = variables_read_by_the_library()
    documented = ROW.findall((REPO / "docs" / "developer_overrides.md").read_text())
    # The table's own readers must have been found, or the pattern is stale.
    assert "TFLITE_GLES_X_STORAGE" in read and "TFLITE_GLES_EGL_PLATFORM" in read, read
    assert len(documented) == len(set(documented)), "a variable has two rows"
    undocumented = sorted(set(read) - set(documented))
    stale = sorted(set(documented) - set(read))
    assert not undocumented, ("read by the library but without a row in "
                              "docs/developer_overrides.md: " +
                              ", ".join(f"{n} ({', '.join(sorted(read[n]))})"
                                        for n in undocumented))
    assert not stale, ("rows in docs/developer_overrides.md for variables the library "
                       "no longer reads: " + ", ".join(stale))


def test_switches_are_read_only_in_the_table():
    # Product behaviour comes from options and the device profile: a getenv
    # of a TFLITE_GLES_* variable outside the table (and the two egl/ reads
    # the docs name) is a switch that escaped it.
    allowed = {TABLE, "egl/egl_environment.cc", "egl/gl_objects.cc"}
    escaped = [f"{p}: {n}" for n, paths in variables_read_by_the_library().items()
               for p in sorted(paths - allowed)]
    assert not escaped, escaped


def test_every_option_key_is_documented():
    code = (REPO / "delegate" / "options.cc").read_text()
    parser = code[code.index("StatusOr<Options> OptionsFromKeyValues"):]
    keys = set(re.findall(r'key == "([a-z0-9_]+)"', parser))
    assert {"storage", "egl_device", "quantization_simulator"} <= keys, keys
    readme = (REPO / "README.md").read_text()
    paragraph = readme[readme.index("Options (key/value strings"):
                       readme.index("An unknown key or bad value is refused")]
    named = set(re.findall(r"`([a-z0-9_]+)`", paragraph))
    # `inference_priority1..3` names three keys.
    named |= {f"inference_priority{i}" for i in (1, 2, 3)
              if "`inference_priority1..3`" in paragraph}
    assert not keys - named, f"option keys missing from README: {sorted(keys - named)}"
    describe = code[code.index("std::string DescribeOptionKeys()"):
                    code.index("StatusOr<Options> OptionsFromKeyValues")]
    missing = sorted(k for k in keys if not re.search(rf"\b{k}\b", describe))
    assert not missing, f"option keys missing from DescribeOptionKeys: {missing}"


def test_every_c_api_function_is_documented():
    header = (REPO / "delegate" / "include" / "tflite_gles" / "delegate.h").read_text()
    functions = set(re.findall(r"^[A-Za-z].*?\b(TfLiteGles[A-Za-z0-9]*)\(", header,
                               re.MULTILINE))
    assert {"TfLiteGlesDelegateCreate", "TfLiteGlesDelegateBindInputTexture"} <= functions
    docs = (REPO / "README.md").read_text() + "".join(
        p.read_text() for p in sorted((REPO / "docs").glob("*.md")))
    missing = sorted(f for f in functions if not re.search(rf"\b{f}\b", docs))
    assert not missing, f"C API functions named nowhere in README.md or docs/: {missing}"
