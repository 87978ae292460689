#!/bin/bash
# half6, session 17 (issue 18): fp16 against fp32 on the NVIDIA device
# machine. From the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_half6.sh
# 1. HALF6_SPLIT (default 1): bench/wall_split.py, one process per model,
#    variants in alternating blocks (set_tensor / invoke / get_tensor medians)
#    with the GPU time line on (TFLITE_GLES_X_TIMELINE=1: when the GPU
#    finished, when the readback fence returned, when the invoke ended).
#    DeepLab fp32 / fp16 with this library's defaults (its output resized on
#    the GPU, the output aliased), with the CPU's resize at readback
#    (TFLITE_GLES_X_CPU_READBACK_RESIZE=1, the base's), fp16 with the fused
#    depthwise sums in mediump (TFLITE_GLES_X_FP16_MATH=3); MobileNet v1 1.0
#    the same (=3); the base library's DeepLab in a process of its own; hair
#    and face detection fp32 / fp16. run_bench's glibc malloc thresholds.
# 2. HALF6_RB (default 1): run_bench.py rows of DeepLab, base and new
#    interleaved (base new base2 new2), one process per library.
# 3. bench/profile.py per dispatch, DeepLab fp16, FP16_MATH=2 against 3.
# Files: $OUT/half6-split.txt (whole logs), half6-rb.txt, half6-profile-*.txt;
# the summary on stdout. Under 100 s. Call 1 (f66788b) ran the fp16 readback
# A/B (TFLITE_GLES_X_HALF_READBACK_ROWS=0) and gemm.comp's weights in shared
# memory (reverted since); call 2 (7426a1a) DeepLab's readback variants.
source "$(dirname "$0")/device_common.sh"
left() { echo $((96 - SECONDS)); }
export MALLOC_TRIM_THRESHOLD_=4000000000 MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TOP_PAD_=100000000
python3 tools/build_standins.py build/models hair_segmentation_512 mobilenet_v1_1.0_224 \
  > /tmp/half6-standins.txt 2>&1
SPLIT=$OUT/half6-split.txt
: > "$SPLIT"

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
# DeepLab's output resize: on the GPU (this library's NVIDIA default, its outputs aliased)
# or by the copy threads at readback (TFLITE_GLES_X_CPU_READBACK_RESIZE=1, call 2's default);
# the fused depthwise sums in mediump (TFLITE_GLES_X_FP16_MATH=3).
CPU=env.TFLITE_GLES_X_CPU_READBACK_RESIZE=1 M3=env.TFLITE_GLES_X_FP16_MATH=3
# rb RUN LIMIT MODEL: one run_bench row (fp32 | fp16), appended to $RB as "RUN | model | ms...";
# base*: BASE_LIB, else NEW_LIB; one process per model and library (run_bench's workers).
RB=$OUT/half6-rb.txt
: > "$RB"
rb() {
  [ "$(left)" -lt "$(($2 + 1))" ] && return
  TFLITE_GLES_LIB=$(device_lib "$1") timeout "$2" python3 bench/run_bench.py --model "$3" \
    --backends gles_fp32,gles_fp16 --iterations 100 --max-seconds 0.5 --warmup-seconds 0.2 \
    --out-dir "/tmp/rb-$1" --name rb 2>&1 | grep "^| [a-z]" | grep -v "^| model" |
    sed -e "s/^/$1 /" >> "$RB"
}
# profile NAME MODEL FP16 ENV...: bench/profile.py's per-dispatch medians, with ENV set.
profile() {
  local name=$1 model=$2 fp16=$3
  shift 3
  [ "$(left)" -lt 8 ] && return
  env "$@" TFLITE_GLES_LIB=$NEW_LIB timeout 7 python3 bench/profile.py --model "$model" \
    --top 0 --iterations 20 $([ "$fp16" = 1 ] && echo --fp16) > "$OUT/half6-profile-$name.txt" 2>&1
}
MN=build/models/mobilenet_v1_1.0_224.tflite
if [ "${HALF6_SPLIT:-1}" = 1 ]; then
  split deeplab "$NEW_LIB" "$DL" 18 fp32: "fp16:$F16" "fp32-cpu:$CPU" "fp16-cpu:$F16,$CPU" \
    "fp16-m3:$F16,$M3"
fi
if [ "${HALF6_RB:-1}" = 1 ]; then
  for run in base new base2 new2; do rb "$run" 9 "$DL"; done
fi
if [ "${HALF6_SPLIT:-1}" = 1 ]; then
  split mnet "$NEW_LIB" "$MN" 8 fp32: "fp16:$F16" "fp16-m3:$F16,$M3"
  profile dl-fp16-m2 "$DL" 1 TFLITE_GLES_X_FP16_MATH=2
  profile dl-fp16-m3 "$DL" 1 TFLITE_GLES_X_FP16_MATH=3
  split deeplab-base "$BASE_LIB" "$DL" 10 base32: "base16:$F16"
  split hair "$NEW_LIB" build/models/hair_segmentation_512.tflite 10 fp32: "fp16:$F16"
  split face_detection_short_range "$NEW_LIB" "$M/face_detection_short_range.tflite" 7 \
    fp32: "fp16:$F16"
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
              f"{m.group(5)} | gpu {num(r'past the uploads ([0-9.]+)')}-"
              f"{num(r'finished the last dispatch ([0-9.]+)')} fence "
              f"{num(r'readback fence ([0-9.]+)')} done {num(r'done ([0-9.]+);')}")
PY
echo "== run_bench rows, one process per model and library (ms fp32 | fp16)"
sed -e "s|$M/||" -e "s/.tflite//" "$RB" | cut -c1-100
for f in "$OUT"/half6-profile-*.txt; do
  [ -f "$f" ] && echo "$(basename "$f" .txt): $(grep -o "sum of dispatch times.*ms;" "$f")" \
    "$(awk '{for (i = 1; i <= NF; i++) if ($i ~ /^@(51|55|59|66)$/) {
      printf "%s %s ", $i, $(NF - 2); break }}' "$f")"
done
grep -E "Error|error" "$SPLIT" | sort | uniq -c | head -5
echo "== $SECONDS s"
