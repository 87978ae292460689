#!/bin/bash
# conv3, session 14 (issue 18): conv2d.comp's tiles for the 3x3 convolutions
# on small maps, on the NVIDIA device machine. From the repository root, with
# this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_conv3.sh
# Call 2 (default): 1. bench/conv_sweep.py (per-dispatch timer queries, min of
#    rounds x invokes, variants interleaved in one process), hair stand-in and
#    style, fp32 and fp16: "old" = session 13's tiles forced in this library
#    (TFLITE_GLES_X_CONV_TILE=2/2/4/32/32, CONV_SMEM_BLOCK=16/8/2/2: forced
#    tiles are not refilled) against "new" = the default (FillSplitTile, the
#    16 x 8 SMEM block of one pixel x one slice where the block leaves fewer
#    than min_invocations), summed per layer shape (--groups conv2d).
# 2. run_bench.py base / new / base / new (ours fp32 + fp16): hair stand-in,
#    style, DeepLab, MobileNet v1 1.0 (stand-in).
# CONV3_SWEEP=1: call 1's sweep of tiles (K_SPLIT's R/S/K/L/STEP, SMEM_TILE's
# LX/LY/PX/SL blocks, SMEM off, MIN_INVOCATIONS). Under 100 s; each step's
# short summary (per shape: every variant, or the first and the best three)
# as soon as it is done.
source "$(dirname "$0")/device_common.sh"
# (the exact twin: run_bench.py's CPU reference for the custom-op model)
python3 tools/build_standins.py build/models hair_segmentation_512 hair_segmentation_512_exact \
  mobilenet_v1_1.0_224 \
  > "$OUT/standins.txt" 2>&1
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
# The summary: per layer shape (and style's two layers), the first variant and the best three.
summary() {
  python3 - "$@" <<'EOF'
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
            if len(names) <= 4:  # every cell, TFLOP/s and all
                print(f"{cells[0][-40:]}: " + " | ".join(f"{n} {c}" for n, c in zip(names, cells[1:])))
                continue
            best = sorted(range(len(us)), key=us.__getitem__)[:3]
            print(f"{cells[0][-40:]}: {names[0]} {us[0]:.1f} | " +
                  " ".join(f"{names[i]} {us[i]:.1f}" for i in best))
        elif "invoke wall" in line or "sum of dispatches" in line:
            vals = cells[1:]
            print(f"{cells[0]}: {names[0]} {vals[0]} | min {min(vals, key=float)} "
                  f"({names[min(range(len(vals)), key=lambda i: float(vals[i]))]})")
EOF
}
if [ "${CONV3_SWEEP:-0}" = 1 ]; then
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
  summary "$OUT"/hair-fp32-k.md "$OUT"/hair-fp32-smem.md "$OUT"/style-fp32.md \
    "$OUT"/hair-fp16.md "$OUT"/style-fp16.md
else
  OLD="old:$T=2/2/4/32/32,$B=16/8/2/2"
  # Per model, each step's summary as soon as it is done (a step past its
  # limit loses only its own rows).
  MATCH=(--top 0)
  sweep 8 "$OUT/hair-fp32.md" "$HAIR" "" "$OLD" new:
  sweep 7 "$OUT/hair-fp16.md" "$HAIR" "$F16" "$OLD" new:
  summary "$OUT/hair-fp32.md" "$OUT/hair-fp16.md"
  device_rounds "$OUT/rb-hair.txt" 7 "base new base2 new2" --model "$HAIR"
  cut -c1-100 "$OUT/rb-hair.txt"
  MATCH=(--match "CONV_2D v1 @240 " --match "CONV_2D v1 @256 ")
  sweep 7 "$OUT/style-fp32.md" "$STYLE" "" "$OLD" new:
  sweep 7 "$OUT/style-fp16.md" "$STYLE" "$F16" "$OLD" new:
  summary "$OUT/style-fp32.md" "$OUT/style-fp16.md"
  device_rounds "$OUT/rb-style.txt" 5 "base new base2 new2" --model "$STYLE"
  cut -c1-100 "$OUT/rb-style.txt"
  # No K_SPLIT or SMEM_TILE layer short of invocations: no-change rows.
  device_rounds "$OUT/rb-other.txt" 5 "base new" --model "$M/deeplabv3_257_mv_gpu.tflite"
  device_rounds "$OUT/rb-other.txt" 4 "base new" --model build/models/mobilenet_v1_1.0_224.tflite
  cut -c1-100 "$OUT/rb-other.txt"
  exit 0
fi
