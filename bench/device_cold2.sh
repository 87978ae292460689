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
source bench/device_cold_setup.sh
timeout 225 python3 bench/cold_start.py "${COLD_LIBS[@]}" --repeats 3 --max-seconds 150 \
  --cases empty,write,filled \
  --model mobilenet_v1_1.0_224 mobilenet_v1_0.25_224 deeplabv3_257_mv_gpu \
  --json "$OUT/cold2-nvidia.json" > "$OUT/cold2-nvidia.txt" 2>&1
echo "rc=$? ($(grep -c '^repeat' "$OUT/cold2-nvidia.txt") model/library rounds)"
grep -E "^model|^short|^\|" "$OUT/cold2-nvidia.txt"
