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
# 1. bench/conv_sweep.py (GPU timer queries per dispatch, variants in one
#    process, invokes interleaved): heads on / off and the variants below,
#    fp32 and fp16; the sums
#    per shader, per-dispatch JSON in $OUT/chain3-sweep-*.json, the tables in
#    $OUT/chain3-sweep.txt, and per variant the heads' / pairs' / 3x3s' count
#    and mean us (bench/device_chain3_summary.py).
# 2. bench/options_ab.py (wall of set_tensor + invoke + get_tensor, one
#    process, 300 interleaved invokes): heads on / off, fp32 and fp16, with
#    the outputs' largest difference.
# 3. run_bench.py base / new interleaved (ours fp32 + fp16): the stand-in in
#    two rounds, LiteRT GPU's row once between them; MobileNet v1 1.0 and
#    DeepLab in one shorter round.
# Everything in $OUT/chain3-rb.txt; under 100 s (steps cut to end by ~93 s);
# the decisive lines are last.
source "$(dirname "$0")/device_common.sh"
HAIR=build/models/hair_segmentation_512.tflite
python3 tools/build_standins.py build/models hair_segmentation_512 mobilenet_v1_1.0_224 \
  > /tmp/chain3-standins.txt 2>&1
H=env.TFLITE_GLES_X_FUSE_CHAIN_HEADS
SWEEP=$OUT/chain3-sweep.txt RB=$OUT/chain3-rb.txt
: > "$RB"
# left LIMIT: LIMIT, or less so that the script ends by ~93 s; 0 past that.
left() {
  local rest=$((92 - SECONDS))
  if [ "$rest" -lt 4 ]; then echo 0
  elif [ "$rest" -lt "$1" ]; then echo "$rest"
  else echo "$1"; fi
}
# sweep NAME OPTS LIMIT [NAME:OPTIONS...]: heads on / off and the other
# variants, each under the precision options OPTS; the sums and the heads'
# summary into $RB.
sweep() {
  local t name=$1 opts=$2 v rest vs=()
  t=$(left "$3"); [ "$t" -gt 0 ] || return
  shift 3
  for v in "heads:" "noheads:$H=0" "$@"; do
    rest=${v#*:}
    [ -n "$opts" ] && rest=$opts${rest:+,$rest}
    vs+=(--variant "${v%%:*}:$rest")
  done
  echo "== $name" >> "$SWEEP"
  timeout "$t" python3 bench/conv_sweep.py --model "$HAIR" --shader gemm_chain,conv2d,gemm \
    --rounds 20 --per-round 4 --json "$OUT/chain3-sweep-$name.json" "${vs[@]}" 2>&1 \
    | grep -v "^INFO\|^WARNING" >> "$SWEEP"
  echo "== $name" >> "$RB"
  sed -n "/^== $name\$/,\$p" "$SWEEP" | grep -E "^\| (sum|invoke)" >> "$RB"
  python3 bench/device_chain3_summary.py "$OUT/chain3-sweep-$name.json" >> "$RB" 2>&1
}
# Stage 0's split: the pair tile's third and fourth numbers force its parts
# and rows per invocation (the rule at 64x64 since call 1: 16 rows x 256, 16
# invocations a row, c's 8 slices 2 each x 4 parts, one row each). r2p4: 2
# rows per invocation, 4 parts (one slice each); r2p8: 2 rows, 8 parts (2
# slices each). s8: the pairs' first GEMM at most 8 input slices deep (as
# before: down2's main 1x1 of 16 stays apart from the projection after it).
# m0 (fp16): highp products and sums everywhere (TFLITE_GLES_X_FP16_MATH=0): the
# pairs' stages 1-2 in mediump since call 1 against highp, read on the pairs
# without a head (the 3x3s and the heads' stage 0 change with it too).
T=env.TFLITE_GLES_X_GEMM_PAIR_TILE
S8=env.TFLITE_GLES_X_GEMM_PAIR_STEPS=8
sweep fp32 "" 9 "s8:$S8" "r2p4:$T=16/256/4/2"
sweep fp16 "$F16" 10 "r2p4:$T=16/256/4/2" "r2p8:$T=16/256/8/2" "m0:env.TFLITE_GLES_X_FP16_MATH=0"
echo "== options_ab, hair stand-in (ms; max diff vs the first variant)" >> "$RB"
t=$(left 8)
[ "$t" -gt 0 ] && TFLITE_GLES_LIB=$NEW_LIB timeout "$t" python3 bench/options_ab.py \
  --model "$HAIR" --iterations 300 --variant fp32: --variant "fp32-noheads:$H=0" \
  --variant "fp16:$F16" --variant "fp16-noheads:$F16,$H=0" 2>&1 | grep -E "^\|" >> "$RB"
# run_bench per model (two models in one run took > 10 s in call 1: cut).
rounds() {
  local t
  t=$(left "$1"); shift
  [ "$t" -gt 0 ] && device_rounds "$RB" "$t" "$@"
}
rounds 9 "base new" --standin hair_segmentation_512
t=$(left 9)
[ "$t" -gt 0 ] && device_litert_gpu "$RB" "$t" --standin hair_segmentation_512
rounds 9 "base2 new2" --standin hair_segmentation_512
# MobileNet v1 1.0 and DeepLab (no pairs, no heads: the same programs), shorter rows.
for run in base3 new3; do
  t=$(left 9)
  [ "$t" -gt 0 ] || break
  echo "== $run" >> "$RB"
  TFLITE_GLES_LIB=$(device_lib "$run") timeout "$t" python3 bench/run_bench.py \
    --standin mobilenet_v1_1.0_224 --model "$M/deeplabv3_257_mv_gpu.tflite" \
    --backends gles_fp32,gles_fp16 --iterations 100 --max-seconds 0.5 --warmup-seconds 0.2 \
    --out-dir "/tmp/rb-$run" --name rb 2>&1 | grep "^|" >> "$RB"
done
cat "$RB"
echo "== done at ${SECONDS} s"
