#!/bin/bash
# peak5, session 16 (issue 18): the largest convolutions of style transfer
# (@3, @272 9x9; @256, @240 3x3) and DeepLab's @66 1x1 against the fp32 FMA
# peak (67 TFLOP/s), on the NVIDIA device machine. From the repository root,
# with this branch's library in build/ and the session's base library in
# .devbuild/base/:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_peak5.sh
# 1. conv_sweep.py (per-dispatch timer queries, min of rounds x invokes,
#    variants interleaved in one process): style's four layers, base library,
#    then this library's defaults (which also dump their programs:
#    TFLITE_GLES_X_DUMP_SHADERS) and variants (PEAK5_F32 / PEAK5_F16); the
#    other models' largest dispatch and dispatch sums, base and new.
# 2. PEAK5_SHAPES=1: bench/shape_probe.py on the dumped programs: per layer an
#    empty main() on its grid, a synthetic one of its FMAs and accumulators
#    without memory traffic (with its shared arrays, with shared reads), and
#    other geometries of the same FMAs (call 1 also timed the programs).
# 3. run_bench base / new (PEAK5_RUNS): style and DeepLab.
# Under 100 s; a compact table per layer at the end.
source "$(dirname "$0")/device_common.sh"
NEW_LIB=${PEAK5_NEW_LIB:-$NEW_LIB}  # llvmpipe checks of the logic
STYLE=$M/style_transfer_f16_384.tflite
DEEP=$M/deeplabv3_257_mv_gpu.tflite
R=${PEAK5_ROUNDS:-5}
P=${PEAK5_PER:-8}
MATCH=(--match "CONV_2D v1 @3 " --match "CONV_2D v1 @272 " --match "CONV_2D v1 @240 "
       --match "CONV_2D v1 @256 ")
