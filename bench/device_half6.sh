#!/bin/bash
# half6, session 17 (issue 18): fp16 against fp32 on the NVIDIA device
# machine. From the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_half6.sh
# 1. HALF6_SPLIT (default 1): bench/wall_split.py, one process per model,
#    fp32 and fp16 variants in alternating blocks (set_tensor / invoke /
#    get_tensor medians) with the GPU time line on (TFLITE_GLES_X_TIMELINE=1:
#    when the GPU finished, when the readback fence returned, when the
#    invoke ended). DeepLab also with fp16's CPU resize from a serial copy
#    and conversion (TFLITE_GLES_X_HALF_READBACK_ROWS=0, the base's path),
#    and the base library's fp32 / fp16 in a process of their own.
#    run_bench's glibc malloc thresholds, so get_tensor is what run_bench
#    times (no page faults on each output array).
# 2. HALF6_PROFILE (default 1 while time is left): bench/profile.py per
#    dispatch, DeepLab fp32 / fp16 with gemm.comp's weights loaded from memory
#    or staged in shared memory (TFLITE_GLES_X_GEMM_WEIGHTS_SMEM=1 vec4s,
#    =2 packed halves, fp16 only); also in the DeepLab wall_split (fp16-ws*).
# Files: $OUT/half6-split.txt (whole logs), half6-profile-*.txt; the summary
# on stdout. Under 100 s.
source "$(dirname "$0")/device_common.sh"
left() { echo $((96 - SECONDS)); }
export MALLOC_TRIM_THRESHOLD_=4000000000 MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TOP_PAD_=100000000
python3 tools/build_standins.py build/models hair_segmentation_512 mobilenet_v1_1.0_224 \
  > /tmp/half6-standins.txt 2>&1
SPLIT=$OUT/half6-split.txt
: > "$SPLIT"
OLD=env.TFLITE_GLES_X_HALF_READBACK_ROWS=0

# split NAME LIB MODEL LIMIT VARIANT...: wall_split's variants in one process,
# 400 invokes each (two time-line reports; bench/timeline_table.py reads the second).
split() {
  local name=$1 lib=$2 model=$3 limit=$4 v names=() vs=()
  shift 4
  for v in "$@"; do vs+=(--variant "$v"); names+=("$v"); done
  [ "$(left)" -lt "$limit" ] && { echo "skipped $name (time)" >> "$SPLIT"; return; }
  echo "=== $name ${names[*]}" >> "$SPLIT"
  TFLITE_GLES_LIB=$lib TFLITE_GLES_X_TIMELINE=1 timeout "$limit" python3 \
    bench/wall_split.py --model "$model" --iterations "${HALF6_ITER:-400}" "${vs[@]}" \
    >> "$SPLIT" 2>&1
}
DL=$M/deeplabv3_257_mv_gpu.tflite
WS=env.TFLITE_GLES_X_GEMM_WEIGHTS_SMEM
# profile NAME MODEL FP16 ENV...: bench/profile.py's per-dispatch medians, with ENV set.
profile() {
  local name=$1 model=$2 fp16=$3
  shift 3
  [ "$(left)" -lt 8 ] && return
  env "$@" TFLITE_GLES_LIB=$NEW_LIB timeout 7 python3 bench/profile.py --model "$model" \
    --top 0 --iterations 20 $([ "$fp16" = 1 ] && echo --fp16) > "$OUT/half6-profile-$name.txt" 2>&1
}
if [ "${HALF6_SPLIT:-1}" = 1 ]; then
  split deeplab "$NEW_LIB" "$DL" 20 fp32: "fp16:$F16" "fp16-old:$F16,$OLD" "fp16-ws1:$F16,$WS=1" \
    "fp16-ws2:$F16,$WS=2"
  split deeplab-base "$BASE_LIB" "$DL" 12 base32: "base16:$F16"
fi
if [ "${HALF6_PROFILE:-1}" = 1 ]; then
  # gemm.comp's weights in shared memory (TFLITE_GLES_X_GEMM_WEIGHTS_SMEM), per dispatch.
  P=TFLITE_GLES_X_GEMM_WEIGHTS_SMEM
  profile dl-fp16-ws0 "$DL" 1 $P=0
  profile dl-fp16-ws1 "$DL" 1 $P=1
  profile dl-fp16-ws2 "$DL" 1 $P=2
  profile dl-fp32-ws0 "$DL" 0 $P=0
  profile dl-fp32-ws1 "$DL" 0 $P=1
fi
if [ "${HALF6_SPLIT:-1}" = 1 ]; then
  split style "$NEW_LIB" "$M/style_transfer_f16_384.tflite" 12 fp32: "fp16:$F16"
  split hair "$NEW_LIB" build/models/hair_segmentation_512.tflite 12 fp32: "fp16:$F16"
  split mnet "$NEW_LIB" build/models/mobilenet_v1_1.0_224.tflite 7 fp32: "fp16:$F16"
  for name in selfie_segmentation palm_detection_full face_detection_short_range; do
    split "$name" "$NEW_LIB" "$M/$name.tflite" 7 fp32: "fp16:$F16"
  done
fi

echo "== wall_split medians (ms) and time lines (us from the invoke's start)"
python3 - "$SPLIT" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for sec in re.split(r"^=== ", text, flags=re.M)[1:]:
    head, body = sec.split("\n", 1)
    names = [v.split(":")[0] for v in head.split()[1:]]
    lines = re.findall(r"time line, mean.*", body)
    second = lines[len(names):] or lines  # the second report of each variant
    print(head.split()[0])
    for m in re.finditer(r"^\| (\S+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|",
                         body, re.M):
        i = names.index(m.group(1)) if m.group(1) in names else -1
        tl = second[i] if 0 <= i < len(second) else ""
        num = lambda p: (re.search(p, tl) or [None, "-"])[1]
        print(f"  {m.group(1):9s} set {m.group(2)} inv {m.group(3)} get {m.group(4)} sum "
              f"{m.group(5)} | gpu {num(r'finished the last dispatch ([0-9.]+)')} fence "
              f"{num(r'readback fence ([0-9.]+)')} done {num(r'done ([0-9.]+);')}")
PY
for f in "$OUT"/half6-profile-*.txt; do
  [ -f "$f" ] && echo "$(basename "$f" .txt): $(grep -o "sum of dispatch times.*ms;" "$f")" \
    "$(grep -E "CONV_2D v1 @(64|66|67) " "$f" | awk '{printf "%s %s ", $5, $7}')"
done
grep -E "Error|error" "$SPLIT" | sort | uniq -c | head -5
echo "== $SECONDS s"
