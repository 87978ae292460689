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
#    readback conversion; whole (call 2's default) or in 4 row bands of its
#    output (TFLITE_GLES_X_FUSED_READBACK_BANDS=1, call 1's);
#  - GEMM pairs of <= 128x128 rows at <= 32 rows a workgroup
#    (TFLITE_GLES_X_GEMM_PAIR_ROWS32; 0 = the old rule);
#  - heads before single GEMMs too (TFLITE_GLES_X_FUSE_CHAIN_HEADS=2; 1 = pairs only);
#  - the PRELU after the initial CONCATENATION in its store
#    (TFLITE_GLES_X_CONCAT_EPILOGUE).
# 1. The new tests on the device (readback fusion, single heads, concat epilogues).
# 2. conv_sweep.py (GPU timer queries, min of the rounds, variants interleaved
#    in one process): hair fp32 / fp16, new / old (all four off) / each one off:
#    the sums of the shaders and of all dispatches.
# 3. GPU time lines (wall_split.py, TFLITE_GLES_X_TIMELINE=1, one process per
#    model, variants alternating, 400 invokes each): hair fp32 / fp16 fused
#    whole (new default), fused in bands, unfused with readback bands (the
#    old default); selfie fused / unfused.
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
  tests/python/test_readback_fusion.py tests/python/test_fusion.py tests/python/test_gemm_chain_head.py \
  -k "not hair_segmentation and (readback or concat or single)" >> "$TESTS" 2>&1

OLD="$OFF,${E}GEMM_PAIR_ROWS32=0,${E}FUSE_CHAIN_HEADS=1,${E}CONCAT_EPILOGUE=0"
sweep() {  # sweep NAME OPTIONS: its variants new, old, and each change off
  echo "--variant $1:$2 --variant $1-old:$2$3$OLD --variant $1-rb:$2$3$OFF"
  echo "--variant $1-r64:$2$3${E}GEMM_PAIR_ROWS32=0 --variant $1-h1:$2$3${E}FUSE_CHAIN_HEADS=1"
  echo "--variant $1-cat:$2$3${E}CONCAT_EPILOGUE=0"
}
# shellcheck disable=SC2046
TFLITE_GLES_LIB=$NEW_LIB timeout 19 python3 bench/conv_sweep.py --model "$HAIR" --stat min \
  --rounds "${CHAIN5_ROUNDS:-4}" --per-round 3 \
  --shader transpose_conv,layout_convert,gemm_chain,gemm,conv2d,concat,elementwise \
  $(sweep f32 "" "") $(sweep f16 "$F16" ",") >> "$SW" 2>&1

# timeline NAME MODEL LIMIT VARIANT...: the variants in one process.
timeline() {
  local name=$1 model=$2 limit=$3 v vs=()
  shift 3
  for v in "$@"; do vs+=(--variant "$v"); done
  echo "=== $name $*" >> "$TL"
  TFLITE_GLES_LIB=$NEW_LIB TFLITE_GLES_X_TIMELINE=1 timeout "$limit" python3 bench/wall_split.py \
    --model "$model" --iterations "${CHAIN5_TL:-400}" "${vs[@]}" >> "$TL" 2>&1
}
FB=${E}FUSED_READBACK_BANDS=1
timeline hair "$HAIR" 23 fp32: "fp32-fb:$FB" "fp32-unf:$OFF" "fp16:$F16" "fp16-fb:$F16,$FB" \
  "fp16-unf:$F16,$OFF"
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
grep -E "^\| (layer|sum of|invoke wall)|stopped" "$SW" | cut -c1-200
grep -E "Transpose.*@201|CONCATENATION|CONV_2D v1 @198|CONV_2D v1 @47 " "$SW" | cut -c1-200
echo "== time lines (new library, us from the invoke's start; invoke: wall_split median ms)"
python3 bench/timeline_table.py "$TL" "Transpose|TRANSPOSE"
echo "== tests: $(grep -E "passed|failed" "$TESTS" | tr '\n' ' ')"
grep -E "^(E |FAILED)" "$TESTS" | cut -c1-160 | head -6
cut -c1-110 "$RB"
echo "== $SECONDS s"
