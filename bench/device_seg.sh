#!/bin/bash
# seg, session 11 (issue 18): segmentation models on the NVIDIA device
# machine, from the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_seg.sh
# 1. options_ab.py on selfie (new library, one process, invokes interleaved):
#    the squeeze-and-excitation prologue fusions off, each alone, both
#    (TFLITE_GLES_X_FUSE_EW_PROLOGUE, TFLITE_GLES_X_FUSE_FC_CHAIN; "nomean":
#    the chains without their means, TFLITE_GLES_FUSE_MEAN=0; "noresize":
#    TFLITE_GLES_X_FUSE_RESIZE_PROLOGUE=0), fp32 and fp16.
# 2. selfie's GPU time line, new library fp16 (TFLITE_GLES_X_TIMELINE=1):
#    the dispatches left and their times; DeepLab's in fp32 (file only).
# 3. run_bench.py base / new / base / new (ours fp32 + fp16), LiteRT GPU
#    once: selfie, DeepLab, palm, MobileNet v1 1.0 (stand-in).
# Under 4 minutes; the table is last.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
BASE_LIB=${BASE_LIB:-$PWD/.devbuild/base/libtflite_gles.so}
NEW_LIB=$PWD/build/libtflite_gles.so
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
EW0="env.TFLITE_GLES_X_FUSE_EW_PROLOGUE=0"
FC0="env.TFLITE_GLES_X_FUSE_FC_CHAIN=0"
RS0="env.TFLITE_GLES_X_FUSE_RESIZE_PROLOGUE=0"
mkdir -p "$OUT"
SELFIE="$M/selfie_segmentation.tflite"
timeout 70 python3 bench/options_ab.py --model "$SELFIE" --iterations 300 \
  --variant "fp32-off:$EW0,$FC0,$RS0" --variant "fp32-ew:$FC0" --variant "fp32-fc:$EW0" \
  --variant "fp32-nomean:env.TFLITE_GLES_FUSE_MEAN=0" \
  --variant "fp32-noresize:env.TFLITE_GLES_X_FUSE_RESIZE_PROLOGUE=0" --variant fp32-new: \
  --variant "fp16-off:$F16,$EW0,$FC0,$RS0" --variant "fp16-new:$F16" \
  2>&1 | grep -v "^INFO" > "$OUT/ab-selfie.txt"
TFLITE_GLES_X_TIMELINE=1 timeout 30 python3 bench/wall_split.py --model "$SELFIE" \
  --iterations 200 --variant "fp16:$F16" > "$OUT/timeline-selfie.txt" 2>&1
TFLITE_GLES_X_TIMELINE=1 timeout 30 python3 bench/wall_split.py \
  --model "$M/deeplabv3_257_mv_gpu.tflite" --iterations 200 --variant fp32: \
  > "$OUT/timeline-deeplab.txt" 2>&1
MODELS=()
for m in selfie_segmentation deeplabv3_257_mv_gpu palm_detection_full; do
  MODELS+=(--model "$M/$m.tflite")
done
for run in base new base2 new2; do
  case $run in base*) L=$BASE_LIB ;; *) L=$NEW_LIB ;; esac
  echo "== $run" >> "$OUT/rb-all.txt"
  TFLITE_GLES_LIB=$L timeout 100 python3 bench/run_bench.py "${MODELS[@]}" \
    --standin mobilenet_v1_1.0_224 --backends gles_fp32,gles_fp16 --iterations 200 \
    --max-seconds 2 --out-dir /tmp/rb-$run --name rb 2>&1 | grep "^|" >> "$OUT/rb-all.txt"
done
echo "== LiteRT GPU" >> "$OUT/rb-all.txt"
timeout 100 python3 bench/run_bench.py "${MODELS[@]}" --standin mobilenet_v1_1.0_224 \
  --backends litert_gpu --iterations 200 --max-seconds 2 --out-dir /tmp/rb-litert \
  --name rb 2>&1 | grep "^|" >> "$OUT/rb-all.txt"
grep -E "time line|dispatches\)" "$OUT/timeline-selfie.txt" | tail -3
grep -E "^INFO: tflite-gles: +[0-9]+ " "$OUT/timeline-selfie.txt" | tail -80 | cut -c14-120
cat "$OUT/ab-selfie.txt"
grep -E "^==|^\| (selfie|deeplab|palm|mobilenet)|^\| model" "$OUT/rb-all.txt"
