#!/bin/bash
# Issue 18's first step on the NVIDIA device machine, one call:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_roofline.sh
# Per-layer FLOP/s and bytes of the large convolutions against the GPU's
# FMA peak and bandwidth (bench/roofline.py), fp32 and fp16, for the
# compute-bound shared models. Writes $OUT/roofline-<gpu>.{md,json}.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-' | tr -cd 'A-Za-z0-9-')
timeout 300 python3 bench/roofline.py --iterations 30 --top 6 \
  --model "$M/style_transfer_f16_384.tflite" --model "$M/deeplabv3_257_mv_gpu.tflite" \
  --model "$M/selfie_segmentation.tflite" --json "$OUT/roofline-$gpu.json" \
  2>/dev/null | tee "$OUT/roofline-$gpu.md"
