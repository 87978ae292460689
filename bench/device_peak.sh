#!/bin/bash
# peak, session 11 (issue 18): conv2d.comp's shared-memory tiles (SMEM_TILE)
# against the session's default kernels, one call, from the repository root:
#   DIR=.devbuild source bench/device_env.sh && cp -a .devperf/libtflite_gles.so* build/ &&
#   bash bench/device_peak.sh
# One library; the base is the same library with TFLITE_GLES_X_CONV_SMEM_TILE=0
# (K_SPLIT's 2x2 tile, as before), every variant in one process per model
# (per-dispatch timer queries: bench/conv_sweep.py; whole-model wall:
# bench/options_ab.py), invokes interleaved. Prints a short table last.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
B=$(cd "$(dirname "$0")/.." && pwd)/bench
[ -f "$(dirname "$0")/conv_sweep.py" ] && B=$(cd "$(dirname "$0")" && pwd)  # .devperf/ copies
[ -f "$B/conv_sweep.py" ] || B=$PWD/bench  # run from .devperf/: the checkout's bench/
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
S=env.TFLITE_GLES_X_CONV_SMEM_TILE
V=("f32-base:$S=0" "f32-tile:" "f16-base:$F16,$S=0" "f16-tile:$F16"
   "f16-tile-math2:$F16,env.TFLITE_GLES_X_FP16_MATH=2")
args=(); for v in "${V[@]}"; do args+=(--variant "$v"); done
for m in style_transfer_f16_384 deeplabv3_257_mv_gpu; do
  for stat in median min; do
    timeout 150 python3 "$B/conv_sweep.py" --model "$M/$m.tflite" --top 8 --stat $stat \
      --rounds 8 --per-round 10 "${args[@]}" 2>&1 | grep -v "^INFO\|^WARNING: All log"
  done > "$OUT/peak-sweep-$m.md"
done
for m in style_transfer_f16_384 deeplabv3_257_mv_gpu selfie_segmentation; do
  timeout 150 python3 "$PWD/bench/options_ab.py" --model "$M/$m.tflite" --iterations 400 "${args[@]}" \
    2>/dev/null | grep -v "^INFO" > "$OUT/peak-ab-$m.md"
done
cat "$OUT"/peak-sweep-*.md "$OUT"/peak-ab-*.md
