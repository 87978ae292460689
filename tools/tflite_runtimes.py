"""The TFLite Python runtime that the tools and tests run on: ai-edge-litert
(LiteRT 2.3, the project's default) or tflite-runtime (TensorFlow 2.14's
interpreter, what Raspberry Pi users run).

TFLITE_GLES_TEST_RUNTIME=ai_edge_litert|tflite_runtime picks one; unset, the
first importable of the two in that order. Everything that touches the
runtime imports it from here, so one switch moves the tests between them:

    from tflite_runtimes import Interpreter, OpResolverType, load_delegate, schema

`schema` is the TFLite flatbuffer schema's generated Python object API, which
tools/tflite_builder.py writes models with and the tests read them with. It
describes the file format, not the runtime, and tflite-runtime ships none:
under tflite-runtime it is LiteRT's schema_py_generated.py (pure Python over
the flatbuffers package) taken from the project's LiteRT environment by path,
without importing ai_edge_litert itself. LiteRT's schema is a superset of
TF 2.14's; the builder also fills deprecated_builtin_code, which TF 2.14 reads,
and flatbuffer readers ignore fields they do not know.
"""

from __future__ import annotations

import glob
import importlib
import importlib.util
import os
import sys
from pathlib import Path

RUNTIMES = ("ai_edge_litert", "tflite_runtime")
REPO = Path(__file__).resolve().parents[1]


def _choose() -> str:
    wanted = os.environ.get("TFLITE_GLES_TEST_RUNTIME", "")
    if wanted:
        if wanted not in RUNTIMES:
            raise ImportError(f"TFLITE_GLES_TEST_RUNTIME={wanted!r}: expected one of "
                              f"{', '.join(RUNTIMES)}")
        return wanted
    for name in RUNTIMES:
        if importlib.util.find_spec(name) is not None:
            return name
    raise ImportError("neither ai_edge_litert nor tflite_runtime is importable: run "
                      "'bash tools/install_deps.sh' and use .venv/bin/python "
                      "(or .venv-tflite-runtime/bin/python)")


def _litert_schema_file() -> Path:
    """schema_py_generated.py of an ai-edge-litert install that this Python
    cannot import (the LiteRT venv, TFLITE_GLES_VENV or ./.venv)."""
    explicit = os.environ.get("TFLITE_GLES_SCHEMA_PY")
    if explicit:
        return Path(explicit)
    venv = Path(os.environ.get("TFLITE_GLES_VENV", REPO / ".venv"))
    found = sorted(glob.glob(str(venv / "lib" / "python3*" / "site-packages" /
                                 "ai_edge_litert" / "schema_py_generated.py")))
    if not found:
        raise ImportError(
            f"tflite-runtime has no TFLite schema module, and no ai-edge-litert under {venv} "
            "provides one: run 'bash tools/install_deps.sh' or set TFLITE_GLES_SCHEMA_PY")
    return Path(found[-1])


def _load_schema():
    if importlib.util.find_spec("ai_edge_litert") is not None:
        return importlib.import_module("ai_edge_litert.schema_py_generated")
    path = _litert_schema_file()
    spec = importlib.util.spec_from_file_location("tflite_gles_litert_schema", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


RUNTIME = _choose()
_interpreter_module = importlib.import_module(f"{RUNTIME}.interpreter")
Interpreter = _interpreter_module.Interpreter
OpResolverType = _interpreter_module.OpResolverType
load_delegate = _interpreter_module.load_delegate
schema = _load_schema()


def version() -> str:
    """The chosen runtime's package version, e.g. 'tflite_runtime 2.14.0'."""
    package = importlib.import_module(RUNTIME)
    return f"{RUNTIME} {getattr(package, '__version__', '?')}"
