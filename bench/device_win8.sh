#!/bin/bash
# win8, session 19 (issue 18): style's largest 3x3 layers, @256 (3x3 16->8 at
# 384x384, 288 weight vec4s) and @240 (3x3 32->16 at 192x192, 1152 vec4s),
# through conv2d_window.comp's literal path (WINDOW_SMALL + WEIGHTS_LITERAL,
# 1 pixel per invocation) against their default (conv2d.comp SMEM_TILE,
# ST_LIT). From the repository root on the NVIDIA device machine:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_win8.sh
# 1. conv_sweep.py (per-dispatch timer queries, min; the figure of record):
#    @256 and @240 in this branch's library, config-only variants (WIN8_V
#    replaces the list); its "sum of dispatches" row shows the other layers
#    WINDOW_SMALL moves too.
# 2. The window programs dumped (gap_dump.py) and timed back to back
#    (gap_probe.py), beside the default programs.
# 3. WIN8_RB=1: run_bench style fp32, base / new interleaved.
# Prints a short table last; about 70 s.
source "$(dirname "$0")/device_common.sh"
STYLE=$M/style_transfer_f16_384.tflite
SM=(--match "CONV_2D v1 @256 " --match "CONV_2D v1 @240 ")
X=env.TFLITE_GLES_X
S=$X"_WINDOW_SMALL=1"
W=$X"_WINDOW_CONV"
L=$X"_WINDOW_LITERAL_VEC4S=2048"
NL=$X"_WINDOW_LITERAL=0"
SL=$X"_WINDOW_SMALL_LIT=36864"
sweep() {  # LIB LIMIT VARIANT...
  local lib=$1 limit=$2 args=()
  shift 2
  for v in "$@"; do args+=(--variant "$v"); done
  TFLITE_GLES_LIB=$lib timeout "$limit" python3 bench/conv_sweep.py --model "$STYLE" --stat min \
    --rounds ${WIN8_ROUNDS:-3} --per-round ${WIN8_PER:-8} --peak 67 "${SM[@]}" "${args[@]}" \
    2>&1 | grep -v "^INFO\|^WARNING: All log"
}
T0=$(date +%s)
stamp() { echo "$1 after $(( $(date +%s) - T0 )) s"; }
# Warm-up: the first timed rows after the machine's start ran at low clocks.
WIN8_ROUNDS=1 WIN8_PER=6 sweep "$NEW_LIB" 10 f32: > "$OUT/warm.txt"
stamp warm
# 1. The figure of record.
V=${WIN8_V:-"f32: sm:$S sm116:$S,$W=1/16/8 sm116L:$S,$W=1/16/8,$L sm216L:$S,$W=2/16/8,$L
  sm1816L:$S,$W=1/8/16,$L slitL:$SL,$L sm116nolit:$S,$W=1/16/8,$NL"}
# shellcheck disable=SC2086
sweep "$NEW_LIB" ${WIN8_SWEEP_S:-44} $V > "$OUT/sweep.md" 2>&1
stamp sweep
# 2. The programs back to back: the default ones and sm116L's.
D=/tmp/win8-dump
rm -rf "$D" && mkdir -p "$D"
timeout 10 python3 bench/gap_dump.py "$STYLE" "$D/def" > /dev/null 2>&1
timeout 10 python3 bench/gap_dump.py "$STYLE" "$D/win" "sm116L:$S,$W=1/16/8,$L" > /dev/null 2>&1
timeout 10 python3 bench/gap_probe.py --reps 30 --match "CONV_2D v1 @256" \
  --match "CONV_2D v1 @240" "$D/def" "$D/win" > "$OUT/gap.md" 2>&1
mkdir -p "$OUT/dumps"
# The two layers' programs (the file names are cut: find them by label), and
# which shader, PX and weights each took.
: > "$OUT/layers.txt"
for f in $(grep -lE "@dump label .*CONV_2D v1 @(256|240)$" "$D"/def/*.comp "$D"/win/*.comp); do
  gzip -c "$f" > "$OUT/dumps/$(basename "$(dirname "$f")")-$(basename "$f").gz"
  echo "$(basename "$(dirname "$f")") $(grep -oE "CONV_2D v1 @[0-9]+$" "$f")" \
    "$(grep -oE "@dump shader .*" "$f")" "$(grep -E "^#define (PX|ST_LIT_N|WEIGHTS_LITERAL)\b" "$f" |
    cut -c9-20 | tr '\n' ' ')" >> "$OUT/layers.txt"
done
grep -l "@dump shader conv2d_window" "$D"/win/*.comp 2>/dev/null | xargs -n1 basename \
  > "$OUT/window_layers.txt"
stamp "gap probe"
# 3. Style's whole invoke, base / new interleaved (fp32).
: > "$OUT/rb.md"
if [ -n "${WIN8_RB:-}" ]; then
  for run in base new base2 new2; do
    echo "== $run" >> "$OUT/rb.md"
    TFLITE_GLES_LIB=$(device_lib $run) timeout 9 python3 bench/run_bench.py --model "$STYLE" \
      --backends gles_fp32 --iterations 200 --max-seconds 2 --out-dir "/tmp/rb-$run" --name rb \
      2>&1 | grep "^|" >> "$OUT/rb.md"
  done
  stamp run_bench
fi
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>/dev/null | head -1
grep -E "^\||rror|Trace" "$OUT/sweep.md" | grep -v "^|---" | cut -c1-200
echo "== gap (dumped programs back to back, µs)"
grep "^| [a-z]" "$OUT/gap.md" | cut -d"|" -f2,3,5 | cut -c1-70
echo "== window layers in sm116L: $(wc -l < "$OUT/window_layers.txt")"
cat "$OUT/layers.txt"
grep -E "^\||^==" "$OUT/rb.md" | cut -c1-150
