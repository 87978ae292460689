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
#    style transfer fp32: the 9x9 layers @3 and @272 per block.
# 2. options_ab.py, style transfer, fp32 and fp16 (250 invokes): all off
#    (window path, TFLITE_GLES_X_NORM_PROLOGUE, TFLITE_GLES_X_FUSE_UPSAMPLE,
#    TFLITE_GLES_X_EPILOGUE_IN2), the window path alone, the three graph
#    folds alone, all on.
#    Selfie: the second epilogue operand off / on (the only switch that can
#    touch it; DeepLab and MobileNet have no 9x9 window, instance norm,
#    nearest upsampling or elementwise chain of two tensor operands).
# 3. profile.py of style fp32, every dispatch (what to do next).
# 4. run_bench.py base / new (ours fp32 + fp16) on style and selfie, LiteRT
#    GPU on style. Trimmed to about 2.5 minutes (device budget); table last.
source "$(dirname "$0")/device_common.sh"
W=env.TFLITE_GLES_X_WINDOW_CONV
P=env.TFLITE_GLES_X_NORM_PROLOGUE
U=env.TFLITE_GLES_X_FUSE_UPSAMPLE
E=env.TFLITE_GLES_X_EPILOGUE_IN2
STYLE=$M/style_transfer_f16_384.tflite
BLOCKS=("off:$W=0" "2/16/8:$W=2/16/8" "1/16/8:$W=1/16/8" "4/8/8:$W=4/8/8" "2/32/4:$W=2/32/4")
sweep() {  # precision-options
  local vs=()
  for v in "${BLOCKS[@]}"; do
    local name=${v%%:*} rest=${v#*:}
    vs+=(--variant "$name:${1}${1:+,}$rest")
  done
  timeout 45 python3 bench/conv_sweep.py --model "$STYLE" --top 4 --rounds 4 "${vs[@]}" 2>&1 \
    | grep -v "^INFO\|^WARNING: All log"
}
{ echo "## style fp32"; sweep ""; } > "$OUT/sweep-style.md"
timeout 100 python3 bench/options_ab.py --model "$STYLE" --iterations 250 \
  --variant "fp32-off:$W=0,$P=0,$U=0,$E=0" --variant "fp32-window:$P=0,$U=0,$E=0" \
  --variant "fp32-graph:$W=0" --variant fp32-new: \
  --variant "fp16-off:$F16,$W=0,$P=0,$U=0,$E=0" --variant "fp16-window:$F16,$P=0,$U=0,$E=0" \
  --variant "fp16-graph:$F16,$W=0" --variant "fp16-new:$F16" \
  2>&1 | grep -v "^INFO" > "$OUT/ab-style.txt"
# Selfie: only the second epilogue operand can touch it.
timeout 40 python3 bench/options_ab.py --model "$M/selfie_segmentation.tflite" --iterations 250 \
  --variant "fp32-off:$E=0" --variant fp32-new: --variant "fp16-off:$F16,$E=0" \
  --variant "fp16-new:$F16" 2>&1 | grep -v "^INFO" > "$OUT/ab-selfie.txt"
timeout 30 python3 bench/profile.py --iterations 20 --model "$STYLE" --top 0 \
  > "$OUT/prof-style.txt" 2>&1
MODELS=(--model "$STYLE" --model "$M/selfie_segmentation.tflite")
device_rounds "$OUT/rb-all.txt" 60 "base new" "${MODELS[@]}"
device_litert_gpu "$OUT/rb-all.txt" 60 --model "$STYLE"
grep -E "dispatches|^  [a-z_0-9]+ " "$OUT/prof-style.txt" | head -12
cat "$OUT/sweep-style.md"
cat "$OUT/ab-selfie.txt"
cat "$OUT/ab-style.txt"
grep -E "^==|^\| (style|selfie)|^\| model" "$OUT/rb-all.txt"
