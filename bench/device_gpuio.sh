#!/bin/bash
# GPU-resident inputs/outputs (issue 16, buffers) on the NVIDIA device machine:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_gpuio.sh
# Needs the carried libtflite_gles.so of branch gpuio (bound-buffer C API).
# Writes under $OUT:
#   gpuio-tests.txt         the bound-buffer tests on the NVIDIA driver (its
#                           default paths: direct transfers, fused uploads,
#                           SSBO reads, mapped staging)
#   gpuio-bench-fp32.json   copy vs bound per frame, selfie / deeplab / mobilenet
#   gpuio-bench-fp16.json   the same with precision_loss_allowed
# and prints the two tables last. About 2-3 minutes (at most 280 s).
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
mkdir -p "$OUT" ../shared/models
cp "$M"/*.tflite ../shared/models/   # where the tests look for the shared models
timeout 80 python3 -m pytest -q -p no:cacheprovider tests/python/test_gpu_io_buffers.py \
  > "$OUT/gpuio-tests.txt" 2>&1
tail -n 2 "$OUT/gpuio-tests.txt"
for p in fp32 fp16; do
  flag=""; [ $p = fp16 ] && flag="--fp16"
  timeout 100 python3 bench/gpu_io_bench.py --frames 100 $flag \
    --json "$OUT/gpuio-bench-$p.json" 2>/dev/null | grep -v "^INFO\|^WARNING"
done
