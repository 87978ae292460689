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
#    model, 400 invokes per variant in alternating blocks): hair stand-in and
#    style transfer, fp32 and fp16, banded (default) and whole
#    (TFLITE_GLES_X_TRANSFER_BANDS=0): the same library, so the A/B is the
#    switch alone.
# 3. run_bench.py base / new interleaved: hair stand-in, style, DeepLab,
#    selfie, MobileNet v1 1.0 stand-in, palm; LiteRT GPU's row once; a second
#    base / new round of hair and style if time is left.
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
timeout 30 python3 -m pytest -q -p no:cacheprovider --tb=short tests/python/test_models.py \
  -k "hair_segmentation_512 and not builtin and not exact or style" >> "$TESTS" 2>&1

# timeline NAME MODEL: 4 variants in one process; the last report of each
# (invokes 201-400) is the summary's row.
timeline() {
  echo "=== $1" >> "$TL"
  TFLITE_GLES_LIB=$NEW_LIB TFLITE_GLES_X_TIMELINE=1 timeout 25 python3 bench/wall_split.py \
    --model "$2" --iterations "${IO4_TL:-400}" --variant fp32: --variant "fp32-whole:$OFF" \
    --variant "fp16:$F16" --variant "fp16-whole:$F16,$OFF" >> "$TL" 2>&1
}
timeline hair "$HAIR"
timeline style "$ST"

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
rounds 26 base new -- --standin hair_segmentation_512 "${MODELS[@]}" \
  --standin mobilenet_v1_1.0_224
[ "$(left)" -gt 12 ] && timeout "$(($(left) - 4))" python3 bench/run_bench.py \
  --standin hair_segmentation_512 --model "$ST" --model "$M/deeplabv3_257_mv_gpu.tflite" \
  --model "$M/selfie_segmentation.tflite" --backends litert_gpu --iterations 150 \
  --max-seconds 1.2 --out-dir /tmp/rb-litert --name rb 2>&1 | grep "^| [a-z]" |
  grep -v "^| model" | sed -e "s/^/LiteRT-GPU /" -e "s/.tflite//" -e "s/_f16_384//" \
  -e "s/_257_mv_gpu//" >> "$RB"
[ "$(left)" -gt 18 ] && rounds 10 base2 new2 -- --standin hair_segmentation_512 --model "$ST"

echo "== time lines (new library; per model: fp32, fp32-whole, fp16, fp16-whole; us)"
awk '/^=== /{print; n = 0; delete seen; next}
  /row bands/{sub(/.*tflite-gles: /, ""); if (!seen[$0]++) print "  " $0; next}
  /time line, mean/{if (++n <= 4) next; sub(/.*start of the invoke: /, "");
    sub(/issued the last dispatch/, "issued"); sub(/finished the last dispatch/, "GPU done");
    sub(/GPU past the uploads/, "GPU past uploads"); print "  " $0; next}
  / (upload|readback) conversion /{if (n <= 4) next; sub(/.*layout_convert /, "");
    sub(/, issued at +[0-9.]+/, ""); sub(/conversion +/, "conv "); print "    " $0; next}
  /^\| (fp|variant)/{print}' "$TL"
echo "== tests: $(grep -E "passed|failed" "$TESTS" | tr '\n' ' ')"
grep -E "^(E |FAILED)" "$TESTS" | cut -c1-160 | head -6
cut -c1-110 "$RB"
echo "== $SECONDS s"
