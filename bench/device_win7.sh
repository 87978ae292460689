#!/bin/bash
# win7, session 18 (issue 18): style transfer's 9x9 layers (@272 8->3, @3 3->8
# at 384x384) in other instruction streams. From the repository root:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_win7.sh
# 1. bench/window_probe.py: standalone kernels of the real shapes (random data,
#    checked against numpy): more float accumulator chains per invocation,
#    weights as literals / uniform-block operands / shared memory, fp16.
# 2. conv_sweep.py (timer queries, min): the delegate's @3 and @272, base
#    library vs this branch (WIN7_VARIANTS: its switches), fp32 / fp16, and
#    @3 with TFLITE_GLES_FUSE_UPLOAD=0 (its input in device memory); the
#    branch with TFLITE_GLES_X_WINDOW_LITERAL=1 (weights as literals).
# 3. tests/python/test_window_literal.py on this GPU (LiteRT CPU vs the path).
# Prints the short tables last; under 100 s.
source "$(dirname "$0")/device_common.sh"
STYLE=$M/style_transfer_f16_384.tflite
SM=(--match "CONV_2D v1 @3 " --match "CONV_2D v1 @272 ")
NU=env.TFLITE_GLES_FUSE_UPLOAD=0
sweep() {
  local lib=$1; shift
  TFLITE_GLES_LIB=$lib timeout ${SWEEP_S:-25} python3 bench/conv_sweep.py --model "$STYLE" --stat min \
    --rounds ${WIN7_ROUNDS:-4} --per-round ${WIN7_PER:-8} --peak 67 "${SM[@]}" "$@" 2>&1 | grep -v "^INFO\|^WARNING: All log"
}
T0=$(date +%s)
# Call 5: no probe (WIN7_PROBE_ARGS runs one: e.g. "--only px3").
if [ -n "${WIN7_PROBE_ARGS:-}" ]; then
  timeout ${WIN7_PROBE_S:-15} python3 bench/window_probe.py --rounds 3 ${WIN7_PROBE_ARGS} \
    > "$OUT/probe.txt" 2>&1
else
  : > "$OUT/probe.txt"
fi
echo "probe rc $? after $(( $(date +%s) - T0 )) s"
{
  echo "== base library"
  sweep "$BASE_LIB" --variant f32: --variant "f32-noupload:$NU" --variant "f16:$F16"
  LIT=env.TFLITE_GLES_X_WINDOW_LITERAL=1
  W=env.TFLITE_GLES_X_WINDOW_CONV
  NOLIT=env.TFLITE_GLES_X_WINDOW_LITERAL=0
  NOSS=env.TFLITE_GLES_X_WINDOW_SLICE_STEPS=0
  # WEIGHTS_LITERAL is the NVIDIA fp32 default now: f32 has it, f32-nolit not.
  LPX=env.TFLITE_GLES_X_WINDOW_LITERAL_PX
  VARIANTS=${WIN7_VARIANTS:-"f32: f32-nolit:$NOLIT f32-lpx3:$LPX=3 f32-lpx1:$LPX=1
    f32-3/16/8:$W=3/16/8 f16:$F16"}
  echo "== new library"
  SWEEP_S=40
  args=(); for v in $VARIANTS; do args+=(--variant "$v"); done
  sweep "$NEW_LIB" "${args[@]}"
} > "$OUT/sweep.txt" 2>&1
echo "sweeps done after $(( $(date +%s) - T0 )) s"
# Style's whole invoke, base / new interleaved (run_bench: ours fp32, fp16): call 4's.
[ -n "${WIN7_RB:-}" ] && device_rounds "$OUT/rb.txt" 15 "base new base2 new2" --model "$STYLE"
touch "$OUT/rb.txt"
# The fully cold start (no serialization cache, the driver's cache empty): the
# literal programs compile longer.
timeout 28 python3 bench/cold_start.py --model "$STYLE" --cases empty --repeats 1 \
  --lib "base=$BASE_LIB" --lib "new=$NEW_LIB" > "$OUT/cold.txt" 2>&1
echo "cold start done after $(( $(date +%s) - T0 )) s"
# The literal path against LiteRT CPU on this GPU (the test forces the switch).
(cd tests/python && timeout ${WIN7_TEST_S:-28} python3 -m pytest -q -x test_window_literal.py \
  test_window_conv.py > "$OUT/tests.txt" 2>&1)
echo "tests rc $? after $(( $(date +%s) - T0 )) s: $(tail -1 "$OUT/tests.txt")"
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>/dev/null | head -1
grep -v "^|" "$OUT/probe.txt" | grep -iv "^@" | tail -5
grep "^|" "$OUT/probe.txt"
grep -E "^\||^==|rror" "$OUT/sweep.txt" | cut -c1-200 | tail -16
grep -E "^\||^==" "$OUT/rb.txt" | cut -c1-160 | tail -14
grep -E "^model|^\| empty|^repeat" "$OUT/cold.txt" | cut -c1-160 | tail -8
grep -E "passed|failed|Error" "$OUT/tests.txt" | tail -3
