#!/bin/bash
# perf, session 9, step 1 (issue 18): where the wall time of style transfer
# and DeepLab goes on the NVIDIA device machine, one call:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_perf_profile.sh
# 1. bench/wall_split.py: set_tensor / invoke / get_tensor medians, fp32 and
#    fp16 storage, and the delegate's own time line (TFLITE_GLES_X_TIMELINE:
#    CPU upload, submit, wait + readback; GPU time of every dispatch inside
#    the running pipeline) in the -tl variants; DeepLab also with the other
#    readback waits.
# 2. bench/profile.py: per-dispatch GPU times (timer queries), fp32 / fp16.
# 3. numpy: what a 5.5 MB host copy costs on this CPU.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
D=$(cd "$(dirname "$0")" && pwd)
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
python3 - <<'PY' | tee "$OUT/memcpy.txt"
import numpy as np, time, statistics
for mb in (1.77, 5.55):
    a = np.random.rand(int(mb * 1e6 / 4)).astype(np.float32); b = np.empty_like(a)
    t = []
    for _ in range(200):
        s = time.perf_counter(); np.copyto(b, a); t.append((time.perf_counter() - s) * 1e3)
    print(f"numpy copy {mb} MB: median {statistics.median(t):.3f} ms")
PY
for model in deeplabv3_257_mv_gpu style_transfer_f16_384; do
  extra=()
  if [ $model = deeplabv3_257_mv_gpu ]; then
    extra=(--variant "fp32-map:env.TFLITE_GLES_X_READBACK=map"
           --variant "fp32-mspin:env.TFLITE_GLES_X_READBACK=mapped_spin")
  fi
  timeout 90 python3 "$D/wall_split.py" --model "$M/$model.tflite" --iterations 200 \
    --variant fp32: --variant "fp16:$F16" \
    --variant "fp32-tl:env.TFLITE_GLES_X_TIMELINE=1" \
    --variant "fp16-tl:$F16,env.TFLITE_GLES_X_TIMELINE=1" "${extra[@]}" \
    > "$OUT/split-$model.txt" 2>&1
  for p in "" --fp16; do
    echo "== profile $model $p" >> "$OUT/profile.txt"
    timeout 60 python3 bench/profile.py --model "$M/$model.tflite" $p --iterations 30 \
      --top 0 >> "$OUT/profile.txt" 2>&1
  done
done
for model in deeplabv3_257_mv_gpu style_transfer_f16_384; do
  grep -v "INFO" "$OUT/split-$model.txt"
  grep "mean of 200" "$OUT/split-$model.txt"
done
grep -E "^== |sum of dispatch|renderer|^  [a-z_0-9]+ +[0-9]+ dispatches" "$OUT/profile.txt"
