#!/bin/bash
# style2, session 11 (issue 18): style transfer's 9x9 layers from a
# shared-memory window (shaders/conv2d_window.comp) on the NVIDIA device
# machine, from the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_style2.sh
# 1. conv_sweep.py (per-dispatch GPU timer queries, variants interleaved in
#    one process): TFLITE_GLES_X_WINDOW_CONV off and blocks PX/LOCAL_X/LOCAL_Y,
#    style transfer fp32 and fp16: the 9x9 layers @3 and @272 per block.
# 2. options_ab.py, style transfer, fp32 and fp16 (250 invokes): all off
#    (window path, TFLITE_GLES_X_NORM_PROLOGUE, TFLITE_GLES_X_FUSE_UPSAMPLE,
#    TFLITE_GLES_X_EPILOGUE_IN2), the window path alone, the three graph
#    folds alone, all on.
# 3. profile.py of style fp32, every dispatch (what to do next).
# 4. run_bench.py base / new / base / new (ours fp32 + fp16), LiteRT GPU
#    once: style, selfie, DeepLab, MobileNet v1 1.0.
# Under 4 minutes; the table is last.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
BASE_LIB=${BASE_LIB:-$PWD/.devbuild/base/libtflite_gles.so}
NEW_LIB=$PWD/build/libtflite_gles.so
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
W=env.TFLITE_GLES_X_WINDOW_CONV
P=env.TFLITE_GLES_X_NORM_PROLOGUE
U=env.TFLITE_GLES_X_FUSE_UPSAMPLE
E=env.TFLITE_GLES_X_EPILOGUE_IN2
STYLE=$M/style_transfer_f16_384.tflite
BLOCKS=("off:$W=0" "2/16/8:$W=2/16/8" "1/16/8:$W=1/16/8" "4/8/8:$W=4/8/8"
        "2/32/4:$W=2/32/4" "1/32/8:$W=1/32/8")
sweep() {  # precision-options
  local vs=()
  for v in "${BLOCKS[@]}"; do
    local name=${v%%:*} rest=${v#*:}
    vs+=(--variant "$name:${1}${1:+,}$rest")
  done
  timeout 60 python3 bench/conv_sweep.py --model "$STYLE" --top 6 "${vs[@]}" 2>&1 \
    | grep -v "^INFO\|^WARNING: All log"
}
{ echo "## style fp32"; sweep ""; echo "## style fp16"; sweep "$F16"; } > "$OUT/sweep-style.md"
timeout 100 python3 bench/options_ab.py --model "$STYLE" --iterations 250 \
  --variant "fp32-off:$W=0,$P=0,$U=0,$E=0" --variant "fp32-window:$P=0,$U=0,$E=0" \
  --variant "fp32-graph:$W=0" --variant fp32-new: \
  --variant "fp16-off:$F16,$W=0,$P=0,$U=0,$E=0" --variant "fp16-window:$F16,$P=0,$U=0,$E=0" \
  --variant "fp16-graph:$F16,$W=0" --variant "fp16-new:$F16" \
  2>&1 | grep -v "^INFO" > "$OUT/ab-style.txt"
timeout 40 python3 bench/profile.py --iterations 30 --model "$STYLE" --top 0 \
  > "$OUT/prof-style.txt" 2>&1
MODELS=()
for m in style_transfer_f16_384 selfie_segmentation deeplabv3_257_mv_gpu mobilenet_v1_1.0_224; do
  MODELS+=(--model "$M/$m.tflite")
done
for run in base new base2 new2; do
  case $run in base*) L=$BASE_LIB ;; *) L=$NEW_LIB ;; esac
  echo "== $run" >> "$OUT/rb-all.txt"
  TFLITE_GLES_LIB=$L timeout 100 python3 bench/run_bench.py "${MODELS[@]}" \
    --backends gles_fp32,gles_fp16 --iterations 200 --max-seconds 2 \
    --out-dir /tmp/rb-$run --name rb 2>&1 | grep "^|" >> "$OUT/rb-all.txt"
done
echo "== LiteRT GPU" >> "$OUT/rb-all.txt"
timeout 100 python3 bench/run_bench.py "${MODELS[@]}" --backends litert_gpu \
  --iterations 200 --max-seconds 2 --out-dir /tmp/rb-litert --name rb 2>&1 | grep "^|" \
  >> "$OUT/rb-all.txt"
grep -E "dispatches|^  [a-z_0-9]+ " "$OUT/prof-style.txt" | head -12
cat "$OUT/sweep-style.md"
cat "$OUT/ab-style.txt"
grep -E "^==|^\| (style|selfie|deeplab|mobilenet)|^\| model" "$OUT/rb-all.txt"