DUMP=${PEAK5_DUMP:-/tmp/peak5-dump}
X=${PEAK5_SLOW:-1}  # timeouts x X (llvmpipe checks of the logic)
rm -rf "$DUMP" && mkdir -p "$DUMP"/{s32,s16,d32,d16}
# sweep LIB LIMIT FILE MODEL OPTS VARIANT... [-- CONV_SWEEP_ARGS...]: OPTS
# (precision options) prefixed to every variant.
sweep() {
  local lib=$1 limit=$2 file=$3 model=$4 opts=$5 args=() extra=()
  shift 5
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    local rest=${1#*:}
    args+=(--variant "${1%%:*}:${opts}${opts:+${rest:+,}}$rest")
    shift
  done
  [ $# -gt 0 ] && shift && extra=("$@")
  TFLITE_GLES_LIB=$lib timeout $((limit * X)) python3 bench/conv_sweep.py --model "$model" \
    --stat min --rounds "$R" --per-round "$P" --peak 67 "${args[@]}" "${extra[@]}" 2>&1 \
    | grep -v "^INFO\|^WARNING: All log" > "$file"
}
D=env.TFLITE_GLES_X_DUMP_SHADERS
SB=env.TFLITE_GLES_X_CONV_SMEM_BLOCK
T=env.TFLITE_GLES_X_CONV_TILE
PF=env.TFLITE_GLES_X_CONV_SMEM_PREFETCH=1
WS=env.TFLITE_GLES_X_CONV_KSPLIT_WSMEM=1
S8=env.TFLITE_GLES_X_CONV_SMEM_SLICES=8
NS=env.TFLITE_GLES_X_CONV_SMEM_TILE=0
W=env.TFLITE_GLES_X_WINDOW_CONV
# Call 4 (calls 1-3: docs/perf/log.md, "peak5, session 16"): this library's
# defaults (NVIDIA: SMEM_TILE for 8 input slices, ST_PREFETCH's rule, K_SPLIT
# weights in shared memory from 16384 pixels in fp32) against the base library
# and against themselves taken back (old); the other models' dispatch sums;
# run_bench base / new (style, DeepLab). Calls 1-3's sweeps: PEAK5_F32 / _F16.
WK=env.TFLITE_GLES_X_CONV_KSPLIT_WSMEM
OLD="env.TFLITE_GLES_X_CONV_SMEM_PREFETCH=0,env.TFLITE_GLES_X_CONV_SMEM_SLICES=4,$WK=0"
F32_V=${PEAK5_F32:-"old:$OLD"}
F16_V=${PEAK5_F16:-"old:$OLD"}
# shellcheck disable=SC2086
{
  sweep "$BASE_LIB" 8 "$OUT/style-base.md" "$STYLE" "" f32: "f16:$F16" -- "${MATCH[@]}"
  sweep "$NEW_LIB" 8 "$OUT/style-f32.md" "$STYLE" "" "def:$D=$DUMP/s32" $F32_V -- \
    "${MATCH[@]}" --groups conv2d
  sweep "$NEW_LIB" 8 "$OUT/style-f16.md" "$STYLE" "$F16" def: $F16_V -- "${MATCH[@]}" \
    --groups conv2d
  # The other models: their largest dispatch and sums, base library and new.
  for m in deeplabv3_257_mv_gpu palm_detection_full; do
    [ -f "$M/$m.tflite" ] || continue
    for lib in base new; do
      R=3 P=4 sweep "$(device_lib $lib)" 5 "$OUT/$m-$lib.md" "$M/$m.tflite" "" f32: "f16:$F16" \
        -- --by-flops --top 1
    done
  done
} > "$OUT/sweep-log.txt" 2>&1
# The shapes' ceilings (dumped programs of this library's defaults): call 1's
# columns (fp32; fp16 in call 1), and FMA-only geometries of the same FMAs
# (LX/LY/LZ/ROWS/SLICES/SMEM; no shared memory): which one passes 30 % in fp32.
ALTS=()
for a in 16/8/1/4/2 16/8/1/4/4 16/8/1/8/2 16/8/1/2/4 8/8/1/4/4 8/8/1/4/2 32/4/1/4/2 \
  32/1/4/4/4 64/1/2/4/4 16/4/1/8/4; do ALTS+=(--alt "$a/0"); done
[ "${PEAK5_SHAPES:-0}" = 1 ] && {
  timeout $((26 * X)) python3 bench/shape_probe.py --no-real "${ALTS[@]}" --match "CONV_2D v1 @3" \
    --match "CONV_2D v1 @272" --match "CONV_2D v1 @256" --match "CONV_2D v1 @240" "$DUMP/s32"
  timeout $((8 * X)) python3 bench/shape_probe.py --no-real "${ALTS[@]}" --match "@66" \
    --min-gflop 0.1 "$DUMP/d32" | grep "^| [A-Z]"
} > "$OUT/shape.md" 2>&1
for run in ${PEAK5_RUNS-base new base2 new2}; do
  echo "== $run"
  start=$SECONDS
  TFLITE_GLES_LIB=$(device_lib "$run") timeout 10 python3 bench/run_bench.py --model "$STYLE" \
    --model "$DEEP" --backends gles_fp32,gles_fp16 --iterations 200 --max-seconds 1 \
    --out-dir "/tmp/rb-$run" --name rb > "/tmp/rb-$run.txt" 2>&1
  echo "rc $? in $((SECONDS - start)) s"
  grep -E "^\| [a-z]|Error|error|Traceback" "/tmp/rb-$run.txt" | head -8
done > "$OUT/bench.md" 2>&1
# The summary: per layer, every variant's µs (the first's % of 67 TF).
python3 - "$OUT"/style-{base,f32,f16}.md "$OUT"/{deeplabv3_257_mv_gpu,selfie_segmentation,palm_detection_full}-{base,new}.md <<'EOF'
import re, sys
for path in sys.argv[1:]:
    names = None
    try:
        open(path).close()
    except OSError:
        continue
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
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1
[ -f "$OUT/shape.md" ] && echo "== shape_probe (us, % of 67 TF): real | empty grid | fma |" \
  "fma+smem | fma+smem reads | alts" && grep -E "^floor|^\| [A-Z]|rror|Trace" "$OUT/shape.md" \
  | sed -E 's/^\| (MIRROR_PAD|CONV_2D|ADD)[^|]*(@[0-9]+)/| \2/' | cut -c1-900
[ -s "$OUT/bench.md" ] && echo "== run_bench (ms fp32 / fp16)" && \
  grep -E "^== |^rc |tflite|rror|Trace" "$OUT/bench.md" | cut -c1-100
true
