#!/bin/bash
# deep, session 12 (issue 18): where the fixed part of DeepLab's and style
# transfer's invoke goes on the NVIDIA device machine (the invoke's wall
# minus its dispatch sum: 0.79 / 0.42 ms in session 11), from the
# repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_deep.sh
# 1. GPU time lines (TFLITE_GLES_X_TIMELINE=1, new library), DeepLab and
#    style, fp32 and fp16: CPU upload done, GPU past the uploads, each
#    dispatch's end, the last dispatch's end, wait + readback.
# 2. options_ab.py on DeepLab (one process, invokes interleaved; median and
#    min, so the clock sag shows), fp32 and fp16: the identity resize's view
#    off (TFLITE_GLES_X_RESIZE_VIEW=0, = base), defaults, the image-pooling
#    bias fold (TFLITE_GLES_X_BROADCAST_CONCAT_BIAS=1, now on gemm.comp too),
#    the output copy with streaming stores (TFLITE_GLES_X_STREAMING_READBACK=1),
#    four variants per process. Style: streaming readback.
# 3. run_bench.py base / new / base / new (ours fp32 + fp16), LiteRT GPU
#    once: DeepLab, style, palm, face, MobileNet v1 1.0 (stand-in).
# Under 4 minutes; the table is last.
source "$(dirname "$0")/device_common.sh"
DL="$M/deeplabv3_257_mv_gpu.tflite"
ST="$M/style_transfer_f16_384.tflite"
for model in deeplab style; do
  case $model in deeplab) F=$DL ;; *) F=$ST ;; esac
  for p in fp32 fp16; do
    v="fp32:"; [ $p = fp16 ] && v="fp16:$F16"
    device_timeline "$NEW_LIB" "$F" "$v" "$OUT/timeline-$model-$p.txt"
  done
done
CT=env.TFLITE_GLES_X_COPY_THREADS; BC=env.TFLITE_GLES_X_BROADCAST_CONCAT_BIAS
RV=env.TFLITE_GLES_X_RESIZE_VIEW; SR=env.TFLITE_GLES_X_STREAMING_READBACK
{
  # DeepLab: session 12's switches (view on by default; bias fold and
  # streaming readback off), four variants per process: with twelve in one
  # process (02:28 UTC) the medians sagged to 5 ms.
  for p in fp32 fp16; do
    o=""; [ $p = fp16 ] && o="$F16,"
    TFLITE_GLES_LIB=$NEW_LIB timeout 60 python3 bench/options_ab.py --model "$DL" --iterations 300 \
      --variant "$p-noview:$o$RV=0" --variant "$p:$o" --variant "$p-bcb:$o$BC=1" \
      --variant "$p-stream:$o$SR=1" 2>&1
  done
  TFLITE_GLES_LIB=$NEW_LIB timeout 45 python3 bench/options_ab.py --model "$ST" --iterations 300 \
    --variant fp32: --variant "fp32-stream:$SR=1" --variant "fp16:$F16" \
    --variant "fp16-stream:$F16,$SR=1" 2>&1
} | grep -v "^INFO\|^WARNING" > "$OUT/ab.txt"
device_models deeplabv3_257_mv_gpu style_transfer_f16_384 palm_detection_full face_detection_short_range
device_rounds "$OUT/rb-all.txt" 100 "base new base2 new2" "${MODELS[@]}" --standin mobilenet_v1_1.0_224
device_litert_gpu "$OUT/rb-all.txt" 100 "${MODELS[@]}" --standin mobilenet_v1_1.0_224
device_timeline_summary
# The last report's dispatches of DeepLab fp32 (the longest first 12, then
# the whole list in the file).
grep -E "^INFO: tflite-gles: +[0-9]+ " "$OUT/timeline-deeplab-fp32.txt" | tail -40 | cut -c20-130
grep -E "^INFO: tflite-gles: +[0-9]+ " "$OUT/timeline-style-fp32.txt" | tail -30 | cut -c20-130
grep -E "^\||invokes per" "$OUT/ab.txt"
grep -E "^==|^\| (deeplab|style|palm|face|mobilenet)|^\| model" "$OUT/rb-all.txt"
