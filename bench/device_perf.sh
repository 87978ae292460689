#!/bin/bash
# perf, session 9 (issue 18), the closing run on the NVIDIA device machine:
# the docs/perf table (every carried model + the MobileNet v1 1.0 stand-in,
# all backends: ours fp32/fp16, XNNPACK 1/all threads, LiteRT GPU) for the
# new library, ours fp32/fp16 for the base library, and the roofline of the
# largest convolutions of style transfer and DeepLab with the new library.
#   DIR=.devbuild source bench/device_env.sh && mkdir -p /tmp/base &&
#   cp -a build/libtflite_gles.so* /tmp/base/ && cp -a .devperf/libtflite_gles.so* build/ &&
#   BASE_LIB=/tmp/base/libtflite_gles.so bash .devperf/device_perf.sh
# Writes under $OUT: bench-nvidia-h100-s9.{md,json} (new), bench-base-s9.{md,json}
# (base, ours only), roofline-*.{md,json} (new).
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
BASE_LIB=${BASE_LIB:?BASE_LIB=/path/to/base/libtflite_gles.so}
mkdir -p "$OUT"
timeout 330 python3 bench/run_bench.py --all --models-dir "$M" \
  --standin mobilenet_v1_1.0_224 --iterations 200 --max-seconds 4 \
  --out-dir "$OUT" --name bench-nvidia-h100-s9 2>&1 | grep "^|"
rm -f "$OUT"/*.png
TFLITE_GLES_LIB=$BASE_LIB timeout 150 python3 bench/run_bench.py --all --models-dir "$M" \
  --standin mobilenet_v1_1.0_224 --backends gles_fp32,gles_fp16 --iterations 200 \
  --max-seconds 4 --out-dir /tmp/base-bench --name bench-base-s9 2>&1 | grep "^|"
cp /tmp/base-bench/bench-base-s9.md /tmp/base-bench/bench-base-s9.json "$OUT"/ 2>/dev/null
timeout 100 bash bench/device_roofline.sh > /dev/null 2>&1
grep -E "^\| (style|deeplab|DeepLab)|GFLOP" "$OUT"/roofline-*.md | head -20
