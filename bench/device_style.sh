#!/bin/bash
# style, session 10 (issue 18): graph-level changes for style transfer and
# selfie on the NVIDIA device machine, from the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_style.sh
# 1. options_ab.py (one process, new library, invokes interleaved): each
#    change switched off alone and all off: TFLITE_GLES_X_FUSE_MIRROR_PAD
#    (MIRROR_PAD in the convolution's gather), TFLITE_GLES_X_BATCH_GEMMS
#    (style's 26 gamma/beta GEMMs in one dispatch), TFLITE_GLES_X_NORM_SPLIT
#    (instance-norm statistics over a workgroup per run of pixels).
# 2. bench/profile.py of style fp32 (dispatch count, per-shader sums).
# 3. run_bench.py base / new / base / new (ours fp32 + fp16) and LiteRT GPU
#    once: style, selfie, DeepLab, MobileNet v1 0.25.
# Under 4 minutes; the table is last.
source "$(dirname "$0")/device_common.sh"
MP0="env.TFLITE_GLES_X_FUSE_MIRROR_PAD=0"
BG0="env.TFLITE_GLES_X_BATCH_GEMMS=0"
NS0="env.TFLITE_GLES_X_NORM_SPLIT=0"
timeout 100 python3 bench/options_ab.py --model "$M/style_transfer_f16_384.tflite" \
  --iterations 300 --variant "fp32-off:$MP0,$BG0,$NS0" --variant "fp32-nosplit:$NS0" \
  --variant fp32-new: --variant "fp16-off:$F16,$MP0,$BG0,$NS0" \
  --variant "fp16-nosplit:$F16,$NS0" --variant "fp16-new:$F16" \
  2>&1 | grep -v "^INFO" > "$OUT/ab-style.txt"
for k in 0 1; do
  echo "== style fp32, mirror pad + batch + norm split switches $k" >> "$OUT/prof-style.txt"
  TFLITE_GLES_X_FUSE_MIRROR_PAD=$k TFLITE_GLES_X_BATCH_GEMMS=$k TFLITE_GLES_X_NORM_SPLIT=$k \
    timeout 60 \
    python3 bench/profile.py --iterations 30 --model "$M/style_transfer_f16_384.tflite" \
    --top 12 >> "$OUT/prof-style.txt" 2>&1
done
device_models style_transfer_f16_384 selfie_segmentation deeplabv3_257_mv_gpu mobilenet_v1_0.25_224
device_rounds "$OUT/rb-all.txt" 100 "base new base2 new2" "${MODELS[@]}"
device_litert_gpu "$OUT/rb-all.txt" 100 "${MODELS[@]}"
grep -E "^==|dispatches|^  [a-z_0-9]+ " "$OUT/prof-style.txt" | head -40
cat "$OUT/ab-style.txt"
grep -E "^==|^\| (style|selfie|deeplab|mobilenet)|^\| model" "$OUT/rb-all.txt"
