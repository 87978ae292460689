#!/bin/bash
# peak4, session 15 (issue 18): the largest convolutions of style transfer
# (@3, @272 9x9; @240, @256 3x3) and DeepLab against the fp32 FMA peak (67
# TFLOP/s), on the NVIDIA device machine. From the repository root, with this
# branch's library in build/ and the session's base library in .devbuild/base/:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_peak4.sh
# 1. conv_sweep.py (per-dispatch timer queries, min of rounds x invokes,
#    variants interleaved in one process): style's four layers, base library
#    (fp32, fp16), then this library's default and conv2d_window.comp
#    SLICE_STEPS (one input slice's window at a time) with blocks PX/LX/LY of
#    more pixels per invocation (ss..), with WINDOW_SMALL for the 3x3 layers
#    too (sm..), FMA_CHAIN (..f), PACK3 (pk: @272's weights 3 vec4s per 4),
#    BLOCK_STEPS (bs: blocks stacked per workgroup, the next one's loads in
#    flight), t228 (conv2d.comp K_SPLIT tile 2/2/8 for @240), fp32 and fp16;
#    fp16 also HALF_SMEM (..hs: window and weights as packed halves).
#    DeepLab's three largest by FLOPs (base library). bench/peak_probe.py lds:
#    a broadcast shared-memory vec4 read's cost against FMAs, standalone.
# 2. PEAK4_RUNS="base new ...": run_bench.py rounds of style, DeepLab,
#    MobileNet v1 1.0.
# Under 100 s; a compact table per layer (µs per variant) at the end.
source "$(dirname "$0")/device_common.sh"
STYLE=$M/style_transfer_f16_384.tflite
DEEP=$M/deeplabv3_257_mv_gpu.tflite
WC=env.TFLITE_GLES_X_WINDOW_CONV
SS=env.TFLITE_GLES_X_WINDOW_SLICE_STEPS=1
SM=env.TFLITE_GLES_X_WINDOW_SMALL=1
FM=env.TFLITE_GLES_X_FMA_CHAIN=1
R=${PEAK4_ROUNDS:-6}
P=${PEAK4_PER:-8}
MATCH=(--match "CONV_2D v1 @3 " --match "CONV_2D v1 @272 " --match "CONV_2D v1 @240 "
       --match "CONV_2D v1 @256 ")
