#!/usr/bin/env bash
# Configures and builds tflite-gles into ./build (Release; every shader variant
# is validated by glslangValidator during the build).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" > build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j"$(nproc)" >> build.log 2>&1 || { tail -n 60 build.log; exit 1; }
echo "build: ok (build/libtflite_gles.so)"
