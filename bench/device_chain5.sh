#!/bin/bash
# chain5, session 16 (issue 18): the hair stand-in's GPU chain on the NVIDIA
# device machine, from the repository root after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_chain5.sh
# Changes (each behind its switch): readback fusion (TFLITE_GLES_X_FUSE_READBACK,
# whole; its bands: _FUSED_READBACK_BANDS), GEMM pairs of <= 128x128 rows at
# <= 32 rows a workgroup (_GEMM_PAIR_ROWS32), heads before single GEMMs
# (_FUSE_CHAIN_HEADS=2), the initial PRELU in the CONCATENATION's store
# (_CONCAT_EPILOGUE). This is call 3's version: accuracy and the wall. (Calls
# 1-2's GPU sweeps of each switch and time lines: commit 54a857a's version.)
# 1. bench/device_chain3_accuracy.py: the builtin twin against the CPU, all
#    four changes off ("old") and on ("new", the defaults), fp32 and fp16.
# 2. test_models.py's hair stand-in, selfie and style on the NVIDIA defaults.
# 3. run_bench.py base / new / base2 / new2 (ours fp32 + fp16): hair stand-in,
#    selfie, style, DeepLab; LiteRT GPU's hair row after each pair.
# 4. If time is left: hair time lines (wall_split.py, TIMELINE) new / old.
# Files: $OUT/chain5-*.txt; the summary on stdout. Under 100 s.
source "$(dirname "$0")/device_common.sh"
left() { echo $((96 - SECONDS)); }
python3 tools/build_standins.py build/models hair_segmentation_512 \
  hair_segmentation_512_builtin > /tmp/chain5-standins.txt 2>&1
HAIR=build/models/hair_segmentation_512.tflite
E=env.TFLITE_GLES_X_
OLD="${E}FUSE_READBACK=0,${E}GEMM_PAIR_ROWS32=0,${E}FUSE_CHAIN_HEADS=1,${E}CONCAT_EPILOGUE=0"
ACC=$OUT/chain5-accuracy.txt TESTS=$OUT/chain5-tests.txt TL=$OUT/chain5-timelines.txt
RB=$OUT/chain5-rb.txt
: > "$ACC"; : > "$TESTS"; : > "$TL"; : > "$RB"
device_place_models

TFLITE_GLES_LIB=$NEW_LIB timeout 12 python3 bench/device_chain3_accuracy.py \
  build/models/hair_segmentation_512_builtin.tflite "old:$OLD" new: 2>&1 | grep "^|" >> "$ACC"
timeout 14 python3 -m pytest -q -p no:cacheprovider --tb=short tests/python/test_models.py \
  -k "fp32_matches_cpu[hair or fp16_agrees_with_cpu[selfie or fp16_agrees_with_cpu[style" \
  >> "$TESTS" 2>&1

# rounds LIMIT RUN...: our fp32 and fp16 rows per run (base*: BASE_LIB, else
# NEW_LIB), the models of MODELS, appended to $RB.
rounds() {
  local limit=$1 run
  shift
  for run in "$@"; do
    [ "$(left)" -gt 8 ] || return
    TFLITE_GLES_LIB=$(device_lib "$run") timeout "$limit" python3 bench/run_bench.py \
      "${MODELS[@]}" --backends gles_fp32,gles_fp16 --iterations 150 --max-seconds 1.2 \
      --out-dir "/tmp/rb-$run" --name rb 2>&1 | grep "^| [a-z]" | grep -v "^| model" |
      sed -e "s/^/$run /" -e "s/.tflite//" -e "s/_f16_384//" -e "s/_257_mv_gpu//" >> "$RB"
  done
}
device_models selfie_segmentation style_transfer_f16_384 deeplabv3_257_mv_gpu
MODELS=(--standin hair_segmentation_512 "${MODELS[@]}")
echo "== run_bench ms (model | fp32 | fp16)" >> "$RB"
# The base round's first invokes compile its programs (a fresh machine).
rounds 17 base new
[ "$(left)" -gt 10 ] && device_litert_gpu "$RB" 7 --standin hair_segmentation_512
rounds 15 base2 new2
[ "$(left)" -gt 10 ] && device_litert_gpu "$RB" 7 --standin hair_segmentation_512
if [ "$(left)" -gt 12 ]; then
  echo "=== hair fp32: fp32-old:$OLD fp16:$F16 fp16-old:$F16,$OLD" >> "$TL"
  TFLITE_GLES_LIB=$NEW_LIB TFLITE_GLES_X_TIMELINE=1 timeout $(($(left) - 2)) python3 \
    bench/wall_split.py --model "$HAIR" --iterations 400 --variant fp32: \
    --variant "fp32-old:$OLD" --variant "fp16:$F16" --variant "fp16-old:$F16,$OLD" >> "$TL" 2>&1
fi

echo "== accuracy, builtin twin vs the CPU"
cat "$ACC"
echo "== tests: $(grep -E "passed|failed" "$TESTS" | tr '\n' ' ')"
grep -E "^(E |FAILED)" "$TESTS" | cut -c1-160 | head -6
cut -c1-110 "$RB"
echo "== time lines (new library, us from the invoke's start; invoke: wall_split median ms)"
python3 bench/timeline_table.py "$TL" "Transpose|TRANSPOSE"
echo "== $SECONDS s"
