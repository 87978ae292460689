#!/bin/bash
# zc5, session 16 (issue 18): zero-copy model I/O (DeviceProfile::
# alias_model_io, TFLITE_GLES_X_ALIAS_IO; delegate/runtime/runtime_alias.cc)
# on the NVIDIA device machine. From the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_zc5.sh
# 1. Tests (new library): test_alias_io.py (outputs against the CPU with the
#    switch off and on, resizes, views, two interpreters, deletes) against an
#    asynchronous GPU.
# 2. Same-process A/B (bench/wall_split.py, new library, 300 invokes per
#    variant in alternating blocks, GPU time line on): set_tensor / invoke /
#    get_tensor medians of the hair stand-in, aliased (default) against
#    copied (TFLITE_GLES_X_ALIAS_IO=0), fp32 and fp16; MobileNet v1 1.0
#    (its input read by the convolution fused with its upload: not aliased)
#    also with the upload unfused (TFLITE_GLES_FUSE_UPLOAD=0: aliased).
# 3. run_bench.py base / new interleaved: hair stand-in, style, DeepLab,
#    selfie, MobileNet v1 1.0 stand-in, palm; LiteRT GPU's rows in the same
#    run; a second base / new round of hair and MobileNet if time is left.
# Files: $OUT/zc5-tests.txt, zc5-split.txt (whole logs), zc5-rb.txt; the
# summary on stdout. Under 100 s.
source "$(dirname "$0")/device_common.sh"
left() { echo $((97 - SECONDS)); }
python3 tools/build_standins.py build/models hair_segmentation_512 mobilenet_v1_1.0_224 \
  > /tmp/zc5-standins.txt 2>&1
HAIR=build/models/hair_segmentation_512.tflite
MNET=build/models/mobilenet_v1_1.0_224.tflite
OFF=env.TFLITE_GLES_X_ALIAS_IO=0
TESTS=$OUT/zc5-tests.txt SPLIT=$OUT/zc5-split.txt RB=$OUT/zc5-rb.txt
: > "$TESTS"; : > "$SPLIT"; : > "$RB"

timeout "${ZC5_TEST_S:-12}" python3 -m pytest -q -p no:cacheprovider --tb=short \
  tests/python/test_alias_io.py >> "$TESTS" 2>&1

# split NAME MODEL LIMIT VARIANT...: wall_split's variants in one process.
split() {
  local name=$1 model=$2 limit=$3 v vs=()
  shift 3
  for v in "$@"; do vs+=(--variant "$v"); done
  echo "=== $name" >> "$SPLIT"
  TFLITE_GLES_LIB=$NEW_LIB TFLITE_GLES_X_TIMELINE=1 timeout "$limit" python3 \
    bench/wall_split.py --model "$model" --iterations "${ZC5_ITER:-300}" "${vs[@]}" \
    >> "$SPLIT" 2>&1
}
U=env.TFLITE_GLES_FUSE_UPLOAD=0
split hair "$HAIR" 14 fp32: "fp32-copy:$OFF" "fp16:$F16" "fp16-copy:$F16,$OFF"
# MobileNet's input is read by the convolution fused with its upload: not
# aliased (runtime_alias.cc); unfused, its conversion reads it and it is.
split mnet "$MNET" 9 fp32: "fp32-copy:$OFF" "fp32-unfused:$U" "fp32-unfused-copy:$U,$OFF" \
  "fp16:$F16" "fp16-unfused:$F16,$U"

# rounds LIMIT RUN... -- RUN_BENCH_ARGS: our fp32 and fp16 rows per run
# (base*: BASE_LIB, else NEW_LIB), appended to $RB.
rounds() {
  local limit=$1 run
  shift
  local runs=()
  while [ "$1" != "--" ]; do runs+=("$1"); shift; done
  shift
  for run in "${runs[@]}"; do
    TFLITE_GLES_LIB=$(device_lib "$run") timeout "$limit" python3 bench/run_bench.py "$@" \
      --backends gles_fp32,gles_fp16 --iterations "${ZC5_RB_ITER:-100}" --max-seconds 0.6 \
      --out-dir "/tmp/rb-$run" --name rb 2>&1 | grep "^| [a-z]" | grep -v "^| model" |
      sed -e "s/^/$run /" -e "s/.tflite//" -e "s/_f16_384//" -e "s/_257_mv_gpu//" >> "$RB"
  done
}
device_models style_transfer_f16_384 deeplabv3_257_mv_gpu selfie_segmentation \
  palm_detection_full
ALL=(--standin hair_segmentation_512 "${MODELS[@]}" --standin mobilenet_v1_1.0_224)
echo "== run_bench ms (model | fp32 | fp16)" >> "$RB"
rounds 21 base -- "${ALL[@]}"
rounds 19 new -- "${ALL[@]}"
echo "== LiteRT GPU (model | litert_gpu)" >> "$RB"
L=$(left); L=$(( L > 21 ? 18 : L - 3 ))
[ "$L" -gt 4 ] && timeout "$L" python3 bench/run_bench.py "${ALL[@]}" \
  --backends litert_gpu --iterations 100 --max-seconds 0.6 --out-dir /tmp/rb-litert \
  --name rb 2>&1 | grep "^| [a-z]" | grep -v "^| model" | sed -e "s/^/litert /" -e "s/.tflite//" >> "$RB"
[ "$(left)" -gt 14 ] && rounds 6 base2 new2 -- --standin hair_segmentation_512 \
  --standin mobilenet_v1_1.0_224

echo "== wall_split medians, ms (new library; -copy: TFLITE_GLES_X_ALIAS_IO=0)"
python3 - "$SPLIT" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for sec in re.split(r"^=== ", text, flags=re.M)[1:]:
    name, body = sec.split("\n", 1)
    staged = sorted(set(re.findall(r"tensor \d+ is its GPU staging \(\w+", body)))
    print(f"{name}: {len(staged)} aliased tensor reports")
    for m in re.finditer(r"^\| (\S+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|",
                         body, re.M):
        print(f"  {m.group(1):10s} set {m.group(2)} invoke {m.group(3)} get {m.group(4)} "
              f"sum {m.group(5)}")
PY
echo "== tests: $(grep -E "passed|failed" "$TESTS" | tr '\n' ' ')"
grep -E "^(E |FAILED)" "$TESTS" | cut -c1-160 | head -6
cut -c1-110 "$RB"
echo "== $SECONDS s"
