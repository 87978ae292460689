#!/bin/bash
# hair3, session 14 (issue 18): the hair stand-in's 56 1x1 GEMMs
# (shaders/gemm.comp, 0.73 ms of its 1.65 ms of GPU time on the H100) on the
# NVIDIA device machine, from the repository root after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_hair3.sh
# 1. bench/conv_sweep.py --shader (GPU timer queries per dispatch, every
#    variant in one process, their invokes interleaved; JSON of every
#    dispatch per variant): each GEMM of the stand-in under the chosen tile
#    (narrow outputs' idle THREADS_S on rows, TFLITE_GLES_X_GEMM_NARROW, on
#    and off) and under tiles forced for all (TFLITE_GLES_GEMM_TILE=
#    TM/TN/TR/TS/KP), with the GEMM pairs unfused; then the pairs
#    (shaders/gemm_chain.comp, TFLITE_GLES_X_FUSE_GEMM_PAIRS) on and off.
# 2. bench/options_ab.py (wall of set_tensor + invoke + get_tensor, one
#    process, 300 interleaved invokes): pairs and narrow tiles on / off,
#    fp32 and fp16; the outputs' largest difference between them.
# 3. run_bench.py base / new (ours fp32 + fp16) on the stand-in and its
#    builtin twin, and LiteRT GPU's row once.
# Under 100 s; the short tables are last.
source "$(dirname "$0")/device_common.sh"
HAIR=build/models/hair_segmentation_512.tflite
python3 tools/build_standins.py build/models hair_segmentation_512 \
  hair_segmentation_512_builtin > "$OUT/standins.txt" 2>&1
G=env.TFLITE_GLES_GEMM_TILE
N=env.TFLITE_GLES_X_GEMM_NARROW
P=env.TFLITE_GLES_X_FUSE_GEMM_PAIRS
# sweep NAME MODEL PRECISION_OPTIONS SHADERS ROUNDS LIMIT VARIANT...:
# conv_sweep.py's table of the SHADERS' dispatches into $OUT/sweep-NAME.md
# (JSON beside it), each variant's options after the precision's.
sweep() {
  local name=$1 model=$2 opts=$3 shaders=$4 rounds=$5 limit=$6 v vs=()
  shift 6
  for v in "$@"; do
    local vname=${v%%:*} rest=${v#*:}
    vs+=(--variant "$vname:${opts}${opts:+${rest:+,}}$rest")
  done
  timeout "$limit" python3 bench/conv_sweep.py --model "$model" --shader "$shaders" \
    --rounds "$rounds" --per-round 4 --json "$OUT/sweep-$name.json" "${vs[@]}" 2>&1 \
    | grep -v "^INFO\|^WARNING" > "$OUT/sweep-$name.md"
}
TILES=("rule:$P=0" "old:$P=0,$N=0" "4x1k4:$P=0,$G=4/1/16/4/4" "2x1k8:$P=0,$G=2/1/16/4/8"
       "2x1k16:$P=0,$G=2/1/16/4/16" "1x1k8:$P=0,$G=1/1/16/4/8" "1x1k16:$P=0,$G=1/1/16/4/16"
       "4x1k2:$P=0,$G=4/1/16/4/2" "2x2k4:$P=0,$G=2/2/16/4/4" "1x2k8:$P=0,$G=1/2/16/4/8"
       "2x1s8k8:$P=0,$G=2/1/8/8/8" "4x1s1k4:$P=0,$G=4/1/64/1/4" "4x1k1:$P=0,$G=4/1/16/4/1")
# (conv_sweep.py prints the rounds done when its timeout stops it.)
sweep tiles-fp32 "$HAIR" "" gemm 10 17 "${TILES[@]}"
PAIRS=("pairs:" "nopairs:$P=0" "pairs-old:$N=0")
sweep pairs-fp32 "$HAIR" "" gemm,gemm_chain 20 9 "${PAIRS[@]}"
sweep pairs-fp16 "$HAIR" "$F16" gemm,gemm_chain 20 9 "${PAIRS[@]}"
TFLITE_GLES_LIB=$NEW_LIB timeout 16 python3 bench/options_ab.py --model "$HAIR" --iterations 300 \
  --variant fp32: --variant "fp32-nopairs:$P=0" --variant "fp32-old:$P=0,$N=0" \
  --variant "fp16:$F16" --variant "fp16-nopairs:$F16,$P=0" --variant "fp16-old:$F16,$P=0,$N=0" \
  2>&1 | grep -v "^INFO\|^WARNING" > "$OUT/ab.txt"
RB=(--standin hair_segmentation_512 --standin hair_segmentation_512_builtin)
device_rounds "$OUT/rb.txt" 15 "base new" "${RB[@]}"
device_litert_gpu "$OUT/rb.txt" 10 "${RB[@]}"
for f in "$OUT"/sweep-*.md; do
  echo "== $(basename "$f")"
  sed -n 2p "$f"
  grep -E "^\| (sum|invoke)" "$f"
done
grep -E "^\||invokes per" "$OUT/ab.txt"
cat "$OUT/rb.txt"
