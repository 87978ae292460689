#!/bin/bash
# conv3, session 14 (issue 18), call 1: conv2d.comp's tiles on the hair
# stand-in's 3x3 convolutions (64x64x32 K_SPLIT, 128x128x16 and 256x256x4
# SMEM_TILE) and style transfer's @240 (K_SPLIT) / @256 (SMEM_TILE), swept on
# the NVIDIA device machine without rebuilding: TFLITE_GLES_X_CONV_TILE
# (K_SPLIT's R/S/K/L/STEP), TFLITE_GLES_X_CONV_SMEM_BLOCK (SMEM_TILE's
# LX/LY/PX/SL), TFLITE_GLES_X_CONV_SMEM_TILE=0, TFLITE_GLES_MIN_INVOCATIONS.
# bench/conv_sweep.py: per-dispatch timer queries, min of rounds x invokes,
# variants interleaved in one process; --groups sums conv2d.comp's dispatches
# per layer shape. From the repository root, with this branch's library in
# build/:  DIR=.devbuild source bench/device_env.sh && bash bench/device_conv3.sh
# Under 100 s; the short summary (each shape's base and best three) is last.
source "$(dirname "$0")/device_common.sh"
python3 tools/build_standins.py build/models hair_segmentation_512 > "$OUT/standins.txt" 2>&1
HAIR=build/models/hair_segmentation_512.tflite
STYLE=$M/style_transfer_f16_384.tflite
T=env.TFLITE_GLES_X_CONV_TILE
B=env.TFLITE_GLES_X_CONV_SMEM_BLOCK
S=env.TFLITE_GLES_X_CONV_SMEM_TILE=0
MI=env.TFLITE_GLES_MIN_INVOCATIONS
R=${CONV3_ROUNDS:-4}
P=${CONV3_PER:-8}
# sweep LIMIT FILE MODEL OPTS VARIANT...: conv_sweep.py of NEW_LIB, OPTS
# (precision options) prefixed to every variant.
sweep() {
  local limit=$1 file=$2 model=$3 opts=$4 v args=()
  shift 4
  for v in "$@"; do
    local rest=${v#*:}
    args+=(--variant "${v%%:*}:${opts}${opts:+${rest:+,}}$rest")
  done
  TFLITE_GLES_LIB=$NEW_LIB timeout "$limit" python3 bench/conv_sweep.py --model "$model" \
    --stat min --rounds "$R" --per-round "$P" --peak 67 --groups conv2d "${args[@]}" \
    "${MATCH[@]}" 2>&1 | grep -v "^INFO\|^WARNING: All log" > "$file"
}
K_V=("k1x1p4:$T=1/1/4/32/32" "k1x2p4:$T=1/2/4/32/32" "k2x1p4:$T=2/1/4/32/32"
     "k2x2p8:$T=2/2/8/32/32" "k1x2p8:$T=1/2/8/32/32" "k1x1p8:$T=1/1/8/32/32"
     "k2x2p8w16:$T=2/2/8/16/16" "k2x2p16w16:$T=2/2/16/16/16")
SMEM_V=("b16x8x2x1:$B=16/8/2/1" "b16x8x1x1:$B=16/8/1/1" "b16x4x2x2:$B=16/4/2/2"
        "b8x8x2x1:$B=8/8/2/1" "b16x4x1x1:$B=16/4/1/1" "nosmem:$S"
        "nosmem-k1x2p8:$S,$T=1/2/8/32/32" "mi32k:$MI=32768" "mi131k:$MI=131072")
STYLE_V=(base: "k2x4p4:$T=2/4/4/32/32" "k4x4p4:$T=4/4/4/32/32" "k4x2p4:$T=4/2/4/32/32"
         "k2x4p8:$T=2/4/8/32/32" "k1x4p8:$T=1/4/8/32/32" "k2x2p8:$T=2/2/8/32/32"
         "b16x8x4x2:$B=16/8/4/2" "b32x8x2x2:$B=32/8/2/2" "b16x16x2x2:$B=16/16/2/2"
         "b16x8x4x1:$B=16/8/4/1")
# Separate processes, so that one past its limit loses only its own rows.
MATCH=(--top 0)
sweep 20 "$OUT/hair-fp32-k.md" "$HAIR" "" base: "${K_V[@]}"
sweep 20 "$OUT/hair-fp32-smem.md" "$HAIR" "" base: "${SMEM_V[@]}"
MATCH=(--match "CONV_2D v1 @240 " --match "CONV_2D v1 @256 ")
sweep 22 "$OUT/style-fp32.md" "$STYLE" "" "${STYLE_V[@]}"
MATCH=(--top 0)
sweep 15 "$OUT/hair-fp16.md" "$HAIR" "$F16" base: "${K_V[@]:3:3}" "${SMEM_V[@]:1:2}" "${SMEM_V[@]:5:1}"
MATCH=(--match "CONV_2D v1 @240 " --match "CONV_2D v1 @256 ")
sweep 12 "$OUT/style-fp16.md" "$STYLE" "$F16" "${STYLE_V[@]:0:6}"
# The summary: per layer shape (and style's two layers), base and the best three.
python3 - "$OUT"/hair-fp32-k.md "$OUT"/hair-fp32-smem.md "$OUT"/style-fp32.md "$OUT"/hair-fp16.md \
  "$OUT"/style-fp16.md <<'EOF'
import re, sys
for path in sys.argv[1:]:
    names = None
    print(f"== {path.rsplit('/', 1)[-1]}")
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| layer |") or "by layer shape" in line:
            names = cells[1:]
        elif names and line.startswith("| ") and not line.startswith("|---") and "ms |" not in line:
            us = [float(m.group(1)) if (m := re.match(r"([\d.]+) us", c)) else 1e9 for c in cells[1:]]
            best = sorted(range(len(us)), key=us.__getitem__)[:3]
            print(f"{cells[0][-40:]}: base {us[0]:.1f} | " +
                  " ".join(f"{names[i]} {us[i]:.1f}" for i in best))
        elif "invoke wall" in line or "sum of dispatches" in line:
            vals = cells[1:]
            print(f"{cells[0]}: base {vals[0]} | min {min(vals, key=float)} "
                  f"({names[min(range(len(vals)), key=lambda i: float(vals[i]))]})")
EOF
