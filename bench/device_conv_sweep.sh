#!/bin/bash
# conv, session 10 (issue 18): tile sweep of the compute-bound convolutions on
# the NVIDIA device machine, one call, from the repository root:
#   DIR=.devbuild source bench/device_env.sh && cp -a .devperf/libtflite_gles.so* build/ &&
#   bash bench/device_conv_sweep.sh
# Every variant runs in one process per model and precision (bench/conv_sweep.py,
# per-dispatch GPU timer queries, invokes interleaved). conv2d.comp K_SPLIT's
# tile is TFLITE_GLES_X_CONV_TILE=ROWS/SLICES/PARTS/LOCAL_X/STEP (4/2/4/32/1 =
# the session-9 kernel); gemm.comp's is TFLITE_GLES_GEMM_TILE=TM/TN/TR/TS/KP.
set -u
D=$(dirname "$0")  # this script's folder: bench/, or .devperf/ on the device
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
T=env.TFLITE_GLES_X_CONV_TILE
G=env.TFLITE_GLES_GEMM_TILE
sweep() {  # model precision-options variants...
  local model=$1 opts=$2; shift 2
  local vs=()
  for v in "$@"; do
    local name=${v%%:*} rest=${v#*:}
    vs+=(--variant "$name:${opts}${opts:+${rest:+,}}$rest")
  done
  timeout 120 python3 "$D/conv_sweep.py" --model "$M/$model.tflite" --top 8 "${vs[@]}" 2>&1 \
    | grep -v "^INFO\|^WARNING: All log"
}
timeout 60 python3 "$D/fp16_probe.py" > "$OUT/fp16-probe.md" 2>&1
if [ "${ROUND:-1}" = 2 ]; then
  STYLE=("base:$T=4/2/4/32/1" "2x2:$T=2/2/4/32/32" "2x2s1:$T=2/2/4/32/1" "2x1:$T=2/1/4/32/32"
         "1x2:$T=1/2/4/32/32" "2x2k8:$T=2/2/8/32/32" "2x2k2:$T=2/2/2/32/32" "2x2w64:$T=2/2/4/64/64"
         "1x1:$T=1/1/4/32/32" "4x1:$T=4/1/4/32/32" "1x2k8:$T=1/2/8/16/16")
  {
    echo "## style fp32"; sweep style_transfer_f16_384 "" "${STYLE[@]}"
    echo "## style fp16"; sweep style_transfer_f16_384 "$F16" "${STYLE[@]}"
  } > "$OUT/conv2-style.md"
  cat "$OUT/fp16-probe.md" "$OUT/conv2-style.md"
  exit 0
fi
STYLE=("base:$T=4/2/4/32/1" "strided:$T=4/2/4/32/32" "8x2:$T=8/2/4/32/32"
       "4x4:$T=4/4/4/32/32" "8x2k2w64:$T=8/2/2/64/64" "4x2k8:$T=4/2/8/32/32"
       "2x2:$T=2/2/4/32/32" "8x4k2w64:$T=8/4/2/64/64" "4x2w64:$T=4/2/4/64/64"
       "nosplit:env.TFLITE_GLES_X_CONV_KSPLIT=0")
{
  echo "## style fp32"; sweep style_transfer_f16_384 "" "${STYLE[@]}"
  echo "## style fp16"; sweep style_transfer_f16_384 "$F16" "${STYLE[@]:0:6}"
} > "$OUT/conv-style.md"
DL=("base:" "g4x2:$G=4/2/16/4/4" "g4x4:$G=4/4/16/4/2" "g8x1:$G=8/1/16/4/4"
    "g2x2:$G=2/2/16/4/4" "g4x2k2:$G=4/2/16/4/2" "g4x2t8:$G=4/2/8/8/4" "g8x2:$G=8/2/16/4/2"
    "g2x1k8:$G=2/1/16/4/8")
{
  echo "## deeplab fp32"; sweep deeplabv3_257_mv_gpu "" "${DL[@]}"
  echo "## deeplab fp16"; sweep deeplabv3_257_mv_gpu "$F16" "${DL[@]:0:5}"
} > "$OUT/conv-deeplab.md"
cat "$OUT/fp16-probe.md" "$OUT/conv-style.md" "$OUT/conv-deeplab.md"
