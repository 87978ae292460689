#!/bin/bash
# Session 7's measurement on the NVIDIA device machine, one call:
#   DIR=.devbuild source bench/device_env.sh && bash bench/h200_session7.sh
# .devbuild/models carries the shared models plus the int8 full-integer and
# dynamic-range twins of MobileNet v1 0.25 (tools/quant_models.py). Writes
# under $OUT:
#   bench-nvidia-h200-s7.{md,json}  every carried model + the MobileNet v1 1.0
#                                  stand-in, all backends (ours fp32/fp16,
#                                  XNNPACK 1/all threads, LiteRT GPU)
#   quant-tests-h200.txt           the quantized op/model tests on the GPU
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
mkdir -p "$OUT" ../shared/models
cp "$M"/*.tflite ../shared/models/   # where the tests look for the shared models
timeout 420 python3 bench/run_bench.py --all --models-dir "$M" \
  --standin mobilenet_v1_1.0_224 --iterations 200 --max-seconds 4 \
  --out-dir "$OUT" --name bench-nvidia-h200-s7 2>&1 | grep "^|"
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python/test_quantized_models.py \
  tests/python/test_quantized_ops.py > "$OUT/quant-tests-h200.txt" 2>&1
tail -n 3 "$OUT/quant-tests-h200.txt"
