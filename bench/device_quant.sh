#!/bin/bash
# Issue 15 (quant branch): the quantized MobileNet v1 0.25 models beside their
# float twin on the NVIDIA device machine, one call (~3-4 minutes):
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_quant.sh
# Needs in $TFLITE_GLES_MODELS (the carried models): mobilenet_v1_0.25_224.tflite,
# mobilenet_v1_0.25_224_quant.tflite, and the twins tools/quant_models.py makes
# (mobilenet_v1_0.25_224_int8.tflite, mobilenet_v1_0.25_224_dynamic_range.tflite);
# twins that are missing are made here from the two shared ones (needs the
# flatbuffers module next to ai-edge-litert).
# Optional BASE_LIB=path/to/libtflite_gles.so (e.g. main's build carried
# beside this branch's): its tflite-gles rows run first, on the same warm
# machine, as the baseline.
# Writes under $OUT: quant-nvidia.{md,json} (this branch: ours fp32/fp16,
# XNNPACK 1/all threads), quant-nvidia-base.{md,json} (with BASE_LIB), and
# prints the tables last.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
mkdir -p "$OUT/models"
F=mobilenet_v1_0.25_224
MODELS=()
for name in ${F} ${F}_quant ${F}_int8 ${F}_dynamic_range; do
  if [ -f "$M/$name.tflite" ]; then
    MODELS+=("$M/$name.tflite")
  else
    python3 - "$M" "$OUT/models" "$name" <<'PY' && MODELS+=("$OUT/models/$name.tflite")
import sys
from pathlib import Path
sys.path.insert(0, "tools")
import quant_models as qm
src, dst, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
base = "mobilenet_v1_0.25_224"
if name.endswith("_int8"):
    data = qm.int8_full_integer((src / f"{base}_quant.tflite").read_bytes())
else:
    data = qm.dynamic_range((src / f"{base}.tflite").read_bytes())
(dst / f"{name}.tflite").write_bytes(data)
print(f"made {name}.tflite here (not carried)")
PY
  fi
done
ARGS=()
for m in "${MODELS[@]}"; do ARGS+=(--model "$m"); done
if [ -n "${BASE_LIB:-}" ]; then
  TFLITE_GLES_LIB=$BASE_LIB timeout 100 python3 bench/run_bench.py "${ARGS[@]}" \
    --backends gles_fp32,gles_fp16 --iterations 200 --max-seconds 3 \
    --out-dir "$OUT" --name quant-nvidia-base > "$OUT/base.log" 2>&1
fi
timeout 170 python3 bench/run_bench.py "${ARGS[@]}" \
  --backends gles_fp32,gles_fp16,cpu_1t,cpu_all --iterations 200 --max-seconds 3 \
  --out-dir "$OUT" --name quant-nvidia > "$OUT/quant.log" 2>&1
if [ -n "${BASE_LIB:-}" ]; then
  echo "baseline ($BASE_LIB):"
  grep -A6 "^| model |" "$OUT/quant-nvidia-base.md" | head -6
fi
echo "this branch:"
grep -A6 "^| model |" "$OUT/quant-nvidia.md" | head -7
