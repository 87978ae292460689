#!/bin/bash
# hair, session 12 (issue 18): the MediaPipe hair segmentation stand-in
# (tools/standin_hair.py: 512x512x4 -> 512x512x2, 87 convolutions, argmax
# pooling/unpooling and transposed convolutions as MediaPipe's custom ops) and
# its builtin twin, on the NVIDIA device machine, from the repository root,
# after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_hair.sh
# 1. run_bench.py, new library, every backend on both models: ours fp32 and
#    fp16, LiteRT CPU (1 thread, all), LiteRT GPU. On the custom-op model the
#    LiteRT CPU rows fail by construction (no kernels for the custom ops; the
#    errors are the reference: its twin "exact" on LiteRT CPU) and the LiteRT
#    GPU row tells whether LiteRT's GPU accelerator runs the custom ops.
# 2. run_bench.py base / new / base / new, ours only (fp32, fp16).
# 3. bench/profile.py per-dispatch GPU times of the custom-op model, fp32 and
#    fp16, base and new library.
# Under 4 minutes; the table is last.
source "$(dirname "$0")/device_common.sh"
HAIR=(--standin hair_segmentation_512 --standin hair_segmentation_512_builtin)
# Builds the stand-ins into build/models (seeded, a few seconds) before any timing.
python3 tools/build_standins.py build/models hair_segmentation_512 \
  hair_segmentation_512_builtin hair_segmentation_512_exact > /tmp/standins.txt 2>&1
TFLITE_GLES_LIB=$NEW_LIB timeout 100 python3 bench/run_bench.py "${HAIR[@]}" \
  --backends gles_fp32,gles_fp16,cpu_1t,cpu_all,litert_gpu --iterations 200 \
  --max-seconds 3 --out-dir /tmp/rb-full --name hair > "$OUT/rb-full.txt" 2>&1
device_rounds "$OUT/rb-ab.txt" 40 "base new base2 new2" "${HAIR[@]}"
for run in base new; do
  for p in fp32 fp16; do
    flag=""; [ $p = fp16 ] && flag=--fp16
    TFLITE_GLES_LIB=$(device_lib $run) timeout 30 python3 bench/profile.py \
      --model build/models/hair_segmentation_512.tflite $flag --iterations 20 --top 0 \
      --json "$OUT/profile-$run-$p.json" > "$OUT/profile-$run-$p.txt" 2>&1
  done
done
for p in fp32 fp16; do
  echo "== profile, new library, $p: the 25 slowest dispatches, then by shader"
  grep -E "^(renderer|delegated|sum of)" "$OUT/profile-new-$p.txt"
  grep -E "^ *[0-9]+ +[0-9]+ " "$OUT/profile-new-$p.txt" | head -25 | cut -c1-140
  sed -n '/^by shader:/,$p' "$OUT/profile-new-$p.txt" | head -20
  echo "== base library, $p"
  grep -E "^(delegated|sum of)" "$OUT/profile-base-$p.txt"
done
echo "== run_bench, new library, every backend (ms; rel. error vs LiteRT CPU or its exact twin)"
grep -E "FAILED|reference" "$OUT/rb-full.txt" | cut -c1-160
python3 - /tmp/rb-full/hair.json <<'PY'
import json, sys
for m in json.load(open(sys.argv[1]))["models"]:
    for r in m["results"]:
        s = r.get("stats") or {}
        nodes = f"{s['nodes_delegated']}/{s['nodes_total']}" if s else ""
        what = (f"{r['median_ms']:8.3f} ms  err {r.get('rel_error_vs_cpu', float('nan')):.2e}"
                if r["ok"] else "did not run: " + " ".join(r.get("error", "").split())[:70])
        print(f"{m['model'][:30]:30s} {r['key']:11s} {what} {nodes}")
        for reason in ([] if r["ok"] else r.get("reasons", [])[-3:]):
            print("    " + " ".join(str(reason).split())[:150])
PY
echo "== run_bench, ours only, base / new interleaved"
cat "$OUT/rb-ab.txt"
