#!/bin/bash
# hair6, session 17 (issue 18): the hair stand-in's fp16 wall on the NVIDIA
# device machine, from the repository root after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_hair6.sh
# Steps, in this order, each guarded by the time left (HAIR6_STEPS picks them):
#   tests  $HAIR6_TESTS (pytest files; -k $HAIR6_K) on the device.
#   split  same-process A/B (bench/wall_split.py, alternating blocks, new
#          library): hair fp16 and fp32, each with every switch of $SWITCHES
#          on (set_tensor / invoke / get_tensor medians); with HAIR6_OTHERS=1
#          also selfie, style, DeepLab, MobileNet with $OTHER_SWITCH.
#   rb     run_bench rows, one library per process: $HAIR6_ROUNDS (base /
#          new / base2 / new2) of hair (+ $RB_MODELS), LiteRT GPU's hair row.
#   sweep  bench/conv_sweep.py --stat min: hair's GPU sums per variant.
#   tiles  conv_sweep --stat min of the GEMM pairs' tiles forced
#          (TFLITE_GLES_X_GEMM_PAIR_TILE, $TILES), fp16: every pair's row.
#   tl     hair fp16 GPU time lines (TFLITE_GLES_X_TIMELINE) default / switched.
# Files: $OUT/hair6-*.txt; the summary on stdout. Under 100 s.
source "$(dirname "$0")/device_common.sh"
left() { echo $((96 - SECONDS)); }
STEPS=${HAIR6_STEPS:-tests split sweep rb}
# Call 4 (21:00): the new defaults (unpool gather, pool in concat, the head
# pairs' 8/128 tile) against the tile off and all off ("old"), hair's GPU
# sums; run_bench base / new of hair and the six other models.
HAIR6_ROUNDS=${HAIR6_ROUNDS:-base new}
HAIR6_OTHERS=${HAIR6_OTHERS-}
RB_MODELS=${RB_MODELS-$(for n in selfie_segmentation style_transfer_f16_384 deeplabv3_257_mv_gpu \
  palm_detection_full face_detection_short_range mobilenet_v1_0.25_224; do
  echo "--model $M/$n.tflite"; done)}
ITER=${HAIR6_ITER:-300}
python3 tools/build_standins.py build/models hair_segmentation_512 ${HAIR6_OTHERS:+mobilenet_v1_1.0_224} \
  > /tmp/hair6-standins.txt 2>&1
HAIR=build/models/hair_segmentation_512.tflite
E=env.TFLITE_GLES_X_
# The switches under test: NAME=VARIANT-KEYS (added to fp16's / fp32's keys).
SW_OLD="old=${E}FUSE_UNPOOL=0,${E}FUSE_POOL_CONCAT=0,${E}GEMM_PAIR_HEAD_TILE="
SW_PROLOGUE="prologue=${E}FUSE_POOL_PROLOGUE=1" SW_HEAD="nohead=${E}GEMM_PAIR_HEAD_TILE="
SW_UNPOOL="nounpool=${E}FUSE_UNPOOL=0" SW_CONCAT="noconcat=${E}FUSE_POOL_CONCAT=0"
SW_EF="efnone=${E}EARLY_FLUSH=-1" SW_SPIN="spin=${E}READBACK=mapped_spin"
SWITCHES=${HAIR6_SWITCHES:-"$SW_HEAD $SW_OLD"}
SWITCHES32=${HAIR6_SWITCHES32:-"$SW_HEAD $SW_OLD"}
# The input switch also measured on the other models with aliased inputs.
OTHER_SWITCH=${HAIR6_OTHER:-"$SW_EF $SW_SPIN"}
SPLIT=$OUT/hair6-split.txt TL=$OUT/hair6-timelines.txt RB=$OUT/hair6-rb.txt
TESTS=$OUT/hair6-tests.txt SWEEP=$OUT/hair6-sweep.txt
# What the run_bench rows of "new" set on top of the new library (empty:
# the new defaults, base/new then differ by the branch's defaults).
NEW_ENV=${HAIR6_NEW_ENV-}
# The GPU sums' switches (conv_sweep), fp16 and fp32.
SWEEP_SWITCHES=${HAIR6_SWEEP:-"$SW_HEAD $SW_OLD"}
SWEEP_SWITCHES32=${HAIR6_SWEEP32-}
HAIR6_TESTS=${HAIR6_TESTS-tests/python/test_pool_fusion.py}
HAIR6_K=${HAIR6_K-shape0 or builtin}  # pytest -k of those
: > "$SPLIT"; : > "$TL"; : > "$RB"; : > "$TESTS"; : > "$SWEEP"
has() { [[ " $STEPS " == *" $1 "* ]]; }

