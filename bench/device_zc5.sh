#!/bin/bash
# zc5, session 16 (issue 18): zero-copy model I/O (DeviceProfile::
# alias_model_io, TFLITE_GLES_X_ALIAS_IO; delegate/runtime/runtime_alias.cc)
# on the NVIDIA device machine. From the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_zc5.sh
# 0. Call 6 (the final defaults): tests, then the A/B of the defaults
#    against TFLITE_GLES_X_ALIAS_IO=0 for hair, DeepLab, selfie, palm, face
#    detection, MobileNet (wall_split, one process per model), then
#    run_bench base/new of DeepLab and hair with the time left.
# 1. Tests (ZC5_TESTS=1, the default; ran in calls 1-3): test_alias_io.py,
#    test_upload_fusion.py (pinned fused where aliasing would unfuse), and
#    before them test_alias_io.py (outputs against the CPU with the
#    switch off and on, resizes, views, two interpreters, deletes) against an
#    asynchronous GPU.
# 2. The upload-unfusing A/B (bench/wall_split.py, one process per model):
#    selfie, palm, face detection, DeepLab, MobileNet v1 1.0, fp32 and fp16,
#    default (the fused first convolution reads the copied input) against
#    TFLITE_GLES_X_ALIAS_UNFUSE=1 (that input unfused and aliased).
#    With ZC5_SPLITS=1 (calls 1 and 2): same-process A/B (bench/wall_split.py,
#    new library, 300 invokes per variant in alternating blocks, GPU time
#    line on): set_tensor / invoke / get_tensor medians of the hair stand-in,
#    aliased (default) against copied (TFLITE_GLES_X_ALIAS_IO=0), fp32 and
#    fp16; MobileNet v1 1.0 (its input read by the convolution fused with its
#    upload: not aliased) also with the upload unfused (TFLITE_GLES_FUSE_UPLOAD=0).
# 3. run_bench.py, one model and library per process (a row each, so that a
#    timeout loses one row), in the order of PLAN while time is left: hair
#    base/new twice, style, selfie, MobileNet base/new (+ newU:
#    TFLITE_GLES_X_ALIAS_UNFUSE=1), LiteRT GPU's palm row (call 3 has the
#    others), newU for selfie, palm, DeepLab.
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

[ "${ZC5_TESTS:-1}" = 1 ] && timeout "${ZC5_TEST_S:-14}" python3 -m pytest -q -p no:cacheprovider --tb=short \
  tests/python/test_alias_io.py tests/python/test_upload_fusion.py >> "$TESTS" 2>&1

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
# The upload-unfusing A/B (call 5): models whose fused first convolution
# keeps their image input copied, against that input unfused and aliased
# (TFLITE_GLES_X_ALIAS_UNFUSE=1), one process each.
UF=env.TFLITE_GLES_X_ALIAS_UNFUSE=1
# The final defaults against zero-copy I/O off (TFLITE_GLES_X_ALIAS_IO=0,
# which also keeps every upload fused), one process per model (call 6).
if [ "${ZC5_FINAL_AB:-1}" = 1 ]; then
  split hair "$HAIR" 12 fp32: "fp32-off:$OFF" "fp16:$F16" "fp16-off:$F16,$OFF"
  for name in deeplabv3_257_mv_gpu selfie_segmentation palm_detection_full \
      face_detection_short_range; do
    [ "$(left)" -lt 12 ] && break
    split "$name" "$M/$name.tflite" 10 fp32: "fp32-off:$OFF" "fp16:$F16" "fp16-off:$F16,$OFF"
  done
  [ "$(left)" -gt 10 ] && split mnet "$MNET" 9 fp32: "fp32-off:$OFF" "fp16:$F16" \
    "fp16-off:$F16,$OFF"
