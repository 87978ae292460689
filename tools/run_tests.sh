#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test: the C++ shader-level
# tests (ctest) and the Python tests against the real LiteRT runtime (pytest).
# A missing GPU/EGL is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh
echo "== C++ tests (ctest) =="
ctest --test-dir build --output-on-failure -j1
echo "== Python tests (pytest) =="
bash tools/python.sh -m pytest -q tests/python "$@"
