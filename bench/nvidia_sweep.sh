#!/bin/bash
# One whole measurement sweep on the NVIDIA device machine (docs/perf/log.md,
# "Graph-level optimizations"): warm latency of the MobileNet v1 1.0 stand-in
# fp32/fp16, per-dispatch profiles, cold init with an empty and a filled
# shader disk cache, fusion on/off. Run from the repository root with
#   DIR: a folder holding libtflite_gles.so* and models/*.tflite
# (built on the CI box: same x86-64, older glibc), .gl/ and .whl/ prepared
# as ../shared/GPU.md says. Writes logs under $OUT and prints a short table.
set -u
DIR=${DIR:-.perfbuild}
OUT=${OUT:-/tmp/sweep}
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export TFLITE_GLES_LIB=$PWD/$DIR/libtflite_gles.so
M=$DIR/models
MOBILENET=$M/mobilenet_v1_1.0_224.tflite
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader

echo "== MobileNet v1 warm latency by TFLITE_GLES_MIN_INVOCATIONS (0 = llvmpipe tiles)"
for precision in "" "--fp16"; do
  for n in 0 8192 32768 131072 1000000000; do
    line=$(TFLITE_GLES_MIN_INVOCATIONS=$n timeout 60 python3 tools/run_model.py \
      --model "$MOBILENET" $precision --iterations 300 --no-cpu 2>&1 | grep "GPU latency")
    echo "${precision:-fp32} min_invocations=$n: $line"
  done
done

echo "== GEMMs: gemm.comp (the default on real GPUs) vs conv2d.comp"
timeout 100 python3 bench/options_ab.py --model "$MOBILENET" --iterations 300 \
  --variant conv2d:env.TFLITE_GLES_SHARED_MEMORY_GEMM=0 --variant gemm: 2>&1 | grep "^|"

for precision in "" "--fp16"; do
  echo "== run_model mobilenet_v1_1.0_224 ${precision:-fp32}"
  timeout 60 python3 tools/run_model.py --model "$MOBILENET" $precision \
    --iterations 300 --no-cpu 2>&1 | grep -E "renderer|delegated|cold|latency"
  timeout 60 python3 bench/profile.py --model "$MOBILENET" $precision \
    --iterations 50 --top 0 > "$OUT/profile_mobilenet${precision/--/_}.txt" 2>&1
  tail -n 12 "$OUT/profile_mobilenet${precision/--/_}.txt"
done
# SWEEP_ONLY=1: stop here (cold init and fusion on/off take another ~110 s).
[ -n "${SWEEP_ONLY:-}" ] && exit 0
echo "== cold init (fp32; empty/filled driver cache, then our serialization cache written/filled)"
timeout 120 python3 bench/cold_init.py --model "$MOBILENET" 2>&1 | tail -n 7
echo "== fusion on/off"
timeout 100 python3 bench/fusion_ab.py --iterations 100 "$MOBILENET" $M/selfie_segmentation.tflite \
  $M/face_detection_short_range.tflite $M/deeplabv3_257_mv_gpu.tflite 2>&1 | grep "^|"
