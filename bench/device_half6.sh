#!/bin/bash
# half6, session 17 (issue 18): fp16 against fp32 on the NVIDIA device
# machine. From the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_half6.sh
# 1. HALF6_SPLIT (default 1): bench/wall_split.py, one process per model,
#    fp32 and fp16 in alternating blocks (set_tensor / invoke / get_tensor
#    medians) with the GPU time line on (TFLITE_GLES_X_TIMELINE=1: when the
#    GPU finished, when the readback fence returned, when the invoke ended),
#    every model of issue 18 with this library's defaults; DeepLab also with
#    the CPU's resize at readback (TFLITE_GLES_X_CPU_READBACK_RESIZE=1, the
#    base's). run_bench's glibc malloc thresholds.
#    Call 5: palm and selfie also with tensors read as SSBOs
#    (TFLITE_GLES_X_STORAGE=ssbo), their unfused depthwise layers summed.
# Files: $OUT/half6-split.txt (whole logs); the summary on stdout. Under
# 100 s. Earlier calls: 1 (f66788b) the fp16 readback A/B
# (TFLITE_GLES_X_HALF_READBACK_ROWS=0) and gemm.comp's weights in shared
# memory, 2 (7426a1a) DeepLab's readback variants, 3 (82988e8) the GPU resize
# default and TFLITE_GLES_X_FP16_MATH=3, 4 (05afbac) every model and run_bench
# DeepLab / style base/new (docs/perf/log.md, "half6, session 17").
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
# palm's and selfie's unfused depthwise layers ran 1.1-2.5 us slower each in fp16 (call 4):
# the same with tensors read as SSBOs instead of texture buffers (TFLITE_GLES_X_STORAGE=ssbo).
SS=env.TFLITE_GLES_X_STORAGE=ssbo
if [ "${HALF6_SPLIT:-1}" = 1 ]; then
  for name in palm_detection_full selfie_segmentation; do
    split "$name" "$NEW_LIB" "$M/$name.tflite" 12 fp32: "fp16:$F16" "fp32-ssbo:$SS" \
      "fp16-ssbo:$F16,$SS"
  done
  split deeplab "$NEW_LIB" "$DL" 10 fp32: "fp16:$F16"
  split style "$NEW_LIB" "$M/style_transfer_f16_384.tflite" 8 fp32: "fp16:$F16"
fi
echo "== depthwise_conv2d.comp dispatches, us in the pipeline (second report), per variant"
python3 - "$SPLIT" <<'PY'
import re, sys
for sec in re.split(r"^=== ", open(sys.argv[1]).read(), flags=re.M)[1:]:
    head, body = sec.split("\n", 1)
    names = [v.split(":")[0] for v in head.split()[1:]]
    reports = re.split(r"^.*time line, mean.*$", body, flags=re.M)[1:][len(names):]
    sums = []
    for n, r in zip(names, reports):
        dw = [float(x) for x in re.findall(r" depthwise_conv2d .*? ([0-9.]+) us, issued", r)]
        sums.append(f"{n} {len(dw)} dw {sum(dw):.1f}")
    print(head.split()[0] + ": " + "; ".join(sums))
PY

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
grep -E "Error|error" "$SPLIT" | sort | uniq -c | head -5
echo "== $SECONDS s"
