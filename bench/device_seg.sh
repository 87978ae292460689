#!/bin/bash
# seg, session 11 (issue 18): segmentation models on the NVIDIA device
# machine, from the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_seg.sh
# 1. selfie's GPU time line (TFLITE_GLES_X_TIMELINE=1), base and new
#    library, fp32: the dispatches left and their times.
# 2. options_ab.py on selfie (new library, one process, invokes interleaved):
#    the prologue fusions off (TFLITE_GLES_X_FUSE_EW_PROLOGUE,
#    TFLITE_GLES_X_FUSE_FC_CHAIN, TFLITE_GLES_X_FUSE_RESIZE_PROLOGUE), the
#    defaults, and the defaults with the chains' means
#    (TFLITE_GLES_X_FUSE_CHAIN_MEAN=1), fp32 and fp16.
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
CM1="env.TFLITE_GLES_X_FUSE_CHAIN_MEAN=1"
mkdir -p "$OUT"
SELFIE="$M/selfie_segmentation.tflite"
# GPU time lines first (the most direct view of the dispatch chain), base
# library and new, fp32.
for run in base new; do
  case $run in base) L=$BASE_LIB ;; *) L=$NEW_LIB ;; esac
  TFLITE_GLES_LIB=$L TFLITE_GLES_X_TIMELINE=1 timeout 30 python3 bench/wall_split.py \
    --model "$SELFIE" --iterations 200 --variant fp32: > "$OUT/timeline-selfie-$run.txt" 2>&1
done
timeout 80 python3 bench/options_ab.py --model "$SELFIE" --iterations 400 \
  --variant "fp32-off:$EW0,$FC0,$RS0" --variant fp32-new: --variant "fp32-mean:$CM1" \
  --variant "fp16-off:$F16,$EW0,$FC0,$RS0" --variant "fp16-new:$F16" \
  --variant "fp16-mean:$F16,$CM1" 2>&1 | grep -v "^INFO" > "$OUT/ab-selfie.txt"
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
for run in base new; do
  echo "== selfie fp32 time line, $run library"
  grep -E "time line" "$OUT/timeline-selfie-$run.txt" | tail -1 | cut -c20-
done
grep -E "^INFO: tflite-gles: +[0-9]+ " "$OUT/timeline-selfie-new.txt" | tail -60 | cut -c14-130
cat "$OUT/ab-selfie.txt"
grep -E "^==|^\| (selfie|deeplab|palm|mobilenet)|^\| model" "$OUT/rb-all.txt"
