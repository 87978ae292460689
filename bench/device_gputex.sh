#!/bin/bash
# Texture in / texture out against the copy path on the NVIDIA device machine
# (issue 16's goal: selfie segmentation >= 25 % faster per frame end to end
# with both textures bound). One call, under 4 minutes:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_gputex.sh
# Needs the carried libtflite_gles.so of this branch and selfie_segmentation
# in $TFLITE_GLES_MODELS. Writes under $OUT:
#   gputex-{fp32,fp16}.json   every frame's time per mode (bench/texture_io_bench.py)
#   gputex-tests.txt          the texture tests on the GPU
# ROUNDS (default 200) sets the interleaved rounds per precision.
# and prints the two tables last.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
mkdir -p "$OUT" ../shared/models
cp "$M"/*.tflite ../shared/models/ 2>/dev/null   # where the tests look for the models
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/python/test_gpu_io_textures.py \
  > "$OUT/gputex-tests.txt" 2>&1
tail -n 2 "$OUT/gputex-tests.txt"
for precision in fp32 fp16; do
  flag=""; [ "$precision" = fp16 ] && flag="--fp16"
  timeout 70 python3 bench/texture_io_bench.py --model "$M/selfie_segmentation.tflite" \
    $flag --rounds "${ROUNDS:-200}" --warmup 10 --json "$OUT/gputex-$precision.json" \
    > "$OUT/gputex-$precision.txt" 2>&1
done
for precision in fp32 fp16; do
  echo "== $precision: $(grep -m1 '^INFO: tflite-gles: delegated' "$OUT/gputex-$precision.txt")"
  grep -v "^INFO\|^WARNING" "$OUT/gputex-$precision.txt" | tail -n 6
done
