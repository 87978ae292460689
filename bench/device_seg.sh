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
source "$(dirname "$0")/device_common.sh"
EW0="env.TFLITE_GLES_X_FUSE_EW_PROLOGUE=0"
FC0="env.TFLITE_GLES_X_FUSE_FC_CHAIN=0"
RS0="env.TFLITE_GLES_X_FUSE_RESIZE_PROLOGUE=0"
CM1="env.TFLITE_GLES_X_FUSE_CHAIN_MEAN=1"
SELFIE="$M/selfie_segmentation.tflite"
# GPU time lines first (the most direct view of the dispatch chain), base
# library and new, fp32.
for run in base new; do
  device_timeline "$(device_lib $run)" "$SELFIE" fp32: "$OUT/timeline-selfie-$run.txt" 200
done
timeout 80 python3 bench/options_ab.py --model "$SELFIE" --iterations 400 \
  --variant "fp32-off:$EW0,$FC0,$RS0" --variant fp32-new: --variant "fp32-mean:$CM1" \
  --variant "fp16-off:$F16,$EW0,$FC0,$RS0" --variant "fp16-new:$F16" \
  --variant "fp16-mean:$F16,$CM1" 2>&1 | grep -v "^INFO" > "$OUT/ab-selfie.txt"
device_models selfie_segmentation deeplabv3_257_mv_gpu palm_detection_full
device_rounds "$OUT/rb-all.txt" 100 "base new base2 new2" "${MODELS[@]}" --standin mobilenet_v1_1.0_224
device_litert_gpu "$OUT/rb-all.txt" 100 "${MODELS[@]}" --standin mobilenet_v1_1.0_224
for run in base new; do
  echo "== selfie fp32 time line, $run library"
  grep -E "time line" "$OUT/timeline-selfie-$run.txt" | tail -1 | cut -c20-
done
grep -E "^INFO: tflite-gles: +[0-9]+ " "$OUT/timeline-selfie-new.txt" | tail -60 | cut -c14-130
cat "$OUT/ab-selfie.txt"
grep -E "^==|^\| (selfie|deeplab|palm|mobilenet)|^\| model" "$OUT/rb-all.txt"
