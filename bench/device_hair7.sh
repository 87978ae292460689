#!/bin/bash
# hair7, session 18 (issue 18): the hair stand-in's GEMM chains (its 17 dilated
# 64x64 bottlenecks and 7 at 128x128) on the NVIDIA device machine, from the
# repository root after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_hair7.sh
# Steps, in this order, each guarded by the time left (HAIR7_STEPS picks them):
#   tests  $HAIR7_TESTS (pytest files; -k $HAIR7_K) on the device.
#   s16    bench/conv_sweep.py --stat min --groups gemm_chain, fp16: hair's
#          dispatches per variant of $SWEEP16 (NAME=KEYS, added to fp16's),
#          the variants' invokes interleaved in one process.
#   s32    the same in fp32 ($SWEEP32).
#   twin   conv_sweep of the builtin twin (fp16, defaults): its dispatches,
#          to set beside the stand-in's (which fused paths it takes).
#   split  bench/wall_split.py (one process, alternating blocks, new
#          library): hair fp16 and fp32, default and each of $SPLIT_SW.
#   rb     run_bench rows, one library per process, $HAIR7_ROUNDS of
#          $RB_STANDINS and $RB_MODELS; LiteRT GPU's hair and twin rows.
# Files: $OUT/hair7-*.txt; the summary on stdout. Under 100 s.
source "$(dirname "$0")/device_common.sh"
left() { echo $((96 - SECONDS)); }
STEPS=${HAIR7_STEPS:-tests split rb}
E=env.TFLITE_GLES_X_
# Call 5: the final defaults (chains' shapes compiled in, the side projection
# as the pair's y2, the twin's upsampling gathered; heads 2) against the
# transposed heads (heads3, now skipping a row phase's empty taps) and all
# off (old); run_bench base / new of hair and its twin, LiteRT GPU's rows.
OLD="old=${E}SPECIALIZE_CHAINS=0,${E}FUSE_SECOND_PROJECTION=0,${E}FUSE_UPSAMPLE_OPERAND=0"
SW="heads3=${E}FUSE_CHAIN_HEADS=3 $OLD"
SWEEP16=${HAIR7_SWEEP16-"$SW"}
SWEEP32=${HAIR7_SWEEP32-"$SW"}
SPLIT_SW=${HAIR7_SPLIT-"$SW"}
# The twin's switches (its sweep and split, fp16).
TWIN_SW=${HAIR7_TWIN-"$SW"}
ITER=${HAIR7_ITER:-300}
ROUNDS=${HAIR7_ROUNDS:-base new}
NEW_ENV=${HAIR7_NEW_ENV-}  # what "new" rounds set on top of the new library
RB_MODELS=${RB_MODELS-}
RB_STANDINS=${RB_STANDINS-"hair_segmentation_512 hair_segmentation_512_builtin"}
HAIR7_TESTS=${HAIR7_TESTS-tests/python/test_gemm_chain_head.py tests/python/test_pool_fusion.py tests/python/test_gemm_chain.py}
HAIR7_K=${HAIR7_K-transposed or side_projection or second_projection or nearest}
python3 tools/build_standins.py build/models hair_segmentation_512 hair_segmentation_512_builtin \
  > /tmp/hair7-standins.txt 2>&1
HAIR=build/models/hair_segmentation_512.tflite
TWIN=build/models/hair_segmentation_512_builtin.tflite
TESTS=$OUT/hair7-tests.txt SPLIT=$OUT/hair7-split.txt RB=$OUT/hair7-rb.txt
: > "$TESTS"; : > "$SPLIT"; : > "$RB"
has() { [[ " $STEPS " == *" $1 "* ]]; }

if has tests && [ -n "$HAIR7_TESTS" ]; then
  device_place_models
  timeout 30 python3 -m pytest -q -p no:cacheprovider --tb=short $HAIR7_TESTS \
    ${HAIR7_K:+-k "$HAIR7_K"} >> "$TESTS" 2>&1
fi

# variants BASE_NAME BASE_KEYS SWITCH...: BASE_NAME:KEYS and NAME-SW:KEYS,SW for each.
variants() {
  local name=$1 keys=$2 sw
  shift 2
  VARIANTS=("$name:$keys")
  for sw in "$@"; do VARIANTS+=("$name-${sw%%=*}:${keys:+$keys,}${sw#*=}"); done
}
# sweep FILE LIMIT MODEL VARIANT...: conv_sweep --stat min, every dispatch listed.
sweep() {
  local file=$1 limit=$2 model=$3 v vs=()
  shift 3
  [ "$(left)" -gt $((limit / 2 + 4)) ] || return 0
  [ "$(left)" -lt $((limit + 4)) ] && limit=$(($(left) - 4))
  for v in "$@"; do vs+=(--variant "$v"); done
  TFLITE_GLES_LIB=$NEW_LIB timeout "$limit" python3 bench/conv_sweep.py --model "$model" \
    --stat min --rounds 4 --per-round 3 --top 60 --groups gemm_chain "${vs[@]}" 2>&1 |
    grep -v "^INFO" > "$file"
}
if has s16; then
  variants f16 "$F16" $SWEEP16
  sweep "$OUT/hair7-s16.txt" 38 "$HAIR" "${VARIANTS[@]}"
