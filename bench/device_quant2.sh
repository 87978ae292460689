#!/bin/bash
# Issue 15 (quant2 branch): the uint8 MobileNet v1 0.25 with its input
# crossing as raw bytes (dequantized on the GPU) against its float twin and
# the int8 twin, on the NVIDIA device machine, one call (~2-3 minutes):
#   DIR=.devbuild source bench/device_env.sh && BASE_LIB=... bash bench/device_quant2.sh
# Needs in $TFLITE_GLES_MODELS: mobilenet_v1_0.25_224.tflite and
# mobilenet_v1_0.25_224_quant.tflite; the int8 twin (tools/quant_models.py)
# is made here when it was not carried.
# BASE_LIB=path/to/libtflite_gles.so (main's build, carried beside this
# branch's): optional; its processes alternate with this branch's on the same
# warm machine (3 rounds each; every process runs the three models at fp32
# and fp16 interleaved in blocks, bench/quant_ab.py), so that the ratio of the
# uint8 model to its float twin is measured in one process and base/new
# differences are not one process's luck.
# Writes under $OUT: quant2-{base,new}-r{1,2,3}.{json,txt}, xnnpack.log, and
# prints the table last: per model and precision the median of the three
# processes' medians (ms), base -> new, and new / float twin. ROUNDS and BLOCK
# (default 10 x 20 invokes per run) shorten a dry run elsewhere.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
NEW_LIB=${TFLITE_GLES_LIB:-$PWD/build/libtflite_gles.so}
mkdir -p "$OUT/models"
F=mobilenet_v1_0.25_224
INT8="$M/${F}_int8.tflite"
if [ ! -f "$INT8" ]; then
  INT8="$OUT/models/${F}_int8.tflite"
  python3 - "$M/${F}_quant.tflite" "$INT8" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, "tools")
import quant_models as qm
Path(sys.argv[2]).write_bytes(qm.int8_full_integer(Path(sys.argv[1]).read_bytes()))
PY
fi
ARGS=(--model "$M/$F.tflite" --model "$M/${F}_quant.tflite" --rounds "${ROUNDS:-10}" --block "${BLOCK:-20}")
[ -f "$INT8" ] && ARGS+=(--model "$INT8")
for r in 1 2 3; do
  if [ -n "${BASE_LIB:-}" ]; then
    TFLITE_GLES_LIB=$BASE_LIB timeout 60 python3 bench/quant_ab.py "${ARGS[@]}" \
      --label base-r$r --json "$OUT/quant2-base-r$r.json" > "$OUT/quant2-base-r$r.txt" 2>&1
  fi
  TFLITE_GLES_LIB=$NEW_LIB timeout 60 python3 bench/quant_ab.py "${ARGS[@]}" \
    --label new-r$r --json "$OUT/quant2-new-r$r.json" > "$OUT/quant2-new-r$r.txt" 2>&1
done
# LiteRT's CPU int8 path on the uint8 model, all threads, for the issue's
# "faster than XNNPACK" line.
TFLITE_GLES_LIB=$NEW_LIB timeout 60 python3 bench/run_bench.py --model "$M/${F}_quant.tflite" \
  --backends cpu_all --iterations 200 --max-seconds 3 --out-dir "$OUT" \
  --name quant2-xnnpack > "$OUT/xnnpack.log" 2>&1
python3 bench/quant_ab.py --summarize "$OUT"
echo "LiteRT CPU (XNNPACK, all threads), uint8 model:"
grep "^|" "$OUT/xnnpack.log" | tail -3
