#!/bin/bash
# tri7, session 18 (issue 18): style transfer's largest 3x3 layers (@256 3x3
# 16->8 at 384x384, @240 3x3 32->16 at 192x192) on the NVIDIA device machine.
# From the repository root, with this branch's library in build/ and the
# session's base library in .devbuild/base/:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_tri7.sh
# 1. conv_sweep.py (per-dispatch timer queries, min of rounds x invokes,
#    variants interleaved): @256 / @240, base library, then this library's
#    defaults (which dump their programs) and TRI7_F32 / TRI7_F16 variants.
# 2. gap_probe.py on the dumped programs: each timed standalone beside
#    variants with one difference each (TRI7_EDITS).
# 3. tri_probe.py: standalone kernels of the layers' shapes (TRI7_PROBE_ARGS).
# Under 100 s; a compact table of µs and % of 67 TF per variant at the end.
source "$(dirname "$0")/device_common.sh"
NEW_LIB=${TRI7_NEW_LIB:-$NEW_LIB}  # llvmpipe checks of the logic
STYLE=$M/style_transfer_f16_384.tflite
R=${TRI7_ROUNDS:-5}
P=${TRI7_PER:-8}
X=${TRI7_SLOW:-1}  # timeouts x X (llvmpipe checks of the logic)
MATCH=(--match "CONV_2D v1 @240 " --match "CONV_2D v1 @256 ")
DUMP=${TRI7_DUMP:-/tmp/tri7-dump}
rm -rf "$DUMP" && mkdir -p "$DUMP"/{s32,s16,b32,b16}
D=env.TFLITE_GLES_X_DUMP_SHADERS
SB=env.TFLITE_GLES_X_CONV_SMEM_BLOCK
WO=env.TFLITE_GLES_X_CONV_SMEM_WONCE=1
LIT=env.TFLITE_GLES_X_CONV_SMEM_LIT
# Call 5 (calls 1-4: docs/perf/log.md): this library's NVIDIA defaults (ST_LIT for fp32
# layers of <= 2 output slices, ST_WONCE's rule in fp16) against the base library and against
# themselves taken back (old), style and the hair stand-in; run_bench base / new interleaved.
OLD="$LIT=0,env.TFLITE_GLES_X_CONV_SMEM_WONCE=0"
F32_V="old:$OLD nochain:env.TFLITE_GLES_X_FMA_CHAIN=0"
F16_V="h-old:$F16,$OLD"
# sweep LIB LIMIT FILE VARIANT... : conv_sweep of style's two layers.
sweep() {
  local lib=$1 limit=$2 file=$3 args=()
  shift 3
  for v in "$@"; do args+=(--variant "$v"); done
  TFLITE_GLES_LIB=$lib timeout $((limit * X)) python3 bench/conv_sweep.py --model "$STYLE" \
    --stat min --rounds "$R" --per-round "$P" --peak 67 "${args[@]}" "${MATCH[@]}" ${GROUPS_ARG:-} 2>&1 \
    | grep -v "^INFO\|^WARNING: All log" > "$file"
}
# shellcheck disable=SC2086
{
  # A warm-up: the first sweep of calls 2 and 4 ran cold (its rows 1.3-4x slow).
  R=1 P=4 sweep "$BASE_LIB" 6 /tmp/tri7-warm.md f32:
  sweep "$BASE_LIB" 10 "$OUT/style-base.md" f32: "f16:$F16"
  GROUPS_ARG="--groups conv2d" sweep "$NEW_LIB" 18 "$OUT/style-new.md" "f32:$D=$DUMP/s32" \
    "f16:$F16,$D=$DUMP/s16" ${TRI7_F32-$F32_V} ${TRI7_F16-$F16_V}
  # The hair stand-in (its 128x128 layers take SMEM_TILE on NVIDIA): GPU sums, this library.
  if [ "${TRI7_HAIR:-1}" = 1 ]; then
    python3 tools/build_standins.py build/models hair_segmentation_512 > /tmp/tri7-standins.txt 2>&1
    SAVED=("${MATCH[@]}") STYLE0=$STYLE
    MATCH=(--by-flops --top 2) STYLE=build/models/hair_segmentation_512.tflite
    R=3 P=6 sweep "$BASE_LIB" 8 "$OUT/hair-base.md" f32: "f16:$F16"
    R=3 P=6 sweep "$NEW_LIB" 12 "$OUT/hair-new.md" f32: "old:$OLD" "f16:$F16" "h-old:$F16,$OLD"
    MATCH=("${SAVED[@]}") STYLE=$STYLE0
  fi
} > "$OUT/sweep-log.txt" 2>&1
# TRI7_GAP=1: the delegate's programs standalone, and with one difference each (gap_probe's
# edits; calls 1-2 timed ST_WONCE / ST_DB / ST_ALL of a next form of the part this way: the
# ST_ALL form is bench/tri7/conv2d_smem_next.glsl at 08f100e).
NEXT=part.shaders/conv2d_smem.glsl
E1=${TRI7_EDITS:-"$NEXT $NEXT+def.ST_WONCE=1 accmedium"}
E2=${TRI7_EDITS2:-"$NEXT"}
gap() {
  local dirs=$1 edits=$2 args=()
  for e in $edits; do args+=(--edit "$e"); done
  # shellcheck disable=SC2086
  python3 bench/gap_probe.py --reps 30 --match "CONV_2D v1 @256" --match "CONV_2D v1 @240" "${args[@]}" $dirs
}
[ "${TRI7_GAP:-0}" = 1 ] && {
  timeout $((24 * X)) bash -c "$(declare -f gap); gap '$DUMP/s32 $DUMP/s16' '$E1'"
  timeout $((14 * X)) bash -c "$(declare -f gap); gap '$DUMP/b32 $DUMP/b16' '$E2'"
} > "$OUT/gap.md" 2>&1
# Whole model: run_bench style and hair, base library / this one, interleaved.
HAIR=build/models/hair_segmentation_512.tflite
for run in ${TRI7_RUNS-base new}; do
  echo "== $run"
  TFLITE_GLES_LIB=$(device_lib "$run") timeout $((12 * X)) python3 bench/run_bench.py \
    --model "$STYLE" $([ -f "$HAIR" ] && echo --model "$HAIR") --backends gles_fp32,gles_fp16 \
    --iterations 200 --max-seconds 1 --out-dir "/tmp/rb-$run" --name rb 2>&1 \
    | grep -E "^\| [a-z]|rror|Trace" | head -4
