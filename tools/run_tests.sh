#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test: the C++ shader-level
# tests (ctest) and the Python tests against the real LiteRT runtime (pytest),
# then the ABI and model tests against tflite-runtime 2.14 too.
# A missing GPU/EGL is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh
echo "== C++ tests (ctest) =="
ctest --test-dir build --output-on-failure -j1
echo "== Python tests (pytest) =="
bash tools/python.sh -m pytest -q tests/python "$@"
# tflite-runtime 2.14 (what Raspberry Pi users run) exists for Python <= 3.11
# only; install_deps.sh makes its venv wherever the interpreter allows.
VENV_TFLITE_RUNTIME=${TFLITE_GLES_VENV_TFLITE_RUNTIME:-.venv-tflite-runtime}
if [ -x "$VENV_TFLITE_RUNTIME/bin/python" ]; then
  echo "== Python tests against tflite-runtime 2.14 (ABI, models, model builder, buffer handles, buffered graph inputs, zero-copy I/O) =="
  TFLITE_GLES_TEST_RUNTIME=tflite_runtime "$VENV_TFLITE_RUNTIME/bin/python" -m pytest -q \
    tests/python/test_abi.py tests/python/test_models.py tests/python/test_tflite_builder.py \
    tests/python/test_gpu_io_buffers.py tests/python/test_graph_inputs_with_data.py \
    tests/python/test_alias_io.py
else
  echo "== tflite-runtime 2.14 not run: its environment needs Python <= 3.11 (see install_deps.sh) =="
fi
