#!/usr/bin/env bash
# Runs the project's Python (the virtual environment tools/install_deps.sh
# made) with the given arguments, e.g. `bash tools/python.sh tools/run_model.py --help`.
# By hand, `source .venv/bin/activate` gives the same interpreter as `python`.
set -euo pipefail
VENV=${TFLITE_GLES_VENV:-$(cd "$(dirname "$0")/.." && pwd)/.venv}
if [ ! -x "$VENV/bin/python" ]; then
  echo "tools/python.sh: no virtual environment at $VENV: run 'bash tools/install_deps.sh' first" >&2
  exit 1
fi
exec "$VENV/bin/python" "$@"
