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
#    DeepLab: fp32 and fp16, each also with the GPU's resize instead of the
#    CPU's at readback (TFLITE_GLES_X_CPU_READBACK_RESIZE=0) and with 8 copy
#    threads, fp16 with streaming stores; the base library's fp32 / fp16 in a
#    process of their own; style, selfie, palm fp32 / fp16 (call 1 had the
#    others). run_bench's glibc malloc thresholds, so get_tensor is what
#    run_bench times (no page faults on each output array).
# 2. HALF6_RB (default 1): run_bench.py rows of DeepLab and style, base and
#    new interleaved (base new base2 new2), one process per model and library.
# Files: $OUT/half6-split.txt (whole logs), half6-rb.txt; the summary on
# stdout. Under 100 s. Call 1 (f66788b) ran the fp16 readback A/B
# (TFLITE_GLES_X_HALF_READBACK_ROWS=0) and gemm.comp's weights in shared
# memory (reverted since).
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
# DeepLab's time after the GPU (its 257x257x21 output resized by the copy threads at
# readback): the GPU's resize instead (CPU_READBACK_RESIZE=0), 8 copy threads, streaming stores.
GPU=env.TFLITE_GLES_X_CPU_READBACK_RESIZE=0 T8=env.TFLITE_GLES_X_COPY_THREADS=8
ST=env.TFLITE_GLES_X_STREAMING_READBACK=1
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
ST_M=$M/style_transfer_f16_384.tflite
if [ "${HALF6_SPLIT:-1}" = 1 ]; then
  split deeplab "$NEW_LIB" "$DL" 22 fp32: "fp16:$F16" "fp32-gpu:$GPU" "fp16-gpu:$F16,$GPU" \
    "fp32-t8:$T8" "fp16-t8:$F16,$T8" "fp16-st:$F16,$ST"
fi
if [ "${HALF6_RB:-1}" = 1 ]; then
  for run in base new base2 new2; do rb "$run" 9 "$DL"; rb "$run" 9 "$ST_M"; done
fi
if [ "${HALF6_SPLIT:-1}" = 1 ]; then
  split deeplab-base "$BASE_LIB" "$DL" 12 base32: "base16:$F16"
  split style "$NEW_LIB" "$ST_M" 10 fp32: "fp16:$F16"
  for name in selfie_segmentation palm_detection_full; do
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
              f"{m.group(5)} | gpu {num(r'past the uploads ([0-9.]+)')}-"
              f"{num(r'finished the last dispatch ([0-9.]+)')} fence "
              f"{num(r'readback fence ([0-9.]+)')} done {num(r'done ([0-9.]+);')}")
PY
echo "== run_bench rows, one process per model and library (ms fp32 | fp16)"
sed -e "s|$M/||" -e "s/.tflite//" "$RB" | cut -c1-100
grep -E "Error|error" "$SPLIT" | sort | uniq -c | head -5
echo "== $SECONDS s"
