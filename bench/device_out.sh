#!/bin/bash
# out, session 13 (issue 18): DeepLab's and style transfer's output path on
# the NVIDIA device machine, from the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_out.sh
# 1. Time lines (TFLITE_GLES_X_TIMELINE=1, new library): DeepLab and style,
#    fp32 and fp16 (deep's tooling, bench/device_deep.sh).
# 2. options_ab.py, one process per line, invokes interleaved (median and
#    min): DeepLab's final resize on the GPU (=0, session 12's default),
#    the CPU's per-pixel loop (ROW=0), the new row blends (default), row
#    blends with non-temporal stores, with 8 copy threads; style: copies
#    split from 2 MB (=1024 KB parts, base) vs 1 MB (512, new default).
# 3. run_bench.py base / new / base / new (DeepLab, style; ours fp32 +
#    fp16), LiteRT GPU once. Under 3 minutes; the table is last.
source "$(dirname "$0")/device_common.sh"
DL="$M/deeplabv3_257_mv_gpu.tflite"
ST="$M/style_transfer_f16_384.tflite"
for model in deeplab style; do
  case $model in deeplab) F=$DL ;; *) F=$ST ;; esac
  for p in fp32 fp16; do
    v="fp32:"; [ $p = fp16 ] && v="fp16:$F16"
    device_timeline "$NEW_LIB" "$F" "$v" "$OUT/timeline-$model-$p.txt" 300
  done
done
RR=env.TFLITE_GLES_X_CPU_READBACK_RESIZE; RW=env.TFLITE_GLES_X_ROW_READBACK_RESIZE
SR=env.TFLITE_GLES_X_STREAMING_READBACK; CT=env.TFLITE_GLES_X_COPY_THREADS
MP=env.TFLITE_GLES_X_COPY_MIN_PART_KB
{
  for p in fp32 fp16; do
    o=""; [ $p = fp16 ] && o="$F16,"
    TFLITE_GLES_LIB=$NEW_LIB timeout 45 python3 bench/options_ab.py --model "$DL" --iterations 300 \
      --variant "$p-gpu:$o$RR=0" --variant "$p-pixels:$o$RW=0" --variant "$p-rows:$o" \
      --variant "$p-rows-stream:$o$SR=1" 2>&1
  done
  TFLITE_GLES_LIB=$NEW_LIB timeout 30 python3 bench/options_ab.py --model "$DL" --iterations 200 \
    --variant "fp32-rows:" --variant "fp32-rows-8t:$CT=8" --variant "fp32-gpu-8t:$RR=0,$CT=8" 2>&1
  TFLITE_GLES_LIB=$NEW_LIB timeout 40 python3 bench/options_ab.py --model "$ST" --iterations 300 \
    --variant "fp32-1024:$MP=1024" --variant "fp32-512:" --variant "fp16-1024:$F16,$MP=1024" \
    --variant "fp16-512:$F16" 2>&1
} | grep -v "^INFO\|^WARNING" > "$OUT/ab.txt"
MODELS=(--model "$DL" --model "$ST")
device_rounds "$OUT/rb.txt" 40 "base new base2 new2" "${MODELS[@]}"
device_litert_gpu "$OUT/rb.txt" 40 "${MODELS[@]}"
device_timeline_summary
grep -E "^INFO: tflite-gles: +[0-9]+ " "$OUT/timeline-deeplab-fp32.txt" | tail -8 | cut -c20-130
grep -E "^\||invokes per" "$OUT/ab.txt"
grep -E "^==|^\| (deeplab|style)|^\| model" "$OUT/rb.txt"
