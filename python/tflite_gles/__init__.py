"""tflite-gles: the OpenGL ES 3.1 compute-shader GPU delegate for TensorFlow Lite.

    import tflite_gles
    from ai_edge_litert.interpreter import Interpreter   # or tflite_runtime.interpreter

    delegate = tflite_gles.load_delegate({"precision_loss_allowed": True})
    interpreter = Interpreter(model_path="model.tflite", experimental_delegates=[delegate])

`library_path()` is the delegate's shared library inside this package, for
programs that take `--external_delegate_path` (benchmark_model, label_image)
or for ctypes. The options are those of the README ("Using it").
"""

from __future__ import annotations

import importlib
import importlib.util
import os

__all__ = ["library_path", "load_delegate", "runtime"]

_LIBRARY = "libtflite_gles.so"
# The Python runtimes whose load_delegate takes an external delegate library,
# in the order they are tried: LiteRT first, tflite-runtime (TF 2.14, what
# Raspberry Pi OS users run) where LiteRT is not installed.
_RUNTIMES = ("ai_edge_litert", "tflite_runtime")

try:
    from importlib.metadata import PackageNotFoundError, version as _version
    __version__ = _version("tflite-gles")
except (ImportError, PackageNotFoundError):  # run from a source tree
    __version__ = "unknown"


def library_path() -> str:
    """Absolute path of the installed libtflite_gles.so."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), _LIBRARY)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path} is missing: this tflite_gles package was not installed from a wheel "
            "(pip install <repository>), so the delegate library was never built into it")
    return path


def runtime() -> str:
    """The runtime load_delegate uses: 'ai_edge_litert' or 'tflite_runtime'."""
    for name in _RUNTIMES:
        # find_spec, not a guarded import: a runtime that is installed but
        # fails to import (e.g. built for another NumPy) must say so, not be
        # passed over for the other one.
        if importlib.util.find_spec(name) is not None:
            return name
    raise ImportError("tflite_gles needs a TensorFlow Lite Python runtime: "
                      "pip install ai-edge-litert (or tflite-runtime)")


def _option_value(value) -> str:
    # The delegate parses "true"/"false"; str(True) would give "True".
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def load_delegate(options: dict | None = None):
    """A new GPU delegate for the runtime's Interpreter(experimental_delegates=[...]).

    `options` maps option names to values (strings, numbers or booleans).
    An unknown option or a bad value raises ValueError from the runtime, with
    the delegate's message listing the valid ones."""
    interpreter = importlib.import_module(f"{runtime()}.interpreter")
    values = {str(key): _option_value(value) for key, value in (options or {}).items()}
    return interpreter.load_delegate(library_path(), values)
