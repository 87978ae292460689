#!/bin/bash
# Switch A/B on the NVIDIA device machine: the new library with its changes
# switched off and on, interleaved in one process per model
# (bench/options_ab.py), optionally profiled (bench/profile.py) and, with
# BASE_LIB, base against new library on every shared model (run_bench.py).
#   DIR=.devbuild source bench/device_env.sh &&
#   OFF="env.TFLITE_GLES_X_CONV_KSPLIT=0,..." [BASE_LIB=/tmp/base/libtflite_gles.so] \
#     bash bench/device_perf_ab.sh [MODEL...]       # default: style palm face selfie
# OFF: the variant settings that together give the base behaviour ("off");
# each model gets fp32-off, fp32-new, fp16-off, fp16-new (ITERATIONS, 300).
#
# The three calls of perf, session 9 (issue 18; docs/perf/log.md) are
# presets, with their exact variants (once bench/device_perf_ab.sh,
# _ab2.sh and _ab3.sh):
#   BASE_LIB=/tmp/base/libtflite_gles.so bash bench/device_perf_ab.sh s9-1
#       changes 1 (copy threads) and 2 (norm affine), each off and on;
#   BASE_LIB=/tmp/base/libtflite_gles.so bash bench/device_perf_ab.sh s9-2
#       change 3 (conv2d.comp K_SPLIT) and change 1's thread count;
#   bash bench/device_perf_ab.sh s9-3
#       change 3b: style's convolutions profiled with K_SPLIT off and on.
# The s9 calls had the base library saved first: mkdir -p /tmp/base &&
# cp -a build/libtflite_gles.so* /tmp/base/ && cp -a NEW/libtflite_gles.so* build/
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
C1="env.TFLITE_GLES_X_COPY_THREADS=1"     # change 1 off
A0="env.TFLITE_GLES_FUSE_NORM_AFFINE=0"   # change 2 off
K0="env.TFLITE_GLES_X_CONV_KSPLIT=0"      # change 3 off
AB="$OUT/ab.txt"

# ab MODEL TIMEOUT_S VARIANT...: one options_ab.py table, appended to $AB.
ab() {
  local model=$1 limit=$2; shift 2
  local args=()
  for v in "$@"; do args+=(--variant "$v"); done
  timeout "$limit" python3 bench/options_ab.py --model "$M/$model.tflite" \
    --iterations "${ITERATIONS:-300}" "${args[@]}" 2>&1 | grep -v "^INFO" >> "$AB"
}
# offnew TIMEOUT_S MODEL...: fp32/fp16, each with $OFF and without.
offnew() {
  local limit=$1; shift
  for m in "$@"; do
    ab "$m" "$limit" "fp32-off:$OFF" fp32-new: "fp16-off:$F16,$OFF" "fp16-new:$F16"
  done
}
# profile_style TOP KSPLIT...: style fp32's dispatches, per K_SPLIT value
# ("default": the variable unset).
profile_style() {
  local top=$1; shift
  for k in "$@"; do
    echo "== style fp32, TFLITE_GLES_X_CONV_KSPLIT=$k" >> "$OUT/prof-style.txt"
    ( [ "$k" = default ] || export TFLITE_GLES_X_CONV_KSPLIT=$k
      timeout 60 python3 bench/profile.py --iterations 30 \
        --model "$M/style_transfer_f16_384.tflite" --top "$top" ) >> "$OUT/prof-style.txt" 2>&1
  done
}
# base_vs_new MAX_SECONDS: run_bench.py rows, BASE_LIB's then build/'s.
base_vs_new() {
  local models=()
  for m in deeplabv3_257_mv_gpu style_transfer_f16_384 selfie_segmentation \
           palm_detection_full face_detection_short_range mobilenet_v1_0.25_224; do
    models+=(--model "$M/$m.tflite")
  done
  for lib in base new; do
    [ $lib = base ] && L=$BASE_LIB || L=$PWD/build/libtflite_gles.so
    echo "== $lib" >> "$OUT/rb-all.txt"
    TFLITE_GLES_LIB=$L timeout 150 python3 bench/run_bench.py "${models[@]}" \
      --standin mobilenet_v1_1.0_224 --backends gles_fp32,gles_fp16 --iterations 200 \
      --max-seconds "$1" --out-dir /tmp/rb-$lib --name rb 2>&1 | grep "^|" >> "$OUT/rb-all.txt"
  done
}

preset=${1:-}
case $preset in
  s9-1)
    : "${BASE_LIB:?BASE_LIB=/path/to/base/libtflite_gles.so}"
    ab deeplabv3_257_mv_gpu 100 "fp32-off:$C1" fp32-copy: "fp16-off:$F16,$C1" "fp16-copy:$F16"
    ab style_transfer_f16_384 150 "fp32-off:$C1,$A0" "fp32-copy:$A0" "fp32-affine:$C1" \
      fp32-both: "fp16-off:$F16,$C1,$A0" "fp16-copy:$F16,$A0" "fp16-affine:$F16,$C1" \
      "fp16-both:$F16"
    OFF="$C1,$A0" offnew 60 selfie_segmentation palm_detection_full face_detection_short_range
    profile_style 12 default
    base_vs_new 2 ;;
  s9-2)
    : "${BASE_LIB:?BASE_LIB=/path/to/base/libtflite_gles.so}"
    ab deeplabv3_257_mv_gpu 100 "fp32-off:$C1,$K0" "fp32-copy4:$K0" \
      "fp32-copy8:$K0,env.TFLITE_GLES_X_COPY_THREADS=8" "fp32-ksplit:$C1" fp32-new: \
      "fp16-off:$F16,$C1,$K0" "fp16-new:$F16"
    ab style_transfer_f16_384 150 "fp32-off:$C1,$A0,$K0" "fp32-affine:$C1,$K0" fp32-new: \
      "fp16-off:$F16,$C1,$A0,$K0" "fp16-affine:$F16,$C1,$K0" "fp16-new:$F16"
    OFF="$C1,$A0,$K0" offnew 60 selfie_segmentation palm_detection_full \
      face_detection_short_range mobilenet_v1_0.25_224
    profile_style 20 0 1
    base_vs_new 3 ;;
  s9-3)
    profile_style 0 0 1 0 1
    OFF="$C1,$A0,$K0" offnew 90 style_transfer_f16_384 selfie_segmentation \
      palm_detection_full face_detection_short_range ;;
  *)
    : "${OFF:?OFF=the variant settings that switch the changes off (see the header)}"
    [ $# -gt 0 ] || set -- style_transfer_f16_384 palm_detection_full \
      face_detection_short_range selfie_segmentation
    offnew 90 "$@"
    [ -n "${BASE_LIB:-}" ] && base_vs_new 3 ;;
esac
[ -f "$OUT/prof-style.txt" ] &&
  grep -E "^==|sum of dispatch|^  conv2d|CONV_2D v1 @(3|7|11|15|240|272) " "$OUT/prof-style.txt"
cat "$AB"
[ -f "$OUT/rb-all.txt" ] && cat "$OUT/rb-all.txt"
exit 0
