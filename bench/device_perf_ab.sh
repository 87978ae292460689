#!/bin/bash
# perf, session 9 (issue 18): changes 1 and 2 measured on the NVIDIA device
# machine in one call, base vs new:
#   DIR=.devbuild source bench/device_env.sh && mkdir -p /tmp/base &&
#   cp -a build/libtflite_gles.so* /tmp/base/ && cp -a .devperf/libtflite_gles.so* build/ &&
#   BASE_LIB=/tmp/base/libtflite_gles.so bash .devperf/device_perf_ab.sh
# A. the new library, each change switched off and on in one process per
#    model (bench/options_ab.py, 200 invokes per variant, interleaved):
#    TFLITE_GLES_X_COPY_THREADS=1 is change 1 off, TFLITE_GLES_FUSE_NORM_AFFINE=0
#    change 2 off ("off" = both off = the base library's behaviour).
# B. base vs new library, every shared model + the MobileNet v1 1.0 stand-in,
#    ours fp32 and fp16 (bench/run_bench.py, one process per row).
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
D=$(cd "$(dirname "$0")" && pwd)
BASE_LIB=${BASE_LIB:?BASE_LIB=/path/to/base/libtflite_gles.so}
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
OFF1="env.TFLITE_GLES_X_COPY_THREADS=1"
OFF2="env.TFLITE_GLES_FUSE_NORM_AFFINE=0"
timeout 100 python3 bench/options_ab.py --model "$M/deeplabv3_257_mv_gpu.tflite" \
  --iterations 300 --variant "fp32-off:$OFF1" --variant fp32-copy: \
  --variant "fp16-off:$F16,$OFF1" --variant "fp16-copy:$F16" \
  2>&1 | grep -v "^INFO" > "$OUT/ab-deeplab.txt"
timeout 150 python3 bench/options_ab.py --model "$M/style_transfer_f16_384.tflite" \
  --iterations 300 --variant "fp32-off:$OFF1,$OFF2" --variant "fp32-copy:$OFF2" \
  --variant "fp32-affine:$OFF1" --variant fp32-both: \
  --variant "fp16-off:$F16,$OFF1,$OFF2" --variant "fp16-copy:$F16,$OFF2" \
  --variant "fp16-affine:$F16,$OFF1" --variant "fp16-both:$F16" \
  2>&1 | grep -v "^INFO" > "$OUT/ab-style.txt"
for m in selfie_segmentation palm_detection_full face_detection_short_range; do
  timeout 60 python3 bench/options_ab.py --model "$M/$m.tflite" --iterations 300 \
    --variant "fp32-off:$OFF1,$OFF2" --variant fp32-new: \
    --variant "fp16-off:$F16,$OFF1,$OFF2" --variant "fp16-new:$F16" \
    2>&1 | grep -v "^INFO" >> "$OUT/ab-others.txt"
done
timeout 60 python3 bench/profile.py --model "$M/style_transfer_f16_384.tflite" \
  --iterations 30 --top 12 > "$OUT/profile-style-new.txt" 2>&1
MODELS=()
for m in deeplabv3_257_mv_gpu style_transfer_f16_384 selfie_segmentation \
         palm_detection_full face_detection_short_range mobilenet_v1_0.25_224; do
  MODELS+=(--model "$M/$m.tflite")
done
for lib in base new; do
  [ $lib = base ] && L=$BASE_LIB || L=$PWD/build/libtflite_gles.so
  TFLITE_GLES_LIB=$L timeout 150 python3 bench/run_bench.py "${MODELS[@]}" \
    --standin mobilenet_v1_1.0_224 --backends gles_fp32,gles_fp16 --iterations 200 \
    --max-seconds 2 --out-dir /tmp/rb-$lib --name rb 2>&1 | grep "^|" > "$OUT/rb-$lib.txt"
  cat "$OUT/rb-$lib.txt" >> "$OUT/rb-all.txt"; echo "== $lib" >> "$OUT/rb-all.txt"
done
cat "$OUT/ab-deeplab.txt" "$OUT/ab-style.txt" "$OUT/ab-others.txt"
grep "sum of dispatch" "$OUT/profile-style-new.txt"
cat "$OUT/rb-all.txt"
