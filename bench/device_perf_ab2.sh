#!/bin/bash
# perf, session 9 (issue 18), second A/B call: change 3 (conv2d.comp K_SPLIT)
# and change 1's thread count, base vs new, on the NVIDIA device machine:
#   DIR=.devbuild source bench/device_env.sh && mkdir -p /tmp/base &&
#   cp -a build/libtflite_gles.so* /tmp/base/ && cp -a .devperf/libtflite_gles.so* build/ &&
#   BASE_LIB=/tmp/base/libtflite_gles.so bash .devperf/device_perf_ab2.sh
# Switches of the new library (bench/options_ab.py, one process per model):
# TFLITE_GLES_X_COPY_THREADS (change 1), TFLITE_GLES_FUSE_NORM_AFFINE (2),
# TFLITE_GLES_X_CONV_KSPLIT (3); "off" = all three off = the base behaviour.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
BASE_LIB=${BASE_LIB:?BASE_LIB=/path/to/base/libtflite_gles.so}
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
C1="env.TFLITE_GLES_X_COPY_THREADS=1"
A0="env.TFLITE_GLES_FUSE_NORM_AFFINE=0"
K0="env.TFLITE_GLES_X_CONV_KSPLIT=0"
timeout 100 python3 bench/options_ab.py --model "$M/deeplabv3_257_mv_gpu.tflite" \
  --iterations 300 --variant "fp32-off:$C1,$K0" --variant "fp32-copy4:$K0" \
  --variant "fp32-copy8:$K0,env.TFLITE_GLES_X_COPY_THREADS=8" --variant "fp32-ksplit:$C1" \
  --variant fp32-new: --variant "fp16-off:$F16,$C1,$K0" --variant "fp16-new:$F16" \
  2>&1 | grep -v "^INFO" > "$OUT/ab2-deeplab.txt"
timeout 150 python3 bench/options_ab.py --model "$M/style_transfer_f16_384.tflite" \
  --iterations 300 --variant "fp32-off:$C1,$A0,$K0" --variant "fp32-affine:$C1,$K0" \
  --variant fp32-new: --variant "fp16-off:$F16,$C1,$A0,$K0" \
  --variant "fp16-affine:$F16,$C1,$K0" --variant "fp16-new:$F16" \
  2>&1 | grep -v "^INFO" > "$OUT/ab2-style.txt"
for m in selfie_segmentation palm_detection_full face_detection_short_range \
         mobilenet_v1_0.25_224; do
  timeout 60 python3 bench/options_ab.py --model "$M/$m.tflite" --iterations 300 \
    --variant "fp32-off:$C1,$A0,$K0" --variant fp32-new: \
    --variant "fp16-off:$F16,$C1,$A0,$K0" --variant "fp16-new:$F16" \
    2>&1 | grep -v "^INFO" >> "$OUT/ab2-others.txt"
done
for k in 0 1; do
  echo "== style fp32, TFLITE_GLES_X_CONV_KSPLIT=$k" >> "$OUT/prof-style.txt"
  TFLITE_GLES_X_CONV_KSPLIT=$k timeout 60 python3 bench/profile.py --iterations 30 \
    --model "$M/style_transfer_f16_384.tflite" --top 20 >> "$OUT/prof-style.txt" 2>&1
done
MODELS=()
for m in deeplabv3_257_mv_gpu style_transfer_f16_384 selfie_segmentation \
         palm_detection_full face_detection_short_range mobilenet_v1_0.25_224; do
  MODELS+=(--model "$M/$m.tflite")
done
for lib in base new; do
  [ $lib = base ] && L=$BASE_LIB || L=$PWD/build/libtflite_gles.so
  echo "== $lib" >> "$OUT/rb-all.txt"
  TFLITE_GLES_LIB=$L timeout 150 python3 bench/run_bench.py "${MODELS[@]}" \
    --standin mobilenet_v1_1.0_224 --backends gles_fp32,gles_fp16 --iterations 200 \
    --max-seconds 3 --out-dir /tmp/rb-$lib --name rb 2>&1 | grep "^|" >> "$OUT/rb-all.txt"
done
cat "$OUT/ab2-deeplab.txt" "$OUT/ab2-style.txt" "$OUT/ab2-others.txt"
grep -E "^==|sum of dispatch|^  conv2d" "$OUT/prof-style.txt"
cat "$OUT/rb-all.txt"