if has tests && [ -n "${HAIR6_TESTS:-}" ]; then
  device_place_models
  timeout 20 python3 -m pytest -q -p no:cacheprovider --tb=short $HAIR6_TESTS \
    ${HAIR6_K:+-k "$HAIR6_K"} >> "$TESTS" 2>&1
fi

# split NAME MODEL LIMIT VARIANT...: wall_split's variants in one process.
split() {
  local name=$1 model=$2 limit=$3 v vs=()
  shift 3
  [ "$(left)" -gt $((limit + 4)) ] || return 0
  for v in "$@"; do vs+=(--variant "$v"); done
  echo "=== $name" >> "$SPLIT"
  TFLITE_GLES_LIB=$NEW_LIB timeout "$limit" python3 bench/wall_split.py --model "$model" \
    --iterations "$ITER" "${vs[@]}" 2>&1 | grep -v "^INFO" >> "$SPLIT"
}
# variants BASE_NAME BASE_KEYS SWITCH...: BASE_NAME:KEYS and NAME-SW:KEYS,SW for each.
variants() {
  local name=$1 keys=$2 sw
  shift 2
  VARIANTS=("$name:$keys")
  for sw in "$@"; do VARIANTS+=("$name-${sw%%=*}:${keys:+$keys,}${sw#*=}"); done
}
if has split; then
  variants fp16 "$F16" $SWITCHES; V16=("${VARIANTS[@]}")
  variants fp32 "" $SWITCHES32; V32=("${VARIANTS[@]}")
  split hair "$HAIR" 30 "${V16[@]}" "${V32[@]}"
fi
if has split && [ -n "${HAIR6_OTHERS:-}" ]; then
  for name in selfie_segmentation style_transfer_f16_384 deeplabv3_257_mv_gpu; do
    variants fp16 "$F16" $OTHER_SWITCH; V16=("${VARIANTS[@]}")
    variants fp32 "" $OTHER_SWITCH
    ITER=200 split "$name" "$M/$name.tflite" 9 "${V16[@]}" "${VARIANTS[@]}"
  done
  variants fp16 "$F16" $OTHER_SWITCH
  ITER=200 split mobilenet build/models/mobilenet_v1_1.0_224.tflite 8 "${VARIANTS[@]}"
fi

if has sweep && [ "$(left)" -gt 18 ]; then
  variants f16 "$F16" $SWEEP_SWITCHES; vs=(); for v in "${VARIANTS[@]}"; do vs+=(--variant "$v"); done
  [ -n "$SWEEP_SWITCHES32" ] && variants f32 "" $SWEEP_SWITCHES32 && for v in "${VARIANTS[@]}"; do vs+=(--variant "$v"); done
  TFLITE_GLES_LIB=$NEW_LIB timeout 20 python3 bench/conv_sweep.py --model "$HAIR" \
    --stat min --rounds 4 --per-round 3 --top 60 --groups gemm_chain "${vs[@]}" 2>&1 |
    grep -v "^INFO" > "$SWEEP"
fi

