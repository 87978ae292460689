#!/bin/bash
# style3, session 14 (issue 18): style transfer's fixed and non-convolution
# time on the NVIDIA device machine, base library (the session's start) vs
# this branch. From the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_style3.sh
# 1. conv_sweep.py (per-dispatch timer queries, min of 4 x 10 profiled
#    invokes): every dispatch of style (the summary: the 13 instance-norm
#    statistics, @3, @272, the last apply and the readback conversion);
#    base library, then this branch.
# 2. GPU time lines (TFLITE_GLES_X_TIMELINE=1, this branch) of style fp32
#    and fp16, with the 1.77 MB input and output copied on one thread
#    (today's default: parts >= 1 MB) and in parts of >= STYLE3_CP KB.
# 3. run_bench.py rounds, style fp32/fp16, base / new / new with
#    STYLE3_CP KB parts, interleaved, 3 times.
# 4. The style and norm tests on this GPU (test_norm_stats.py's split
#    cases, test_models.py's style cases).
# 5. If time is left: LiteRT GPU's style row, DeepLab and the MobileNet v1
#    1.0 stand-in base / new (a regression check: no program of theirs
#    changes). Every part's output also lands in a file under $OUT.
# Under 100 s; the tables are printed last.
source "$(dirname "$0")/device_common.sh"
ST=$M/style_transfer_f16_384.tflite
DL=$M/deeplabv3_257_mv_gpu.tflite
CP_KB=${STYLE3_CP:-400}
CP=env.TFLITE_GLES_X_COPY_MIN_PART_KB=$CP_KB
ITER=${STYLE3_ITER:-200}

sweep() {
  local lib=$1
  shift
  TFLITE_GLES_LIB=$lib timeout 30 python3 bench/conv_sweep.py --model "$ST" --stat min \
    --rounds "${STYLE3_ROUNDS:-4}" --per-round "${STYLE3_PER:-10}" --peak 67 --top 60 \
    --variant f32: --variant "f16:$F16" 2>&1 |
    grep -E "^(\||#)"
}
{
  echo "== base library"
  sweep "$BASE_LIB"
  echo "== new library"
  sweep "$NEW_LIB"
} > "$OUT/layers.md" 2>&1

TFLITE_GLES_LIB=$NEW_LIB TFLITE_GLES_X_TIMELINE=1 timeout 30 python3 bench/wall_split.py \
  --model "$ST" --iterations "${STYLE3_TL:-200}" --variant fp32: --variant "fp32-cp:$CP" \
  --variant "fp16:$F16" --variant "fp16-cp:$F16,$CP" > "$OUT/timeline.txt" 2>&1

# rounds FILE RUN... -- RUN_BENCH_ARGS: our fp32 and fp16 rows per run
# (base*: BASE_LIB; new*: NEW_LIB; cp*: NEW_LIB with parts of CP_KB).
rounds() {
  local file=$1 run lib
  shift
  local runs=()
  while [ "$1" != "--" ]; do runs+=("$1"); shift; done
  shift
  for run in "${runs[@]}"; do
    lib=$NEW_LIB; case $run in base*) lib=$BASE_LIB ;; esac
    local extra=()
    case $run in cp*) extra=(env TFLITE_GLES_X_COPY_MIN_PART_KB=$CP_KB) ;; esac
    echo "== $run" >> "$file"
    TFLITE_GLES_LIB=$lib timeout 20 "${extra[@]}" python3 bench/run_bench.py "$@" \
      --backends gles_fp32,gles_fp16 --iterations "$ITER" --max-seconds 2 \
      --out-dir "/tmp/rb-$run" --name rb 2>&1 | grep "^| [a-z]" | grep -v "^| model" >> "$file"
  done
}
# Style first (3 interleaved rounds), then what time is left: the tests on
# this GPU, LiteRT GPU's row, DeepLab and MobileNet base/new.
RB=$OUT/rb.txt
: > "$RB"
rounds "$RB" base new cp base2 new2 cp2 base3 new3 cp3 -- --model "$ST"
device_place_models
left() { echo $((${1:-98} - SECONDS)); }
[ "$(left)" -gt 10 ] && timeout "$(left)" python3 -m pytest -q -p no:cacheprovider --tb=line \
  -rf tests/python/test_norm_stats.py tests/python/test_models.py -k "split or style" \
  > "$OUT/tests.txt" 2>&1
[ "$(left)" -gt 12 ] && device_litert_gpu "$RB" "$(left)" --model "$ST"
[ "$(left)" -gt 15 ] && rounds "$RB" base4 new4 -- --model "$DL" --standin mobilenet_v1_1.0_224

echo "== layers (min us per dispatch; base, then new; every dispatch in layers.md)"
grep -E "==|SQUARED_DIFF|@3 |@272 |LOGISTIC|conversion|sum of|wall" "$OUT/layers.md" |
  sed -e 's/MEAN + SQUARED_DIFFERENCE + MEAN + ADD + RSQRT + /norm/' -e 's/ (0.0, 0 %)//g' |
  cut -c1-110
echo "== time lines (new library; cp: copies in parts of >= $CP_KB KB)"
grep -E "time line" "$OUT/timeline.txt" | cut -c20-250
grep -E "^\| " "$OUT/timeline.txt"
echo "== run_bench (ms: fp32 | fp16 per row)"
cat "$RB"
echo "== tests: $(tail -n 1 "$OUT/tests.txt")"
grep -E "^(FAILED|ERROR)" "$OUT/tests.txt" | head -5
echo "== $SECONDS s"
