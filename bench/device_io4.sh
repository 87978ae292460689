#!/bin/bash
# io4, session 15 (issue 18): the fixed ends of the invoke, large transfers
# in row bands (DeviceProfile::transfer_bands, delegate/runtime/
# runtime_bands.cc), on the NVIDIA device machine. From the repository root,
# after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_io4.sh
# 1. Tests (new library): test_transfer_bands.py (bands forced on small
#    tensors, with copy threads: the fences and the pipelining against an
#    asynchronous GPU) and test_models.py's hair stand-in and style transfer
#    (banded by default there).
# 2. GPU time lines (TFLITE_GLES_X_TIMELINE=1, new library, one process per
#    model, 400 invokes per variant in alternating blocks), the same library
#    so the A/B is the switches alone: hair stand-in: banded (default), whole
#    (TFLITE_GLES_X_TRANSFER_BANDS=0), flushes after 1, 2, 4, 8 dispatches
#    (_BAND_FLUSHES=1/2/4/8: ',' separates variant options), the copy
#    threads woken before the first readback band (_BAND_EARLY_WAKE=1), 3
#    readback bands, non-temporal stores into the
#    output tensor (_STREAMING_READBACK=1); fp16 banded, whole, non-temporal.
#    Style: banded, whole, 2 readback bands, fp32 and fp16.
# 3. run_bench.py base / new: hair stand-in, style, DeepLab, selfie,
#    MobileNet v1 1.0 stand-in, palm; a second base / new round of hair,
#    MobileNet and palm if time is left.
# Files: $OUT/io4-tests.txt, io4-timelines.txt (whole logs), io4-rb.txt; the
# summary on stdout. Under 100 s.
source "$(dirname "$0")/device_common.sh"
left() { echo $((98 - SECONDS)); }
python3 tools/build_standins.py build/models hair_segmentation_512 mobilenet_v1_1.0_224 \
  > /tmp/io4-standins.txt 2>&1
HAIR=build/models/hair_segmentation_512.tflite
ST=$M/style_transfer_f16_384.tflite
OFF=env.TFLITE_GLES_X_TRANSFER_BANDS=0
TESTS=$OUT/io4-tests.txt TL=$OUT/io4-timelines.txt RB=$OUT/io4-rb.txt
: > "$TESTS"; : > "$TL"; : > "$RB"
device_place_models

timeout 20 python3 -m pytest -q -p no:cacheprovider --tb=short \
  tests/python/test_transfer_bands.py >> "$TESTS" 2>&1
[ "${IO4_MODEL_TESTS:-1}" = 1 ] && timeout 30 python3 -m pytest -q -p no:cacheprovider \
  --tb=short tests/python/test_models.py \
  -k "fp32_matches_cpu[hair_segmentation_512] or fp16_agrees_with_cpu[style" >> "$TESTS" 2>&1

# timeline NAME MODEL VARIANT...: the variants in one process (400 invokes
# each, alternating blocks); the summary takes each one's second report.
timeline() {
  local name=$1 model=$2 v vs=()
  shift 2
  for v in "$@"; do vs+=(--variant "$v"); done
  echo "=== $name $*" >> "$TL"
  TFLITE_GLES_LIB=$NEW_LIB TFLITE_GLES_X_TIMELINE=1 timeout 25 python3 bench/wall_split.py \
    --model "$model" --iterations "${IO4_TL:-400}" "${vs[@]}" >> "$TL" 2>&1
}
E=env.TFLITE_GLES_X_
T8="${E}COPY_THREADS=8,${E}COPY_MIN_PART_KB=128"
timeline hair "$HAIR" fp32: "fp32-whole:$OFF" "fp32-flush4:${E}BAND_FLUSHES=1/2/4/8" \
  "fp32-wake:${E}BAND_EARLY_WAKE=1" "fp32-rb3:${E}READBACK_BANDS=3" \
  "fp32-nt:${E}STREAMING_READBACK=1" "fp16:$F16" "fp16-whole:$F16,$OFF" \
  "fp16-nt:$F16,${E}STREAMING_READBACK=1"
timeline style "$ST" fp32: "fp32-whole:$OFF" "fp32-rb2:${E}READBACK_BANDS=2" "fp16:$F16" \
  "fp16-whole:$F16,$OFF" "fp16-rb2:$F16,${E}READBACK_BANDS=2"

# rounds LIMIT RUN... -- RUN_BENCH_ARGS: our fp32 and fp16 rows per run
# (base*: BASE_LIB, else NEW_LIB), appended to $RB; fewer invokes than
# device_rounds so that six models fit twice.
rounds() {
  local limit=$1 run
  shift
  local runs=()
  while [ "$1" != "--" ]; do runs+=("$1"); shift; done
  shift
  for run in "${runs[@]}"; do
    TFLITE_GLES_LIB=$(device_lib "$run") timeout "$limit" python3 bench/run_bench.py "$@" \
      --backends gles_fp32,gles_fp16 --iterations "${IO4_ITER:-150}" --max-seconds 1.2 \
      --out-dir "/tmp/rb-$run" --name rb 2>&1 | grep "^| [a-z]" | grep -v "^| model" |
      sed -e "s/^/$run /" -e "s/.tflite//" -e "s/_f16_384//" -e "s/_257_mv_gpu//" >> "$RB"
  done
}
device_models style_transfer_f16_384 deeplabv3_257_mv_gpu selfie_segmentation \
  palm_detection_full
echo "== run_bench ms (model | fp32 | fp16)" >> "$RB"
# The base round's first invokes compile its programs (a fresh machine).
rounds 34 base -- --standin hair_segmentation_512 "${MODELS[@]}" --standin mobilenet_v1_1.0_224
rounds 28 new -- --standin hair_segmentation_512 "${MODELS[@]}" --standin mobilenet_v1_1.0_224
[ "$(left)" -gt 20 ] && rounds 10 base2 new2 -- --standin hair_segmentation_512 \
  --standin mobilenet_v1_1.0_224 --model "$M/palm_detection_full.tflite"

echo "== time lines (new library, us from the invoke's start; invoke: wall_split median ms)"
python3 bench/timeline_table.py "$TL"
echo "== tests: $(grep -E "passed|failed" "$TESTS" | tr '\n' ' ')"
grep -E "^(E |FAILED)" "$TESTS" | cut -c1-160 | head -6
cut -c1-110 "$RB"
echo "== $SECONDS s"