fi
if [ "${ZC5_UNFUSE_AB:-0}" = 1 ]; then
  for name in selfie_segmentation palm_detection_full face_detection_short_range \
      deeplabv3_257_mv_gpu; do
    [ "$(left)" -lt 12 ] && break
    split "$name" "$M/$name.tflite" 11 fp32: "fp32-unfuse:$UF" "fp16:$F16" "fp16-unfuse:$F16,$UF"
  done
  [ "$(left)" -gt 10 ] && split mnet "$MNET" 9 fp32: "fp32-unfuse:$UF" "fp16:$F16" \
    "fp16-unfuse:$F16,$UF"
fi
if [ "${ZC5_SPLITS:-0}" = 1 ]; then
  split hair "$HAIR" 14 fp32: "fp32-copy:$OFF" "fp16:$F16" "fp16-copy:$F16,$OFF"
  # MobileNet's input is read by the convolution fused with its upload: not
  # aliased (runtime_alias.cc); unfused, its conversion reads it and it is.
  split mnet "$MNET" 9 fp32: "fp32-copy:$OFF" "fp32-unfused:$U" "fp32-unfused-copy:$U,$OFF" \
    "fp16:$F16" "fp16-unfused:$F16,$U"
fi

# rb RUN LIMIT BACKENDS MODEL_ARGS...: one run_bench row (one model), appended
# to $RB as "RUN | model | ms...": a row per model and run, so that a run
# cut by its timeout loses one row, not the table (run_bench prints it at
# the end). base*: BASE_LIB; else NEW_LIB (LiteRT's rows ignore it).
rb() {
  local run=$1 limit=$2 backends=$3
  shift 3
  TFLITE_GLES_LIB=$(device_lib "$run") timeout "$limit" python3 bench/run_bench.py "$@" \
    --backends "$backends" --iterations "${ZC5_RB_ITER:-100}" --max-seconds 0.5 \
    --warmup-seconds 0.2 --out-dir "/tmp/rb-$run" --name rb 2>&1 | grep "^| [a-z]" |
    grep -v "^| model" | sed -e "s/^/$run /" -e "s/.tflite//" >> "$RB"
}
echo "== run_bench ms per model (fp32 | fp16; litert: LiteRT GPU)" >> "$RB"
H="--standin hair_segmentation_512" MN="--standin mobilenet_v1_1.0_224"
ST="--model $M/style_transfer_f16_384.tflite" SE="--model $M/selfie_segmentation.tflite"
DL="--model $M/deeplabv3_257_mv_gpu.tflite" PA="--model $M/palm_detection_full.tflite"
# RUN:LIMIT:MODEL steps in order while time is left. A model's first run
# compiles its shaders (the driver's disk cache serves the later ones: call
# 3's first runs of hair, style and selfie hit 7 s), so it gets 12 s. newU:
# new with TFLITE_GLES_X_ALIAS_UNFUSE=1 (an image input that the fused first
# convolution would read, unfused and aliased). litert: LiteRT GPU's row.
# Calls 3-4 ran "base:12:H new:6:H base2:6:H new2:6:H base:12:ST new:6:ST base:12:SE
# new:6:SE base:12:MN new:6:MN newU:6:MN base2:6:MN new2:6:MN litert:8:PA newU:6:SE
# newU:6:PA newU:6:DL"; call 5 fills in with the time the A/B leaves.
PLAN=${ZC5_PLAN:-"base:8:DL new:6:DL base:8:H new:6:H"}
for step in $PLAN; do
  IFS=: read -r run limit key <<< "$step"
  [ "$(left)" -lt "$((limit + 1))" ] && continue
  backends=gles_fp32,gles_fp16
  [ "$run" = litert ] && backends=litert_gpu
  # shellcheck disable=SC2086
  if [ "${run#newU}" != "$run" ]; then
    TFLITE_GLES_X_ALIAS_UNFUSE=1 rb "$run" "$limit" "$backends" ${!key}
  else
    rb "$run" "$limit" "$backends" ${!key}
  fi
done

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
