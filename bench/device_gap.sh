#!/bin/bash
# gap, session 12 (issue 18): today's per-layer convolution times against the
# prototype of the same tile, and the delegate's own programs timed outside
# it. From the repository root after
#   DIR=.devbuild source bench/device_env.sh && cp -a .devgap/libtflite_gles.so* build/
#   bash .devgap/device_gap.sh            (or bench/device_gap.sh)
# 1. conv_sweep.py (per-dispatch timer queries, variants interleaved), style
#    and DeepLab, fp32 / fp16, shapes as uniforms or compiled in
#    (TFLITE_GLES_SPECIALIZE_SHAPES), median and min.
# 2. gap_dump.py + gap_probe.py: the delegate's programs of the largest
#    convolutions, timed standalone, with source edits (GAP_EDITS).
# 3. peak_probe.py conv: session 11's prototypes (smem smemw) on the same shapes.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
B=$(cd "$(dirname "$0")" && pwd)
[ -f "$B/gap_probe.py" ] || B=$PWD/bench
export PYTHONPATH=$PYTHONPATH:$PWD/bench:$PWD/tests/python
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
SP=env.TFLITE_GLES_SPECIALIZE_SHAPES=1
V=${GAP_VARIANTS:-"f32: f32-spec:$SP f16:$F16 f16-spec:$F16,$SP f16-m2:$F16,env.TFLITE_GLES_X_FP16_MATH=2"}
args=(); for v in $V; do args+=(--variant "$v"); done
STYLE=$M/style_transfer_f16_384.tflite
DEEP=$M/deeplabv3_257_mv_gpu.tflite
if [ -z "${GAP_SKIP_SWEEP:-}" ]; then
for m in ${GAP_SWEEP_MODELS:-$STYLE $DEEP}; do
  for stat in min median; do
    timeout 150 python3 bench/conv_sweep.py --model "$m" --top ${GAP_TOP:-8} --stat $stat \
      --rounds 6 --per-round 10 "${args[@]}" 2>&1 | grep -v "^INFO\|^WARNING: All log"
  done
done > "$OUT/sweep.md"
fi
D=/tmp/dumps; rm -rf $D
if [ -z "${GAP_SKIP_DUMP:-}" ]; then
for v in ${GAP_DUMPS:-"f32:" "f16:$F16"}; do
  n=${v%%:*}
  timeout 60 python3 "$B/gap_dump.py" "$STYLE" $D/style-$n "$v" 2>&1 | grep -v "^INFO\|^WARN"
  timeout 60 python3 "$B/gap_dump.py" "$DEEP" $D/deep-$n "$v" 2>&1 | grep -v "^INFO\|^WARN"
done
tar czf "$OUT/dumps.tgz" -C /tmp dumps
MATCH=${GAP_MATCH:-"CONV_2D v1 @256 CONV_2D v1 @240 CONV_2D v1 @3 CONV_2D v1 @272 CONV_2D v1 @66"}
margs=(); IFS=, read -ra ms <<< "${MATCH// CONV/,CONV}"; for m in "${ms[@]}"; do margs+=(--match "$m"); done
eargs=(); for e in ${GAP_EDITS:-ssbo noprologue noupsample noprologue+noupsample+nomirror}; do eargs+=(--edit "$e"); done
PROBE_PLATFORM=device timeout 200 python3 "$B/gap_probe.py" "${margs[@]}" "${eargs[@]}" \
  $D/style-* $D/deep-* 2>&1 \
  | grep -v "^INFO" > "$OUT/gap_probe.md"
fi
if [ -z "${GAP_SKIP_PROTO:-}" ]; then
PROBE_PLATFORM=device timeout 150 python3 bench/peak_probe.py conv "only=smem smemw rx" 2>&1 \
  | tail -n 30 > "$OUT/proto.md"
fi
# 4. Whole-model wall (options_ab.py, invokes interleaved, min and median):
#    GAP_AB="NAME:OPTIONS ..." variants on style and DeepLab.
if [ -n "${GAP_AB:-}" ]; then
  abargs=(); for v in $GAP_AB; do abargs+=(--variant "$v"); done
  for m in "$STYLE" "$DEEP"; do
    timeout 120 python3 bench/options_ab.py --model "$m" --iterations ${GAP_AB_ITER:-300} \
      "${abargs[@]}" 2>/dev/null | grep -v "^INFO"
  done > "$OUT/ab.md"
fi
cat "$OUT/gap_probe.md" "$OUT/proto.md" "$OUT/ab.md" "$OUT/sweep.md" 2>/dev/null