fi
if has s32; then
  variants f32 "" $SWEEP32
  sweep "$OUT/hair7-s32.txt" 20 "$HAIR" "${VARIANTS[@]}"
fi
if has twin; then
  variants f16 "$F16" $TWIN_SW
  sweep "$OUT/hair7-twin.txt" 12 "$TWIN" "${VARIANTS[@]}"
fi

if has split && [ "$(left)" -gt 14 ]; then
  variants fp16 "$F16" $SPLIT_SW; vs=("${VARIANTS[@]}")
  variants fp32 "" $SPLIT_SW; vs+=("${VARIANTS[@]}")
  args=(); for v in "${vs[@]}"; do args+=(--variant "$v"); done
  lim=$(($(left) - 4)); [ "$lim" -gt 24 ] && lim=24
  echo "=== hair" >> "$SPLIT"
  TFLITE_GLES_LIB=$NEW_LIB timeout "$lim" python3 bench/wall_split.py --model "$HAIR" \
    --iterations "$ITER" "${args[@]}" 2>&1 | grep -v "^INFO" >> "$SPLIT"
fi
if has split && [ "$(left)" -gt 12 ] && [ -n "$TWIN_SW" ]; then
  variants fp16 "$F16" $TWIN_SW
  args=(); for v in "${VARIANTS[@]}"; do args+=(--variant "$v"); done
  lim=$(($(left) - 4)); [ "$lim" -gt 14 ] && lim=14
  echo "=== twin" >> "$SPLIT"
  TFLITE_GLES_LIB=$NEW_LIB timeout "$lim" python3 bench/wall_split.py --model "$TWIN" \
    --iterations "$ITER" "${args[@]}" 2>&1 | grep -v "^INFO" >> "$SPLIT"
fi

# rounds: our fp32 / fp16 rows, one process per model and run (base*: BASE_LIB,
# else NEW_LIB with $NEW_ENV), the runs interleaved per model; appended to $RB.
if has rb; then
  echo "== run_bench ms (model | fp32 | fp16); new: ${NEW_ENV:-defaults}" >> "$RB"
  models=()
  for n in $RB_STANDINS; do models+=("--standin $n"); done
  for n in $RB_MODELS; do models+=("--model $M/$n.tflite"); done
  for model in "${models[@]}"; do
    for run in $ROUNDS; do
      [ "$(left)" -gt 18 ] || break 2
      extra=(); [[ $run == base* ]] || extra=($NEW_ENV)
      env "${extra[@]}" TFLITE_GLES_LIB="$(device_lib "$run")" timeout 8 \
        python3 bench/run_bench.py $model --backends gles_fp32,gles_fp16 \
        --iterations 150 --max-seconds 1.2 --out-dir "/tmp/rb-$run" --name rb 2>&1 |
        grep "^| [a-z]" | grep -v "^| model" | sed -e "s/^/$run /" -e "s/.tflite//" >> "$RB"
    done
  done
  [ "$(left)" -gt 9 ] && device_litert_gpu "$RB" 9 --standin hair_segmentation_512 \
    --standin hair_segmentation_512_builtin
fi

echo "== tests: $(grep -E "passed|failed" "$TESTS" | tr '\n' ' ')"
grep -E "^(E |FAILED)" "$TESTS" | cut -c1-160 | head -6
echo "== wall_split (new library, one process, medians ms)"
grep -E "^(===|\| (fp|variant))" "$SPLIT" | cut -c1-100
if [ -s "$OUT/hair7-twin.txt" ]; then
  echo "== builtin twin fp16: the resizes' rows, sums"
  grep -E "^\| (layer|.*RESIZE|sum of|invoke)" "$OUT/hair7-twin.txt" | cut -c1-200
fi
# The chains per layer shape last (the most read); every row in the files.
for f in s32 s16; do
  [ -s "$OUT/hair7-$f.txt" ] || continue
  echo "== GPU minimums $f (conv_sweep --stat min; us, sums ms)"
  awk '/by layer shape/{p=1} p&&NF==0{p=0} p' "$OUT/hair7-$f.txt" | grep -v "^|---" | cut -c1-250
  grep -E "^\| (CUSTOM (MaxUnp|Conv)|sum of|invoke)" "$OUT/hair7-$f.txt" | cut -c1-250
done
[ -s "$RB" ] && cut -c1-110 "$RB"
echo "== $SECONDS s"
