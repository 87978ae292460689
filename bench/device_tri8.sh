#!/bin/bash
# tri8, session 19 (issue 18): style transfer's largest 3x3 layers (@256 3x3 16->8 at
# 384x384, @240 3x3 32->16 at 192x192) on the NVIDIA device machine. From the repository
# root, with this branch's library in build/ and the session's base library in .devbuild/base/:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_tri8.sh
# Call 4 (calls 1-2: docs/perf/log.md, "tri8, session 19", and git history of this file):
# this library's NVIDIA fp32 defaults (ST_LIT over @240's two slice groups, ST_HOIST, ...)
# 1. conv_sweep.py style (the figure of record: per-dispatch timer queries, min of rounds x
#    invokes): base library, then this library's defaults, the same with the session's
#    defaults taken back (old, same process) and rep (each dispatch 20 times inside its
#    query, time / 20: the labelled second figure);
# 2. the hair stand-in's dispatch sum (new vs old, one process; no other model's
#    programs take ST_LIT: llvmpipe dumps with NVIDIA's switches forced);
# 3. run_bench style fp32, base / new interleaved; 4. the literal tests on this GPU.
# <= 80 s; a compact table at the end.
source "$(dirname "$0")/device_common.sh"
# Call 5 (TRI8_TESTS_ONLY=1, the default now: call 4 measured): only the literal tests on this
# GPU, against LiteRT's CPU kernels (call 4's 12 s ended before the first result).
if [ "${TRI8_TESTS_ONLY:-1}" = 1 ]; then
  device_place_models
  timeout 55 python3 -m pytest tests/python/test_conv_smem_tile.py -q -x -rf \
    -k "literal_weights" > "$OUT/tests.txt" 2>&1
  echo "rc $?" >> "$OUT/tests.txt"
  tail -15 "$OUT/tests.txt" | cut -c1-200
  exit 0
fi
NEW_LIB=${TRI8_NEW_LIB:-$NEW_LIB}  # llvmpipe checks of the logic
[ -f "$NEW_LIB" ] || NEW_LIB=$BASE_LIB
STYLE=$M/style_transfer_f16_384.tflite
R=${TRI8_ROUNDS:-4}
P=${TRI8_PER:-8}
X=${TRI8_SLOW:-1}  # timeouts x X (llvmpipe checks of the logic)
MATCH=(--match "CONV_2D v1 @240 " --match "CONV_2D v1 @256 ")
X_=env.TFLITE_GLES_X_CONV_SMEM
OLD=${TRI8_OLD-"${X_}_LIT_GROUPS=1,${X_}_HOIST=0,${X_}_LIT_SPEC=0,${X_}_LIT_PREFETCH=0"}
RP=env.TFLITE_GLES_X_PROFILE_REPEAT=20
# sweep LIB LIMIT FILE MODEL VARIANT... : conv_sweep (MATCH's layers, or SEL's).
sweep() {
  local lib=$1 limit=$2 file=$3 model=$4 args=()
  shift 4
  for v in "$@"; do args+=(--variant "$v"); done
  TFLITE_GLES_LIB=$lib timeout $((limit * X)) python3 bench/conv_sweep.py --model "$model" \
    --stat min --rounds "$R" --per-round "$P" --peak 67 "${args[@]}" "${SEL[@]}" 2>&1 \
    | grep -v "^INFO\|^WARNING: All log" > "$file"
}
{
  SEL=("${MATCH[@]}")
  # The GPU warmed first (session 18: a cold machine's first rows 1.3-4x slow).
  R=1 P=6 sweep "$BASE_LIB" 5 /tmp/tri8-warm.md "$STYLE" f32:
  sweep "$BASE_LIB" 9 "$OUT/style-base.md" "$STYLE" f32:
  sweep "$NEW_LIB" 22 "$OUT/style-new.md" "$STYLE" f32: "old:$OLD" "rep:$RP"
  # Every other model: this library's defaults against themselves taken back, one process.
  timeout $((6 * X)) python3 tools/build_standins.py build/models hair_segmentation_512
  SEL=(--top 2)
  m=build/models/hair_segmentation_512
  [ -f "$m.tflite" ] && R=3 P=4 sweep "$NEW_LIB" 12 "$OUT/other-hair.md" "$m.tflite" new: "old:$OLD"
} > "$OUT/sweep-log.txt" 2>&1
# Whole model, fp32: base / new interleaved.
for run in ${TRI8_RUNS-base new}; do
  echo "== $run"
  TFLITE_GLES_LIB=$(device_lib "$run") timeout $((7 * X)) python3 bench/run_bench.py \
    --model "$STYLE" --backends gles_fp32 --iterations 200 --max-seconds 1 \
    --out-dir "/tmp/rb-$run" --name rb 2>&1 | grep -E "^\| [a-z]|rror|Trace" | head -3
done > "$OUT/bench.md" 2>&1
# The literal tests on this GPU (against LiteRT's CPU kernels).
if [ "${TRI8_TESTS:-1}" = 1 ]; then
  device_place_models
  timeout $((12 * X)) python3 -m pytest tests/python/test_conv_smem_tile.py -q -x \
    -k "literal_weights" > "$OUT/tests.txt" 2>&1
fi

# The summary.
python3 - "$OUT"/style-{base,new}.md "$OUT"/other-*.md <<'EOF'
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
        elif "rror" in line or "Trace" in line:
            print(line.strip()[:120])
        elif names and line.startswith("| ") and not line.startswith("|---"):
            if "other-" in path and not cells[0].startswith("sum"):
                continue
            us = [m.group(1) if (m := re.match(r"([\d.]+) us", c)) else c for c in cells[1:]]
            head = re.sub(r"^.*(@\d+).*$", r"\1", cells[0]) if "@" in cells[0] else cells[0][:22]
            head = {"@251": "@256", "@236": "@240"}.get(head, head)
            print(f"{head}: " + " ".join(f"{n} {u}" for n, u in zip(names, us)))
EOF
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1
echo "== run_bench style fp32 (ms): base / new interleaved"
grep -E "^== |tflite|rror|Trace" "$OUT/bench.md" | cut -c1-120
echo "== tests (test_conv_smem_tile.py -k literal_weights on this GPU)"
grep -E "passed|failed|Error" "$OUT/tests.txt" | tail -4 | cut -c1-150
true
