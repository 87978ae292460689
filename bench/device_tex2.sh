#!/bin/bash
# Textures read and written in place (branch tex2, issue 16's goal: selfie
# segmentation >= 25 % faster per frame end to end with texture in and out
# than with the copy path) on the NVIDIA device machine, against a base
# library in the same process (six interpreters interleaved frame by frame:
# base/new x copy / texture in / texture in + out). One call, ~2 minutes:
#   BASE_LIB=.devbuild/base/libtflite_gles.so DIR=.devbuild \
#     bash -c 'source bench/device_env.sh && bash bench/device_tex2.sh'
# Needs: this branch's libtflite_gles.so carried in $DIR (device_env.sh puts
# it in build/), main's library (before tex2) at $BASE_LIB (optional: without
# it only this library's three modes run), selfie_segmentation in
# $TFLITE_GLES_MODELS. Writes under $OUT:
#   tex2-tests.txt          the texture tests on the GPU (in place on NVIDIA's
#                           own paths: fused upload, direct transfers)
#   tex2-{fp32,fp16}.json   every frame's time per mode and library
#   tex2-{fp32,fp16}.txt    the bench's tables
#   tex2-timeline.txt       the invoke time line of each mode (this library)
# ROUNDS (default 300) sets the interleaved rounds per precision. If the two
# libraries cannot share one process, each runs in its own, alternately
# (tex2-*-{base,new}-N.txt), and the table says so.
source "$(dirname "$0")/device_common.sh"
LIB=${TFLITE_GLES_LIB:-$PWD/build/libtflite_gles.so}
BASE=${BASE_LIB:-}
[ -n "$BASE" ] && BASE=$(readlink -f "$BASE")
device_place_models
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/python/test_gpu_io_textures.py \
  tests/python/test_gpu_io_textures_in_place.py > "$OUT/tex2-tests.txt" 2>&1
tail -n 2 "$OUT/tex2-tests.txt"
for precision in fp32 fp16; do
  flag=""; [ "$precision" = fp16 ] && flag="--fp16"
  base_flag=()
  [ -n "$BASE" ] && base_flag=(--base-library "$BASE")
  timeout 80 python3 bench/texture_io_bench.py --model "$M/selfie_segmentation.tflite" \
    --library "$LIB" "${base_flag[@]}" $flag --rounds "${ROUNDS:-300}" --warmup 20 \
    --json "$OUT/tex2-$precision.json" > "$OUT/tex2-$precision.txt" 2>&1
  rc=$?
  if [ $rc -ne 0 ] && [ -n "$BASE" ]; then
    # Fallback: one process per library, alternating, 3 times each.
    echo "in-process A/B failed (rc $rc), alternating processes" >> "$OUT/tex2-$precision.txt"
    for n in 1 2 3; do
      for which in base new; do
        lib=$LIB; [ $which = base ] && lib=$BASE
        timeout 25 python3 bench/texture_io_bench.py --model "$M/selfie_segmentation.tflite" \
          --library "$lib" $flag --rounds 150 --warmup 10 \
          > "$OUT/tex2-$precision-$which-$n.txt" 2>&1
      done
    done
  fi
done
# Where the frame goes (diagnostic, this library, fp32): the invoke time line
# (TFLITE_GLES_X_TIMELINE: CPU issue times and GPU stamps after every
# dispatch, means of 200 invokes, one report per interpreter: copy, tex_in,
# tex_in_out in that order).
TFLITE_GLES_X_TIMELINE=1 timeout 40 python3 bench/texture_io_bench.py \
  --model "$M/selfie_segmentation.tflite" --library "$LIB" --rounds 200 --warmup 1 \
  > "$OUT/tex2-timeline.txt" 2>&1
for precision in fp32 fp16; do
  echo "== $precision: $(grep -m1 '^INFO: tflite-gles: delegated' "$OUT/tex2-$precision.txt")"
  grep -v "^INFO\|^WARNING" "$OUT/tex2-$precision.txt" | tail -n 9
  for f in "$OUT"/tex2-$precision-*-*.txt; do
    [ -e "$f" ] || continue
    echo "-- $(basename "$f"): $(grep '| tex_in_out \|| copy ' "$f" | cut -d'|' -f2-3,7 | tr '\n' ' ')"
  done
done
echo "== time line (copy, tex_in, tex_in_out):"
grep "mean of 200 invokes" "$OUT/tex2-timeline.txt" | sed 's/INFO: tflite-gles: //; s/, us from the start of the invoke//'
