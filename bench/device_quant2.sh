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
# processes' medians (ms), base -> new, and new / float twin.
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
ARGS=(--model "$M/$F.tflite" --model "$M/${F}_quant.tflite" --rounds 10 --block 20)
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
python3 - "$OUT" <<'PY'
import json, statistics, sys
from pathlib import Path
out = Path(sys.argv[1])
rows = {}
for f in sorted(out.glob("quant2-*-r*.json")):
    for r in json.loads(f.read_text()):
        side = r["label"].split("-")[0]
        rows.setdefault((r["model"], r["precision"]), {}).setdefault(side, []).append(
            (r["median_ms"], r["ratio_to_first"], r["dispatches"]))
print("per-process medians in ms (3 processes each); ratio = / float twin, same process")
print("| model | precision | base ms | new ms | new / base | base ratio | new ratio | dispatches base/new |")
print("|---|---|---|---|---|---|---|---|")
def med(v, k): return statistics.median(x[k] for x in v) if v else float("nan")
for (model, prec), sides in rows.items():
    b, n = sides.get("base", []), sides.get("new", [])
    db = b[0][2] if b else "-"
    dn = n[0][2] if n else "-"
    print(f"| {model} | {prec} | {med(b,0):.4f} | {med(n,0):.4f} | {med(n,0)/med(b,0):.3f} | "
          f"{med(b,1):.3f} | {med(n,1):.3f} | {db}/{dn} |")
log = out / "xnnpack.log"
table = [l for l in log.read_text().splitlines() if l.startswith("|")] if log.exists() else []
print("LiteRT CPU (XNNPACK), uint8 model:", *table[-3:], sep="\n")
PY
