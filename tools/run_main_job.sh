#!/usr/bin/env bash
# Installs dependencies, builds, and runs the main job: a model through the
# delegate on the default EGL device, compared with the CPU. Extra arguments
# go to tools/run_model.py (--help lists them).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh
bash tools/python.sh tools/run_model.py "$@"
