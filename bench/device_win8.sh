#!/bin/bash
# win8, session 19 (issue 18): style's largest 3x3 layers, @256 (3x3 16->8 at
# 384x384, 288 weight vec4s) and @240 (3x3 32->16 at 192x192, 1152 vec4s),
# through conv2d_window.comp's literal path (WINDOW_SMALL + WEIGHTS_LITERAL,
# 1 pixel per invocation) against their default (conv2d.comp SMEM_TILE,
# ST_LIT). From the repository root on the NVIDIA device machine:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_win8.sh
# 1. conv_sweep.py (per-dispatch timer queries, min; the figure of record):
#    @256 and @240, this branch's defaults against the gate off
#    (TFLITE_GLES_X_WINDOW_SMALL_LIT=0); WIN8_V replaces the variants.
# 2. test_window_literal.py's 3x3 literal cases on this GPU.
# 3. WIN8_GAP=1: both programs dumped (gap_dump.py) and timed back to back
#    (gap_probe.py). WIN8_RB=1: run_bench style fp32, base / new interleaved.
# Prints a short table last; about 70 s.
source "$(dirname "$0")/device_common.sh"
STYLE=$M/style_transfer_f16_384.tflite
SM=(--match "CONV_2D v1 @256 " --match "CONV_2D v1 @240 ")
X=env.TFLITE_GLES_X
S=$X"_WINDOW_SMALL=1"
W=$X"_WINDOW_CONV"
L=$X"_WINDOW_LITERAL_VEC4S=2048"
NL=$X"_WINDOW_LITERAL=0"
OFF=$X"_WINDOW_SMALL_LIT=0"
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
# 1. The figure of record: this branch's defaults (NVIDIA fp32: @256 / @240 in
#    the window kernel with literal weights at PX 1) against the same library
#    with the gate off (their conv2d.comp SMEM_TILE / ST_LIT programs, as the
#    base's). Call A's 8 variants ran out of time in their setup: 2 here.
V=${WIN8_V:-"new: off:$OFF"}
# shellcheck disable=SC2086
sweep "$NEW_LIB" ${WIN8_SWEEP_S:-50} $V > "$OUT/sweep.md" 2>&1
stamp sweep
# The literal 3x3 paths against LiteRT CPU on this GPU.
(cd tests/python && timeout 14 python3 -m pytest -q -x test_window_literal.py \
  -k "small_windows or large_weights" > "$OUT/tests.txt" 2>&1)
stamp "tests rc $?: $(tail -1 "$OUT/tests.txt")"
if [ -n "${WIN8_GAP:-}" ]; then
# 2. WIN8_GAP=1: the programs back to back, new and off.
D=/tmp/win8-dump
rm -rf "$D" && mkdir -p "$D"
timeout 10 python3 bench/gap_dump.py "$STYLE" "$D/new" > /dev/null 2>&1
timeout 10 python3 bench/gap_dump.py "$STYLE" "$D/off" "off:$OFF" > /dev/null 2>&1
timeout 10 python3 bench/gap_probe.py --reps 30 --match "CONV_2D v1 @256" \
  --match "CONV_2D v1 @240" "$D/new" "$D/off" > "$OUT/gap.md" 2>&1
mkdir -p "$OUT/dumps"
# The two layers' programs (the file names are cut: find them by label), and
# which shader, PX and weights each took.
: > "$OUT/layers.txt"
for f in $(grep -lE "@dump label .*CONV_2D v1 @(256|240)$" "$D"/new/*.comp "$D"/off/*.comp); do
  gzip -c "$f" > "$OUT/dumps/$(basename "$(dirname "$f")")-$(basename "$f").gz"
  echo "$(basename "$(dirname "$f")") $(grep -oE "CONV_2D v1 @[0-9]+$" "$f")" \
    "$(grep -oE "@dump shader .*" "$f")" "$(grep -E "^#define (PX|ST_LIT_N|WEIGHTS_LITERAL)\b" "$f" |
    cut -c9-20 | tr '\n' ' ')" >> "$OUT/layers.txt"
done
grep -l "@dump shader conv2d_window" "$D"/new/*.comp 2>/dev/null | xargs -n1 basename \
  > "$OUT/window_layers.txt"
stamp "gap probe"
fi
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
[ -n "${WIN8_GAP:-}" ] && cat "$OUT/layers.txt"
grep -E "passed|failed|rror" "$OUT/tests.txt" | tail -3
grep -E "^\||^==" "$OUT/rb.md" | cut -c1-150