# sweep LIB LIMIT FILE MODEL OPTS VARIANT...: conv_sweep.py, OPTS (precision
# options) prefixed to every variant; the rest of the arguments after "--".
sweep() {
  local lib=$1 limit=$2 file=$3 model=$4 opts=$5 v args=() extra=()
  shift 5
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    local rest=${1#*:}
    args+=(--variant "${1%%:*}:${opts}${opts:+${rest:+,}}$rest")
    shift
  done
  [ $# -gt 0 ] && shift && extra=("$@")
  TFLITE_GLES_LIB=$lib timeout "$limit" python3 bench/conv_sweep.py --model "$model" \
    --stat min --rounds "$R" --per-round "$P" --peak 67 "${args[@]}" "${extra[@]}" 2>&1 \
    | grep -v "^INFO\|^WARNING: All log" > "$file"
}
PK=env.TFLITE_GLES_X_WINDOW_PACK3=1
BS=env.TFLITE_GLES_X_WINDOW_BLOCK_STEPS
T=env.TFLITE_GLES_X_CONV_TILE
# Most telling first (a timeout drops the last variants' setup).
F32_V=${PEAK4_F32:-"def: ss4pk:$SS,$PK,$WC=4/16/16 ss4:$SS,$WC=4/16/16 pk:$PK
  ss4y8:$SS,$WC=4/16/8 ss4x8:$SS,$WC=4/8/16 ss8:$SS,$WC=8/8/16 bs2:$BS=2
  sm4y8:$SS,$SM,$WC=4/16/8 sm2y8:$SS,$SM,$WC=2/16/8 t228:$T=2/2/8/32/32 ss2:$SS,$WC=2/16/16
  ss4f:$SS,$WC=4/16/16,$FM bs2y8:$BS=2,$WC=2/16/8 bs2x4:$BS=2,$WC=4/16/8
  ss8y8:$SS,$WC=8/8/8 sm1y8:$SS,$SM,$WC=1/16/8"}
HS=env.TFLITE_GLES_X_WINDOW_HALF_SMEM=1
F16_V=${PEAK4_F16:-"def: hs:$HS ss4pk:$SS,$PK,$WC=4/16/16 ss4pkhs:$SS,$PK,$HS,$WC=4/16/16 pk:$PK
  ss4y8:$SS,$WC=4/16/8 ss4y8hs:$SS,$HS,$WC=4/16/8 ss4x8:$SS,$WC=4/8/16 bs2:$BS=2
  sm4y8:$SS,$SM,$WC=4/16/8 sm4y8hs:$SS,$SM,$HS,$WC=4/16/8 t228:$T=2/2/8/32/32"}
# shellcheck disable=SC2086
{
  sweep "$BASE_LIB" 12 "$OUT/style-base.md" "$STYLE" "" f32: "f16:$F16" -- "${MATCH[@]}"
  sweep "$NEW_LIB" 48 "$OUT/style-f32.md" "$STYLE" "" $F32_V -- "${MATCH[@]}"
  sweep "$NEW_LIB" 28 "$OUT/style-f16.md" "$STYLE" "$F16" $F16_V -- "${MATCH[@]}"
  sweep "$BASE_LIB" 8 "$OUT/deeplab-base.md" "$DEEP" "" f32: "f16:$F16" -- --by-flops --top 3
} > "$OUT/sweep-log.txt" 2>&1
# What a broadcast shared-memory vec4 read costs against FMAs (standalone,
# bench/peak_probe.py lds; a few seconds), while time is left.
[ "$SECONDS" -lt 85 ] && timeout $((97 - SECONDS)) python3 bench/peak_probe.py lds \
  > "$OUT/lds-probe.md" 2>&1
# Call 1 measures switches that are off by default: no run_bench rounds
# (PEAK4_RUNS="base new ..." adds them).
device_models style_transfer_f16_384 deeplabv3_257_mv_gpu mobilenet_v1_1.0_224
: > "$OUT/bench.md"
[ -n "${PEAK4_RUNS:-}" ] && device_rounds "$OUT/bench.md" 12 "$PEAK4_RUNS" "${MODELS[@]}"
# The summary: per layer, every variant's µs (the first's % of 67 TF).
python3 - "$OUT"/style-base.md "$OUT"/style-f32.md "$OUT"/style-f16.md "$OUT"/deeplab-base.md <<'EOF'
import re, sys
for path in sys.argv[1:]:
    names = None
    print(f"== {path.rsplit('/', 1)[-1]}")
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| layer |"):
            names = cells[1:]
        elif line.startswith("#"):
            print(line.strip()[:100])
        elif names and line.startswith("| ") and not line.startswith("|---"):
            us = [m.group(1) if (m := re.match(r"([\d.]+) us", c)) else c for c in cells[1:]]
            tf = re.search(r"\(([\d.]+), (\d+) %\)", cells[1])
            head = re.sub(r"^.*(@\d+).*$", r"\1", cells[0]) if "@" in cells[0] else cells[0][:22]
            pct = f" [{tf.group(1)} TF {tf.group(2)}%]" if tf else ""
            print(f"{head}{pct}: " + " ".join(f"{n} {u}" for n, u in zip(names, us)))
EOF
grep -E "^\| (highp|mediump)" "$OUT/lds-probe.md" 2>/dev/null | cut -d'|' -f2-5
echo "== run_bench (ms fp32 / fp16)"
grep -E "^== |tflite" "$OUT/bench.md" | sed -E 's/\| *([a-z_0-9.]+)\.tflite *\|/\1/' | cut -c1-90
