#!/bin/bash
# The whole closing measurement on the NVIDIA device machine, one call:
#   source bench/device_env.sh && bash bench/h200_final.sh
# Writes under $OUT (at most 8 files, as the device tool returns them):
#   bench-nvidia-h200.{md,json,png}  every shared model + the stand-ins, all
#                                    backends (ours fp32/fp16, XNNPACK 1/all
#                                    threads, LiteRT GPU)
#   mobilenet-h200.json              the headline: MobileNet v1 stand-in, ours
#                                    and LiteRT GPU, 5 fresh processes each
#                                    (one process's median can be 30 % off)
#   profile-h200-mobilenet.{txt,json}  per-dispatch GPU times, fp32
#   floor-h200.txt                   bench/dispatch_floor.py + invoke phases
#   cold-init-h200.txt               bench/cold_init.py (driver cache empty /
#                                    filled, serialization cache)
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
SHARED=/tmp/shared_models
mkdir -p "$OUT" "$SHARED"
cp "$M"/*.tflite "$SHARED"/ && rm -f "$SHARED"/mobilenet_v1_1.0_224.tflite
MOBILENET=build/models/mobilenet_v1_1.0_224.tflite
timeout 200 python3 bench/profile.py --model "$MOBILENET" --iterations 50 --top 0 \
  --json "$OUT/profile-h200-mobilenet.json" > "$OUT/profile-h200-mobilenet.txt" 2>&1
tail -n 9 "$OUT/profile-h200-mobilenet.txt"
{ timeout 200 python3 bench/dispatch_floor.py --iterations 300 --variant auto: \
    --variant texture_buffer:storage=texture_buffer
  TFLITE_GLES_X_PHASES=1 timeout 100 python3 bench/options_ab.py --model "$MOBILENET" \
    --iterations 400 --variant fp32: --variant fp16:precision_loss_allowed=true; } \
  > "$OUT/floor-h200.txt" 2>&1
grep -v "^INFO: tflite-gles: delegated" "$OUT/floor-h200.txt"
timeout 200 python3 bench/run_bench.py --model "$MOBILENET" --processes 5 \
  --backends gles_fp32,gles_fp16,litert_gpu --iterations 1000 --max-seconds 4 \
  --out-dir /tmp/headline --name mobilenet-h200 2>&1 | grep "^|"
cp /tmp/headline/mobilenet-h200.json "$OUT"/
timeout 240 python3 bench/cold_init.py --repeats 2 > "$OUT/cold-init-h200.txt" 2>&1
tail -n 6 "$OUT/cold-init-h200.txt"
timeout 400 python3 bench/run_bench.py --all --models-dir "$SHARED" \
  --standin mobilenet_v1_1.0_224 --standin mobilenet_ssd_v2_300 \
  --standin posenet_mobilenet_v1_075_257 --iterations 200 --max-seconds 5 \
  --out-dir "$OUT" --name bench-nvidia-h200 2>&1 | grep "^|"
