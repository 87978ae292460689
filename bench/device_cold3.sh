#!/bin/bash
# Cold start with the serialization cache filled (issue 17, part 3; helper
# cold3): the library of the session start (.devbuild/base/) against this
# branch's (build/), interleaved, with the per-phase breakdown of the filled
# start (TFLITE_GLES_X_INIT_PHASES, egl/init_phases.h), one call of about
# 3-4 minutes on the NVIDIA device machine:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_cold3.sh
# BASE_LIB overrides the base library. Models: the MobileNet v1 1.0
# stand-in, MobileNet v1 0.25, deeplabv3 (the largest shared model); cases
# per model and library: empty (no serialization cache), write (fills a new
# folder), filled (starts from it), each a fresh process with a new empty
# HOME (bench/cold_start.py). Writes $OUT/cold3-nvidia.{txt,json}; prints
# the phase tables and the short table last.
set -u
BASE_LIB=${BASE_LIB:-.devbuild/base/libtflite_gles.so}
source bench/device_cold_setup.sh
# CHUNK256=1 adds this branch's library with the model-data entry uploaded
# in 256 KB pieces (llvmpipe's choice; same as whole blobs on the H100 at
# 18:02 UTC, docs/perf/log.md "cold3").
if [ -n "${CHUNK256:-}" ]; then
  COLD_LIBS+=(--lib "new_chunk256=$PWD/build/libtflite_gles.so,TFLITE_GLES_X_MODEL_DATA_CHUNK_KB=256")
fi
timeout 225 python3 bench/cold_start.py "${COLD_LIBS[@]}" --phases --repeats 4 \
  --max-seconds 150 --cases empty,write,filled \
  --model mobilenet_v1_1.0_224 mobilenet_v1_0.25_224 deeplabv3_257_mv_gpu \
  --json "$OUT/cold3-nvidia.json" > "$OUT/cold3-nvidia.txt" 2>&1
echo "rc=$? ($(grep -c '^repeat' "$OUT/cold3-nvidia.txt") model/library rounds)"
grep -E "^phases|^model|^short|^\|" "$OUT/cold3-nvidia.txt"
