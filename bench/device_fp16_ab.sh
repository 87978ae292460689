#!/bin/bash
# Issue 18: is fp16 storage slower than fp32 on DeepLab's 33x33 layers (the
# H100 roofline, docs/perf/log.md session 8), and which kernel makes it so?
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_fp16_ab.sh
# Variants, interleaved in one process per model (bench/options_ab.py):
#   fp32            the default
#   fp16-auto       precision loss allowed, the device tuning picks storage
#   fp16            fp16 storage forced (what the tests and run_bench do)
#   fp16-nodw       ... without the depthwise-into-GEMM fusion
#   fp16-nogemm     ... without gemm.comp for 1x1 convolutions
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
for model in deeplabv3_257_mv_gpu style_transfer_f16_384; do
  timeout 150 python3 bench/options_ab.py --model "$M/$model.tflite" --iterations 200 \
    --variant fp32: \
    --variant fp16-auto:precision_loss_allowed=true,inference_priority1=min_latency \
    --variant "fp16:$F16" \
    --variant "fp16-nodw:$F16,env.TFLITE_GLES_FUSE_DEPTHWISE=0" \
    --variant "fp16-nogemm:$F16,env.TFLITE_GLES_SHARED_MEMORY_GEMM=0" \
    2>/dev/null | tee "$OUT/fp16-ab-$model.txt" | grep -v "^INFO"
done
