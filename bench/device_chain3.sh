#!/bin/bash
# chain3, session 15 (issue 18): the hair stand-in's bottlenecks as one
# dispatch each (shaders/gemm_chain.comp HEAD, delegate/passes/
# gemm_chain_head.h, TFLITE_GLES_X_FUSE_CHAIN_HEADS: the 3x3 + PRELU as stage 0
# of the GEMM pair after it) on the NVIDIA device machine, from the
# repository root after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_chain3.sh
# This is call 3's version: the library's numbers and the wall. (Calls 1-2's
# GPU timer-query sweeps of heads on / off, stage-0 splits, the 16-step pair
# and fp16 precisions: commit 13b6a89's version of this file.)
# 1. bench/device_chain3_accuracy.py: the builtin twin against the CPU, heads
#    off / on, fp32 and fp16 (relative L2, argmax mask agreement).
# 2. The new library's GPU time line of the stand-in (bench/wall_split.py,
#    TFLITE_GLES_X_TIMELINE=1), fp32 and fp16; whole logs in $OUT.
# 3. run_bench.py base / new interleaved (ours fp32 + fp16), the stand-in,
#    two rounds, LiteRT GPU's row once between them and once after.
# Everything in $OUT/chain3-rb.txt; under 90 s (steps cut to end by ~85 s);
# the decisive lines are last.
source "$(dirname "$0")/device_common.sh"
HAIR=build/models/hair_segmentation_512.tflite
python3 tools/build_standins.py build/models hair_segmentation_512 \
  hair_segmentation_512_builtin > /tmp/chain3-standins.txt 2>&1
RB=$OUT/chain3-rb.txt
: > "$RB"
# left LIMIT: LIMIT, or less so that the script ends by ~85 s; 0 past that.
left() {
  local rest=$((84 - SECONDS))
  if [ "$rest" -lt 4 ]; then echo 0
  elif [ "$rest" -lt "$1" ]; then echo "$rest"
  else echo "$1"; fi
}
echo "== accuracy, builtin twin vs the CPU" >> "$RB"
TFLITE_GLES_LIB=$NEW_LIB timeout "$(left 12)" python3 bench/device_chain3_accuracy.py \
  build/models/hair_segmentation_512_builtin.tflite 2>&1 | grep "^|" >> "$RB"
for v in "fp32:" "fp16:$F16"; do
  t=$(left 10)
  [ "$t" -gt 0 ] || break
  TFLITE_GLES_LIB=$NEW_LIB TFLITE_GLES_X_TIMELINE=1 timeout "$t" python3 bench/wall_split.py \
    --model "$HAIR" --iterations 150 --variant "$v" > "$OUT/timeline-new-${v%%:*}.txt" 2>&1
done
device_timeline_summary >> "$RB"
rounds() {
  local t
  t=$(left "$1"); shift
  [ "$t" -gt 0 ] && device_rounds "$RB" "$t" "$@"
}
litert() {
  local t
  t=$(left 9)
  [ "$t" -gt 0 ] && device_litert_gpu "$RB" "$t" --standin hair_segmentation_512
}
rounds 9 "base new" --standin hair_segmentation_512
litert
rounds 9 "base2 new2" --standin hair_segmentation_512
litert
cat "$RB"
echo "== done at ${SECONDS} s"
