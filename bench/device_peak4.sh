#!/bin/bash
# peak4, session 15 (issue 18): the largest convolutions of style transfer
# (@3, @272 9x9; @240, @256 3x3) and DeepLab against the fp32 FMA peak (67
# TFLOP/s), on the NVIDIA device machine. From the repository root, with this
# branch's library in build/ and the session's base library in .devbuild/base/:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_peak4.sh
# 1. conv_sweep.py (per-dispatch timer queries, min of rounds x invokes,
#    variants interleaved in one process): style's four layers, base library
#    (fp32, fp16), then this library's defaults (NVIDIA fp32: SLICE_STEPS,
#    block 2/16/8, PACK3, FMA_CHAIN) with each choice taken back alone, and
#    SLICE_STEPS for fp16; DeepLab's and MobileNet v1 1.0's (stand-in) largest
#    dispatches with FMA_CHAIN on (default) and off. Calls 1-2's sweeps
#    (blocks, BLOCK_STEPS, WINDOW_SMALL, HALF_SMEM, K_SPLIT tiles,
#    peak_probe.py lds): docs/perf/log.md, "peak4, session 15".
# 2. run_bench.py base / new: style, DeepLab, MobileNet v1 1.0 (stand-in),
#    ours fp32 and fp16 (PEAK4_RUNS overrides the rounds).
# 3. cold_start.py: style fp32 with every cache empty, base vs new.
# Under 90 s; a compact table per layer (µs per variant) at the end.
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
PK0=env.TFLITE_GLES_X_WINDOW_PACK3=0
FM0=env.TFLITE_GLES_X_FMA_CHAIN=0
HS=env.TFLITE_GLES_X_WINDOW_HALF_SMEM=1
BS=env.TFLITE_GLES_X_WINDOW_BLOCK_STEPS
T=env.TFLITE_GLES_X_CONV_TILE
# Call 3: this branch's defaults (NVIDIA fp32: SLICE_STEPS, block 2/16/8,
# PACK3, FMA_CHAIN; the window taps written out) against the base library,
# each new choice taken back alone (no..), and SLICE_STEPS for fp16.
NO="env.TFLITE_GLES_X_WINDOW_SLICE_STEPS=0,$FM0,$PK0,$WC=2/16/16"
F32_V=${PEAK4_F32:-"def: nofma:$FM0 noss:env.TFLITE_GLES_X_WINDOW_SLICE_STEPS=0 nopk:$PK0
  s4y8:$WC=4/16/8 old:$NO"}
F16_V=${PEAK4_F16:-"def: ss:$SS ssfc:$SS,$FM ssb16:$SS,$WC=2/16/16"}
# shellcheck disable=SC2086
{
  sweep "$BASE_LIB" 8 "$OUT/style-base.md" "$STYLE" "" f32: "f16:$F16" -- "${MATCH[@]}"
  sweep "$NEW_LIB" 17 "$OUT/style-f32.md" "$STYLE" "" $F32_V -- "${MATCH[@]}"
  sweep "$NEW_LIB" 11 "$OUT/style-f16.md" "$STYLE" "$F16" $F16_V -- "${MATCH[@]}"
  # FMA_CHAIN's reach beyond style (gemm.comp, conv2d.comp): DeepLab and
  # MobileNet v1 1.0 (stand-in), fp32, the new default against it off.
  R=4 P=5 sweep "$NEW_LIB" 7 "$OUT/deeplab.md" "$DEEP" "" def: "nofma:$FM0" -- --by-flops --top 3
  python3 tools/build_standins.py build/models mobilenet_v1_1.0_224 > /dev/null 2>&1
  R=4 P=5 sweep "$NEW_LIB" 7 "$OUT/mobilenet.md" build/models/mobilenet_v1_1.0_224.tflite "" \
    def: "nofma:$FM0" -- --by-flops --top 3
} > "$OUT/sweep-log.txt" 2>&1
# Cold start (no cache at all: every program compiled), style fp32: the
# written-out taps' compile time, base vs new.
timeout 10 python3 bench/cold_start.py --model "$STYLE" --cases empty --repeats 1 \
  --lib "base=$BASE_LIB" --lib "new=$NEW_LIB" > "$OUT/cold.md" 2>&1
# run_bench, base and new interleaved: style, DeepLab, MobileNet v1 1.0
# (stand-in); call 2's 10 s cut the new library's rows: 13 s, errors kept.
for run in ${PEAK4_RUNS-base new}; do
  echo "== $run"
  start=$SECONDS
  TFLITE_GLES_LIB=$(device_lib "$run") timeout 13 python3 bench/run_bench.py --model "$STYLE" \
    --model "$DEEP" --standin mobilenet_v1_1.0_224 --backends gles_fp32,gles_fp16 \
    --iterations 200 --max-seconds 1 --out-dir "/tmp/rb-$run" --name rb > "/tmp/rb-$run.txt" 2>&1
  echo "rc $? in $((SECONDS - start)) s"
  grep -E "^\| [a-z]|Error|error|Traceback" "/tmp/rb-$run.txt" | head -8
done > "$OUT/bench.md" 2>&1
# The summary: per layer, every variant's µs (the first's % of 67 TF).
python3 - "$OUT"/style-base.md "$OUT"/style-f32.md "$OUT"/style-f16.md "$OUT"/deeplab.md \
  "$OUT"/mobilenet.md <<'EOF'
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
            head = {"@251": "@256", "@236": "@240"}.get(head, head)  # labels cut at 48
            pct = f" [{tf.group(1)} TF {tf.group(2)}%]" if tf else ""
            print(f"{head}{pct}: " + " ".join(f"{n} {u}" for n, u in zip(names, us)))
EOF
echo "== run_bench (ms fp32 / fp16)"
grep -E "^== |^rc |tflite|rror|Trace" "$OUT/bench.md" | sed -E 's/\| *([a-z_0-9.]+)\.tflite *\|/\1/' \
  | cut -c1-100
echo "== cold start, style fp32 (empty caches; apply + first invoke, ms)"
grep -E "^repeat" "$OUT/cold.md" 2>/dev/null | sed 's/^.*tflite //'