done > "$OUT/bench.md" 2>&1
# Standalone kernels of the two shapes (each checked against numpy).
PV=()
for v in "c12=lx:16,ly:8,px:1,ts:2,w:slice" "c12lit=lx:16,ly:8,px:1,ts:2,w:lit" \
  "c14=lx:16,ly:8,px:1,ts:4,w:slice" "c14lit=lx:16,ly:8,px:1,ts:4,w:lit" \
  "c14ubo=lx:16,ly:8,px:1,ts:4,w:ubo" "c12ubo=lx:16,ly:8,px:1,ts:2,w:ubo" \
  "c12litc=lx:16,ly:8,px:1,ts:2,w:lit,chain:1" "g64_12lit=lx:8,ly:8,px:1,ts:2,w:lit" \
  "w32_12lit=lx:32,ly:4,px:1,ts:2,w:lit" "g64_14lit=lx:8,ly:8,px:1,ts:4,w:lit" \
  "c24lit=lx:16,ly:8,px:2,ts:4,w:lit" "c12litm=lx:16,ly:8,px:1,ts:2,w:lit,p:m" \
  "c14litm=lx:16,ly:8,px:1,ts:4,w:lit,p:m"; do PV+=(--variant "$v"); done
if [ "${TRI7_PROBE:-0}" = 1 ]; then
  timeout $((40 * X)) python3 bench/tri_probe.py --max-seconds $((34 * X)) "${PV[@]}" \
    > "$OUT/probe.md" 2>&1
fi
# ST_LIT's tests on this GPU (against LiteRT's CPU kernels; fp16 included).
if [ "${TRI7_TESTS:-1}" = 1 ]; then
  timeout $((15 * X)) python3 -m pytest tests/python/test_conv_smem_tile.py -q \
    -k "literal_weights or prefetch_rule" \
    > "$OUT/tests.txt" 2>&1
fi

# The summary.
python3 - "$OUT"/style-{base,new}.md "$OUT"/hair-{base,new}.md <<'EOF'
import re, sys
for path in sys.argv[1:]:
    names = None
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    print(f"== {path.rsplit('/', 1)[-1]}")
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| layer |"):
            names = cells[1:]
        elif line.startswith("#") or "rror" in line or "Trace" in line:
            print(line.strip()[:120])
        elif names and line.startswith("| ") and not line.startswith("|---"):
            us = [m.group(1) if (m := re.match(r"([\d.]+) us", c)) else c for c in cells[1:]]
            head = re.sub(r"^.*(@\d+).*$", r"\1", cells[0]) if "@" in cells[0] else cells[0][:22]
            head = {"@251": "@256", "@236": "@240"}.get(head, head)
            print(f"{head}: " + " ".join(f"{n} {u}" for n, u in zip(names, us)))
EOF
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1
echo "== gap_probe (dumped programs standalone, us, TF)"
grep -E "^\| [a-z0-9]+/|rror|Trace" "$OUT/gap.md" | sed -E 's/CONV_2D v1 //; s/part.shaders.conv2d_smem.glsl/NEXT/g; s/def.ST_//g; s/RESIZE_NEAREST_NEIGHBOR v1 @236 \+ MIRROR/@240/; s/MUL v1 @248 \+ ADD v1 @251 \+ RESIZE_NEARE/@256/' | cut -c1-100
echo "== run_bench style, hair (ms): base library / this one"
grep -E "^== |tflite|rror|Trace" "$OUT/bench.md" | cut -c1-120
echo "== tests (test_conv_smem_tile.py's ST_LIT / ST_WONCE / prefetch rule on this GPU)"
grep -E "passed|failed|Error" "$OUT/tests.txt" | tail -4 | cut -c1-150
echo "== tri_probe (us, % of 67 TF, max error vs numpy)"
grep -E "^\| @|rror|Trace|took" "$OUT/probe.md" | sed -E 's/ smem [0-9]+ B//' | cut -c1-110
true
