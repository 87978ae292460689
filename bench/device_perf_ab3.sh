#!/bin/bash
# perf, session 9 (issue 18), change 3b (K_SPLIT from 32 steps on), one call:
#   DIR=.devbuild source bench/device_env.sh && cp -a .devperf/libtflite_gles.so* build/ &&
#   bash .devperf/device_perf_ab3.sh
# Style transfer's convolutions profiled with K_SPLIT off and on (timer
# queries), and every change off vs on (bench/options_ab.py) on style,
# palm, face, selfie.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
OFF="env.TFLITE_GLES_X_COPY_THREADS=1,env.TFLITE_GLES_FUSE_NORM_AFFINE=0,env.TFLITE_GLES_X_CONV_KSPLIT=0"
for k in 0 1 0 1; do
  echo "== style fp32, TFLITE_GLES_X_CONV_KSPLIT=$k" >> "$OUT/prof3.txt"
  TFLITE_GLES_X_CONV_KSPLIT=$k timeout 60 python3 bench/profile.py --iterations 30 \
    --model "$M/style_transfer_f16_384.tflite" --top 0 >> "$OUT/prof3.txt" 2>&1
done
for m in style_transfer_f16_384 selfie_segmentation palm_detection_full \
         face_detection_short_range; do
  timeout 90 python3 bench/options_ab.py --model "$M/$m.tflite" --iterations 300 \
    --variant "fp32-off:$OFF" --variant fp32-new: \
    --variant "fp16-off:$F16,$OFF" --variant "fp16-new:$F16" \
    2>&1 | grep -v "^INFO" >> "$OUT/ab3.txt"
done
grep -E "^==|sum of dispatch|^  conv2d|CONV_2D v1 @(3|7|11|15|240|272) " "$OUT/prof3.txt"
cat "$OUT/ab3.txt"
