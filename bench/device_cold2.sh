#!/bin/bash
# Cold start with the serialization cache filled (issue 17, part 3; helper
# cold2): the base library against this branch's, interleaved, on the
# NVIDIA device machine, one call of about 3-4 minutes:
#   DIR=.devbuild source bench/device_env.sh && BASE_LIB=.devbuild-base/libtflite_gles.so \
#     bash bench/device_cold2.sh
# BASE_LIB: the library before this branch (main at 7f7fe44, or main before
# the merge), built and carried beside .devbuild, e.g. as .devbuild-base/
# (without it only this branch's library is measured; the % of empty column
# still says where MobileNet stands against the 15 % goal). Models: the
# MobileNet v1 1.0 stand-in (the 17 % of docs/perf/cold_start.md), the
# shared MobileNet v1 0.25 and deeplabv3 (the largest shared model). Every
# process has a new empty HOME/XDG_CACHE_HOME and no driver cache variables
# (bench/cold_start.py), so only serialization_dir can help. Cases per
# model and library: empty (no serialization cache), write (fills a new
# folder), filled (starts from it). Writes under $OUT: cold2-nvidia.txt
# (every process and the table), cold2-nvidia.json; prints the table last.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
mkdir -p "$OUT" ../shared/models
cp "$M"/*.tflite ../shared/models/   # where the model catalog looks for them
unset __GL_SHADER_DISK_CACHE_PATH __GL_SHADER_DISK_CACHE MESA_SHADER_CACHE_DIR
LIBS=(--lib "new=$PWD/build/libtflite_gles.so")
if [ -n "${BASE_LIB:-}" ]; then
  # Copied so that its file (whose size and time key its model data) is its own.
  mkdir -p /tmp/cold2-base && cp -L "$BASE_LIB" /tmp/cold2-base/libtflite_gles.so
  LIBS=(--lib "base=/tmp/cold2-base/libtflite_gles.so" "${LIBS[@]}")
fi
# The stand-in is built once before the timed runs.
python3 -c "import sys; sys.path[:0]=['tools','tests/python']; import model_catalog as mc; \
mc.CATALOG['mobilenet_v1_1.0_224'].path" > /dev/null 2>&1
timeout 225 python3 bench/cold2_ab.py "${LIBS[@]}" --repeats 3 --max-seconds 150 \
  --model mobilenet_v1_1.0_224 mobilenet_v1_0.25_224 deeplabv3_257_mv_gpu \
  --json "$OUT/cold2-nvidia.json" > "$OUT/cold2-nvidia.txt" 2>&1
echo "rc=$? ($(grep -c '^repeat' "$OUT/cold2-nvidia.txt") model/library rounds)"
grep -E "^medians|^\|" "$OUT/cold2-nvidia.txt"
