#!/bin/bash
# Lead, session 19 (issue 18): block shapes of style's @3 (9x9 3->8, literal
# weights) and @256 / @240 (3x3, ST_LIT) in the delegate, and the delegate's
# own programs timed standalone (gap_probe: back-to-back dispatches under one
# timer query) to split "timing method" from "program". From the repository
# root on the NVIDIA device machine:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_lead19.sh
# LEAD19_W (window variants), LEAD19_S (3x3 variants) replace the lists.
source "$(dirname "$0")/device_common.sh"
STYLE=$M/style_transfer_f16_384.tflite
X=${LEAD19_SLOW:-1}
DUMP=/tmp/lead19-dump
rm -rf "$DUMP" && mkdir -p "$DUMP"/{w,s}
D=env.TFLITE_GLES_X_DUMP_SHADERS
W=env.TFLITE_GLES_X_WINDOW_CONV
SB=env.TFLITE_GLES_X_CONV_SMEM_BLOCK
sweep() {  # LIMIT FILE MATCH VARIANT...
  local limit=$1 file=$2 match=$3 args=()
  shift 3
  for v in "$@"; do args+=(--variant "$v"); done
  timeout $((limit * X)) python3 bench/conv_sweep.py --model "$STYLE" --stat min \
    --rounds ${LEAD19_R:-4} --per-round ${LEAD19_P:-8} --peak 67 "${args[@]}" \
    --match "$match" 2>&1 | grep -v "^INFO\|^WARNING: All log" > "$file"
}
T0=$(date +%s)
# Warm-up: the first timed rows after the machine's start ran at low clocks.
LEAD19_R=1 LEAD19_P=6 sweep 8 /tmp/lead19-warm.md "CONV_2D v1 @256 " f32:
WV=${LEAD19_W:-"def:$D=$DUMP/w 1/16/8:$W=1/16/8 1/32/4:$W=1/32/4 1/32/8:$W=1/32/8
  1/8/16:$W=1/8/16 2/32/4:$W=2/32/4 2/8/8:$W=2/8/8 2/16/16:$W=2/16/16 4/16/8:$W=4/16/8
  2/16/8s2:env.TFLITE_GLES_X_WINDOW_BLOCK_STEPS=2"}
# shellcheck disable=SC2086
sweep 40 "$OUT/window.md" "CONV_2D v1 @3 " $WV
echo "window sweep after $(( $(date +%s) - T0 )) s"
SV=${LEAD19_S:-"def:$D=$DUMP/s 8/8:$SB=8/8/1/2 32/4:$SB=32/4/1/2 8/16:$SB=8/16/1/2
  32/8:$SB=32/8/1/2 16/16:$SB=16/16/1/2 64/2:$SB=64/2/1/2 16/4:$SB=16/4/1/2
  nolit:env.TFLITE_GLES_X_CONV_SMEM_LIT=0"}
# shellcheck disable=SC2086
sweep 30 "$OUT/smem.md" "CONV_2D v1 @256 " $SV
echo "3x3 sweep after $(( $(date +%s) - T0 )) s"
# The dumped default programs standalone, back to back (gap_probe).
timeout $((16 * X)) python3 bench/gap_probe.py --reps 30 --match "CONV_2D v1 @256" \
  --match "CONV_2D v1 @240" --match "CONV_2D v1 @3" "$DUMP/s" > "$OUT/gap.md" 2>&1
echo "gap after $(( $(date +%s) - T0 )) s"
tar -czf "$OUT/dumps.tgz" -C "$DUMP" . 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>/dev/null | head -1
for f in window smem gap; do echo "== $f"; grep -E "^\||rror|Trace" "$OUT/$f.md" | cut -c1-230 | head -24; done
