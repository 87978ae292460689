#!/bin/bash
# Session 15's closing check on the NVIDIA device machine (issue 18), from the
# repository root with the merged library in build/, the session's base
# library in .devbuild/base/ and a variant in .devbuild/loops/ (the merged
# tree with conv2d_window.comp's taps written out only at >= 4 pixels per
# invocation, as loops at style's 2):
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_s15.sh
# 1. cold start, style fp32, every cache empty: base, merged, loops (twice);
# 2. style's four largest layers (conv_sweep timer queries, min of 4x6),
#    merged vs loops, fp32 and fp16: what the written-out taps buy.
# Prints short tables; writes cold.md, layers-*.md under $OUT.
source "$(dirname "$0")/device_common.sh"
BASE_LIB=$(readlink -f "$BASE_LIB")
LOOPS_LIB=$(readlink -f .devbuild/loops/libtflite_gles.so)
STYLE=$M/style_transfer_f16_384.tflite
timeout 40 python3 bench/cold_start.py --model "$STYLE" --cases empty --repeats 2 \
  --lib "base=$BASE_LIB" --lib "merged=$NEW_LIB" --lib "loops=$LOOPS_LIB" > "$OUT/cold.md" 2>&1
MATCH=(--match "CONV_2D v1 @3 " --match "CONV_2D v1 @272 " --match "CONV_2D v1 @240 "
       --match "CONV_2D v1 @256 ")
for lib in merged loops; do
  L=$NEW_LIB; [ $lib = loops ] && L=$LOOPS_LIB
  TFLITE_GLES_LIB=$L timeout 30 python3 bench/conv_sweep.py --model "$STYLE" --stat min \
    --rounds 4 --per-round 6 --peak 67 --variant f32: \
    --variant "f16:$F16" \
    "${MATCH[@]}" 2>&1 | grep -v "^INFO\|^WARNING: All log" > "$OUT/layers-$lib.md"
done
echo "== cold start, style fp32, empty caches (apply + first invoke, ms)"
grep -E "^repeat|^\|" "$OUT/cold.md" | head -12
for lib in merged loops; do echo "== layers, $lib"; grep -E "^@|^sum|^invoke" "$OUT/layers-$lib.md"; done
