#!/bin/bash
# conv, session 10 (issue 18), the closing run on the NVIDIA device machine,
# from the repository root (the new library over build/, the session's base
# in .devbuild/base/ or BASE_LIB):
#   DIR=.devbuild source bench/device_env.sh && cp -a .devperf/libtflite_gles.so* build/ &&
#   bash bench/device_conv_final.sh
# 1. base vs new in one process per model (bench/options_ab.py; "base" =
#    the new library with the session-9 tiles forced by switches), 2. the
#    docs/perf table of every carried model (ours fp32/fp16 vs LiteRT GPU and
#    XNNPACK), 3. the per-layer fraction of peak (bench/roofline.py).
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
BASE="env.TFLITE_GLES_X_CONV_TILE=4/2/4/32/1"
mkdir -p "$OUT"
for m in style_transfer_f16_384 deeplabv3_257_mv_gpu selfie_segmentation \
         palm_detection_full face_detection_short_range mobilenet_v1_0.25_224; do
  timeout 60 python3 bench/options_ab.py --model "$M/$m.tflite" --iterations 200 \
    --variant "fp32-base:$BASE" --variant fp32-new: \
    --variant "fp16-base:$F16,$BASE" --variant "fp16-new:$F16" \
    --variant "fp16-math1:$F16,env.TFLITE_GLES_X_FP16_MATH=1" \
    --variant "fp16-math2:$F16,env.TFLITE_GLES_X_FP16_MATH=2" \
    2>&1 | grep -v "^INFO" >> "$OUT/ab-final.txt"
done
timeout 300 python3 bench/run_bench.py --all --models-dir "$M" \
  --standin mobilenet_v1_1.0_224 --iterations 200 --max-seconds 3 \
  --backends gles_fp32,gles_fp16,litert_gpu \
  --out-dir "$OUT" --name bench-nvidia-h100-s10 2>&1 | grep "^|" > "$OUT/rb.txt"
rm -f "$OUT"/*.png
timeout 100 bash bench/device_roofline.sh > /dev/null 2>&1
TFLITE_GLES_X_FP16_MATH=2 timeout 60 python3 bench/roofline.py --iterations 30 --top 6 \
  --model "$M/style_transfer_f16_384.tflite" --model "$M/deeplabv3_257_mv_gpu.tflite" \
  2>/dev/null > "$OUT/roofline-fp16math2.md"
cat "$OUT/ab-final.txt"
grep -A14 "Warm median" "$OUT/bench-nvidia-h100-s10.md"
grep -E "^## |^\| CONV|^\| DEPTH" "$OUT"/roofline-*.md | head -60
