#!/bin/bash
# conv, session 10 (issue 18), the closing run on the NVIDIA device machine
# (about 4 minutes), from the repository root with the conv branch's library
# over build/:
#   DIR=.devbuild source bench/device_env.sh && cp -a .devperf/libtflite_gles.so* build/ &&
#   bash bench/device_conv.sh
# 1. base vs new in one process per model (bench/options_ab.py: "base" = this
#    library with session 9's K_SPLIT tile forced, TFLITE_GLES_X_CONV_TILE=
#    4/2/4/32/1, highp arithmetic; fp16-math0 = highp arithmetic, fp16-new =
#    mediump products (NVIDIA's default), fp16-math2 = mediump accumulators
#    too: TFLITE_GLES_X_FP16_MATH), 2. the docs/perf table of every carried model
#    (ours fp32/fp16 vs LiteRT GPU), 3. the per-layer fraction of peak
#    (bench/roofline.py), with TFLITE_GLES_X_FP16_MATH=0 and 1 (the default).
# The tile sweep that chose the defaults: bench/device_conv_sweep.sh.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
BASE="env.TFLITE_GLES_X_CONV_TILE=4/2/4/32/1"
mkdir -p "$OUT"
for m in style_transfer_f16_384 deeplabv3_257_mv_gpu selfie_segmentation mobilenet_v1_0.25_224; do
  timeout 50 python3 bench/options_ab.py --model "$M/$m.tflite" --iterations 150 \
    --variant "fp32-base:$BASE" --variant fp32-new: \
    --variant "fp16-base:$F16,$BASE,env.TFLITE_GLES_X_FP16_MATH=0" \
    --variant "fp16-math0:$F16,env.TFLITE_GLES_X_FP16_MATH=0" --variant "fp16-new:$F16" \
    --variant "fp16-math2:$F16,env.TFLITE_GLES_X_FP16_MATH=2" \
    2>&1 | grep -v "^INFO" >> "$OUT/ab-final.txt"
done
timeout 150 python3 bench/run_bench.py --all --models-dir "$M" \
  --standin mobilenet_v1_1.0_224 --iterations 200 --max-seconds 2 \
  --backends gles_fp32,gles_fp16,litert_gpu \
  --out-dir "$OUT" --name bench-nvidia-h100-s10 > /dev/null 2>&1
rm -f "$OUT"/*.png
for math in 0 1; do
  TFLITE_GLES_X_FP16_MATH=$math timeout 45 python3 bench/roofline.py --iterations 20 --top 6 \
    --model "$M/style_transfer_f16_384.tflite" --model "$M/deeplabv3_257_mv_gpu.tflite" \
    2>/dev/null > "$OUT/roofline-s10-math$math.md"
done
cat "$OUT/ab-final.txt"
grep -A14 "Warm median" "$OUT/bench-nvidia-h100-s10.md"
grep -h "^| tflite-gles fp16" "$OUT/bench-nvidia-h100-s10.md" | cut -c1-140
grep -E "^## |^\| CONV|^\| DEPTH" "$OUT"/roofline-s10-*.md | cut -c1-160 | head -60
