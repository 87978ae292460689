#!/bin/bash
# chain5, session 16 (issue 18): the hair stand-in's GPU chain on the NVIDIA
# device machine, from the repository root after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_chain5.sh
# Changes under test (each behind its switch, so the A/B is one library):
#  - readback fusion (TFLITE_GLES_X_FUSE_READBACK; delegate/passes/readback_fusion.h):
#    the last transposed convolution writes the output's BHWC staging, no
#    readback conversion; in 4 row bands of its output like the conversion
#    was (TFLITE_GLES_X_READBACK_BANDS=0: whole);
#  - GEMM pairs of <= 128x128 rows at <= 32 rows a workgroup
#    (TFLITE_GLES_X_GEMM_PAIR_ROWS32; 0 = the old rule).
# 1. tests/python/test_readback_fusion.py on the device (new library).
# 2. conv_sweep.py (GPU timer queries, variants interleaved in one process):
#    hair fp32 / fp16, new / unfused / ROWS32=0: the sums of transpose_conv,
#    layout_convert, gemm_chain and of all dispatches.
# 3. GPU time lines (wall_split.py, TFLITE_GLES_X_TIMELINE=1, one process per
#    model, variants alternating): hair fp32 / fp16 fused in bands (new
#    default), fused whole, unfused with readback bands (the old default),
#    unfused whole (fp32); selfie fused / unfused.
# 4. run_bench.py base / new interleaved: hair stand-in, selfie, style,
#    DeepLab; LiteRT GPU's hair row.
# Files: $OUT/chain5-*.txt; the summary on stdout. Under 100 s.
source "$(dirname "$0")/device_common.sh"
left() { echo $((97 - SECONDS)); }
python3 tools/build_standins.py build/models hair_segmentation_512 > /tmp/chain5-standins.txt 2>&1
HAIR=build/models/hair_segmentation_512.tflite
SELFIE=$M/selfie_segmentation.tflite
E=env.TFLITE_GLES_X_
OFF=${E}FUSE_READBACK=0
TESTS=$OUT/chain5-tests.txt SW=$OUT/chain5-sweep.txt TL=$OUT/chain5-timelines.txt
RB=$OUT/chain5-rb.txt
: > "$TESTS"; : > "$SW"; : > "$TL"; : > "$RB"
device_place_models

timeout 16 python3 -m pytest -q -p no:cacheprovider --tb=short -x \
  tests/python/test_readback_fusion.py -k "not hair_segmentation" >> "$TESTS" 2>&1

TFLITE_GLES_LIB=$NEW_LIB timeout 17 python3 bench/conv_sweep.py --model "$HAIR" \
  --rounds "${CHAIN5_ROUNDS:-3}" --per-round 4 --shader transpose_conv,layout_convert,gemm_chain \
  --variant new32: --variant unfused32:$OFF --variant r64-32:${E}GEMM_PAIR_ROWS32=0 \
  --variant "new16:$F16" --variant "unfused16:$F16,$OFF" \
  --variant "r64-16:$F16,${E}GEMM_PAIR_ROWS32=0" >> "$SW" 2>&1

# timeline NAME MODEL LIMIT VARIANT...: the variants in one process.
timeline() {
  local name=$1 model=$2 limit=$3 v vs=()
  shift 3
  for v in "$@"; do vs+=(--variant "$v"); done
  echo "=== $name $*" >> "$TL"
  TFLITE_GLES_LIB=$NEW_LIB TFLITE_GLES_X_TIMELINE=1 timeout "$limit" python3 bench/wall_split.py \
    --model "$model" --iterations "${CHAIN5_TL:-200}" "${vs[@]}" >> "$TL" 2>&1
}
WHOLE=${E}READBACK_BANDS=0
timeline hair "$HAIR" 21 fp32: "fp32-fwhole:$WHOLE" "fp32-unf:$OFF" "fp32-unfwhole:$OFF,$WHOLE" \
  "fp16:$F16" "fp16-fwhole:$F16,$WHOLE" "fp16-unf:$F16,$OFF"
timeline selfie "$SELFIE" 7 fp32: "fp32-unfused:$OFF" "fp16:$F16" "fp16-unfused:$F16,$OFF"

# rounds LIMIT RUN...: our fp32 and fp16 rows per run (base*: BASE_LIB, else
# NEW_LIB), the models of MODELS, appended to $RB.
rounds() {
  local limit=$1 run
  shift
  for run in "$@"; do
    [ "$(left)" -gt 5 ] || return
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
rounds 15 base new
[ "$(left)" -gt 12 ] && device_litert_gpu "$RB" 8 --standin hair_segmentation_512
[ "$(left)" -gt 14 ] && rounds 7 base2 new2

echo "== GPU timer queries, hair (conv_sweep sums, ms)"
grep -E "^\| (layer|sum of|invoke wall)|stopped" "$SW"
grep -E "Transpose|TRANSPOSE" "$SW" | tail -2 | cut -c1-150
echo "== time lines (new library, us from the invoke's start; invoke: wall_split median ms)"
python3 bench/timeline_table.py "$TL" "Transpose|TRANSPOSE"
echo "== tests: $(grep -E "passed|failed" "$TESTS" | tr '\n' ' ')"
grep -E "^(E |FAILED)" "$TESTS" | cut -c1-160 | head -6
cut -c1-110 "$RB"
echo "== $SECONDS s"