# rounds LIMIT RUN...: our fp32 and fp16 rows per run (base*: BASE_LIB, else
# NEW_LIB with $NEW_ENV set), one process per model and run (a timeout loses
# one row), hair first, then each model of $RB_MODELS (--model PATH pairs),
# the runs interleaved per model; appended to $RB.
rounds() {
  local limit=$1 run model extra lim
  shift
  local models=("--standin hair_segmentation_512")
  local words=(${RB_MODELS:-}) k
  for ((k = 0; k + 1 < ${#words[@]}; k += 2)); do models+=("${words[k]} ${words[k+1]}"); done
  for model in "${models[@]}"; do
    for run in "$@"; do
      [ "$(left)" -gt 8 ] || return 0
      extra=(); [[ $run == base* ]] || extra=($NEW_ENV)
      lim=$(($(left) - 4)); [ "$lim" -gt "$limit" ] && lim=$limit
      env "${extra[@]}" TFLITE_GLES_LIB="$(device_lib "$run")" timeout "$lim" \
        python3 bench/run_bench.py $model --backends gles_fp32,gles_fp16 \
        --iterations 150 --max-seconds 1.2 --out-dir "/tmp/rb-$run" --name rb 2>&1 |
        grep "^| [a-z]" | grep -v "^| model" | sed -e "s/^/$run /" -e "s/.tflite//" >> "$RB"
    done
  done
}
if has rb; then
  echo "== run_bench ms (model | fp32 | fp16); new: ${NEW_ENV:-defaults}" >> "$RB"
  rounds 12 ${HAIR6_ROUNDS:-base new base2 new2}
  [ "$(left)" -gt 9 ] && device_litert_gpu "$RB" 8 --standin hair_segmentation_512
fi

if has tiles && [ "$(left)" -gt 16 ]; then
  vs=(--variant "f16:$F16"); for t in ${TILES:-16/128 8/128 32/256 16/256/2 16/256/8}; do
    vs+=(--variant "t${t//\//-}:$F16,${E}GEMM_PAIR_TILE=$t"); done
  TFLITE_GLES_LIB=$NEW_LIB timeout $(($(left) - 4)) python3 bench/conv_sweep.py --model "$HAIR" \
    --stat min --rounds 4 --per-round 3 --top 60 --groups gemm_chain "${vs[@]}" 2>&1 |
    grep -v "^INFO" > "$OUT/hair6-tiles.txt"
fi

if has tl && [ "$(left)" -gt 14 ]; then
  variants fp16 "$F16" $SWITCHES
  echo "=== hair ${VARIANTS[*]}" >> "$TL"
  vs=(); for v in "${VARIANTS[@]}"; do vs+=(--variant "$v"); done
  TFLITE_GLES_LIB=$NEW_LIB TFLITE_GLES_X_TIMELINE=1 timeout 12 python3 bench/wall_split.py \
    --model "$HAIR" --iterations 400 "${vs[@]}" >> "$TL" 2>&1
fi

echo "== tests: $(grep -E "passed|failed" "$TESTS" | tr '\n' ' ')"
grep -E "^(E |FAILED)" "$TESTS" | cut -c1-160 | head -6
echo "== wall_split (new library, one process per model, medians ms)"
grep -E "^(===|\| (fp|variant))" "$SPLIT" | cut -c1-100
echo "== GPU minimums (conv_sweep --stat min, us; sums ms)"
awk '/by layer shape/{p=1} p&&NF==0{p=0} p' "$SWEEP" | cut -c1-170
grep -E "^\| (layer|upload|.*Pool|.*@1 |.*@2 |.*@16[4-9]|.*@19[0-2]|.*@201|sum of (disp|pool|max|conc)|invoke)" "$SWEEP" |
  cut -c1-200
if [ -s "$OUT/hair6-tiles.txt" ]; then
  echo "== GEMM pair tiles (conv_sweep --stat min, fp16, us)"
  awk '/by layer shape/{p=1} p&&NF==0{p=0} p' "$OUT/hair6-tiles.txt" | cut -c1-170
  grep -E "^\| sum of (disp|gemm_chain)" "$OUT/hair6-tiles.txt" | cut -c1-170
fi
echo "== time lines (us from the invoke's start)"
[ -s "$TL" ] && python3 bench/timeline_table.py "$TL" "Transpose|TRANSPOSE"
grep -E "^INFO: tflite-gles: +[0-9]+ (layout_convert|pooling|concat|max_unpooling|conv2d CONV_2D v1 @1 )" \
  "$TL" | tail -24 | cut -c20-110
cut -c1-110 "$RB"
echo "== $SECONDS s"
