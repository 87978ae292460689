#!/bin/bash
# tri8, session 19 (issue 18): style transfer's largest 3x3 layers (@256 3x3 16->8 at
# 384x384, @240 3x3 32->16 at 192x192) on the NVIDIA device machine. From the repository
# root, with this branch's library in build/ and the session's base library in .devbuild/base/:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_tri8.sh
# 1. conv_sweep.py (the figure of record: per-dispatch timer queries, min of rounds x
#    invokes): @256 / @240, base library, then this library's variants (the first dumps its
#    programs).
# 2. tri_probe.py --dump: the dumped @256 / @240 programs standalone, timed back to back
#    (b2b), with a query per dispatch as the delegate's profiler (each) and with the barrier
#    outside the query (out), and with one difference each (TRI8_EDITS).
# 3. tri_probe.py kernels (TRI8_PV): the literal kernel c12lit timed the same three ways;
#    @240's literals per slice group (lg:branch / lg:split) and 1 px x 4 slices.
# <= 80 s; a compact table of us and % of 67 TF per variant at the end.
source "$(dirname "$0")/device_common.sh"
NEW_LIB=${TRI8_NEW_LIB:-$NEW_LIB}  # llvmpipe checks of the logic
[ -f "$NEW_LIB" ] || NEW_LIB=$BASE_LIB  # a commit whose library is the base's
STYLE=$M/style_transfer_f16_384.tflite
R=${TRI8_ROUNDS:-4}
P=${TRI8_PER:-8}
X=${TRI8_SLOW:-1}  # timeouts x X (llvmpipe checks of the logic)
REPS=${TRI8_REPS:-40}
MATCH=(--match "CONV_2D v1 @240 " --match "CONV_2D v1 @256 ")
DUMP=${TRI8_DUMP:-/tmp/tri8-dump}
rm -rf "$DUMP" && mkdir -p "$DUMP"/s32 "$DUMP"/s2
D=env.TFLITE_GLES_X_DUMP_SHADERS
LIT=env.TFLITE_GLES_X_CONV_SMEM_LIT
X_=env.TFLITE_GLES_X_CONV_SMEM
# Call 2: combinations of call 1's winners (docs/perf/log.md, "tri8, session 19"); every
# variant but rep takes @240's literals over 2 groups (LIT_GROUPS=2; @256 has one group) and
# rep* dispatch each step 20 times inside its query (TFLITE_GLES_X_PROFILE_REPEAT; time / 20).
RP=env.TFLITE_GLES_X_PROFILE_REPEAT=20
G2=${X_}_LIT_GROUPS=2 H=${X_}_HOIST=1 S=${X_}_LIT_SPEC=1
NV=${TRI8_NEW_V-"rep:$RP g2:$G2 g2h:$G2,$H g2hs:$G2,$H,$S g2hp:$G2,$H,${X_}_PREFETCH=1
  g2hps:$G2,$H,$S,${X_}_PREFETCH=1,$D=$DUMP/s2 g2hn:$G2,$H,${X_}_PREFETCH=0 g2s:$G2,$S
  g2hps_rep:$G2,$H,$S,${X_}_PREFETCH=1,$RP"}
# sweep LIB LIMIT FILE VARIANT... : conv_sweep of style's two layers.
sweep() {
  local lib=$1 limit=$2 file=$3 args=()
  shift 3
  for v in "$@"; do args+=(--variant "$v"); done
  TFLITE_GLES_LIB=$lib timeout $((limit * X)) python3 bench/conv_sweep.py --model "$STYLE" \
    --stat min --rounds "$R" --per-round "$P" --peak 67 "${args[@]}" "${MATCH[@]}" 2>&1 \
    | grep -v "^INFO\|^WARNING: All log" > "$file"
}
# shellcheck disable=SC2086
{
  # The GPU warmed first (session 18: a cold machine's first rows 1.3-4x slow).
  R=1 P=6 sweep "$BASE_LIB" 6 /tmp/tri8-warm.md f32:
  sweep "$BASE_LIB" 10 "$OUT/style-base.md" f32:
  sweep "$NEW_LIB" 32 "$OUT/style-new.md" "f32:$D=$DUMP/s32" $NV
} > "$OUT/sweep-log.txt" 2>&1
# 2. The dumped programs standalone, three timings, one difference each.
pick() { grep -l "@dump label .*CONV_2D v1 $1\$" "$DUMP"/${2:-s32}/*.comp 2>/dev/null | head -1; }
E256=${TRI8_EDITS:-"noprologue noupsample nomirror noprologue+noupsample+nomirror ssbo
  def.ST_HOIST=1 def.ST_HOIST=1+spec def.ST_HOIST=1+def.ST_PREFETCH=1+spec"}
E240=${TRI8_EDITS240:-"noprologue+noupsample+nomirror"}
probe_dump() {
  local f=$1 edits=$2 limit=$3 args=()
  [ -n "$f" ] || { echo "no dump"; return; }
  for e in $edits; do args+=(--edit "$e"); done
  timeout $((limit * X)) python3 bench/tri_probe.py --dump "$f" "${args[@]}" --reps "$REPS" \
    --timing b2b,each,out
}
{
  echo "== @256"; probe_dump "$(pick @256)" "$E256" 12
  echo "== @240 g2hps"; probe_dump "$(pick @240 s2)" "$E240" 6
} > "$OUT/dump.md" 2>&1
# 3. Standalone kernels (each checked against numpy), three timings.
PV=()
L=lx:16,ly:8,px:1
PVS=${TRI8_PV-"empty=$L,ts:2,w:empty c12litc=$L,ts:2,w:lit,chain:1
  c12litbc=$L,ts:2,w:lit,lg:branch,chain:1 c12lit_sb2c=$L,ts:2,w:lit,sb:2,lg:branch,chain:1"}
for v in $PVS; do
  PV+=(--variant "$v")
done
timeout $((14 * X)) python3 bench/tri_probe.py --max-seconds $((11 * X)) --reps "$REPS" \
  --timing b2b,each,out "${PV[@]}" > "$OUT/probe.md" 2>&1

# The summary.
python3 - "$OUT"/style-{base,new}.md <<'EOF'
import re, sys
for path in sys.argv[1:]:
    names = None
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    print(f"== {path.rsplit('/', 1)[-1]} (conv_sweep min, per-dispatch queries)")
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
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1
echo "== dumped programs standalone (us (% of 67 TF)): b2b | each (delegate's) | out"
grep -E "^== |^\| [^d-]|rror|Trace|no dump" "$OUT/dump.md" | grep -v "^| dump" \
  | sed -E 's/^\| +CONV_2D v1 @2[0-9]+ \| //; s/part.shaders.conv2d_smem.glsl/PART/' | cut -c1-110
echo "== tri_probe (us (% of 67 TF) b2b, each, out; max error vs numpy)"
grep -E "^\| @|rror|Trace|took" "$OUT/probe.md" \
  | sed -E 's/ smem [0-9]+ B//; s/ compile [0-9.]+ s//' \
  | cut -c1-120
true
