#!/bin/bash
# Branch tex4 (issue 16) on the NVIDIA device machine, ~3 minutes:
#  1. the texture tests in place on NVIDIA's own paths, among them the output
#     texture written by the last kernel's epilogue (transpose_conv.comp
#     TEXTURE_OUTPUT: selfie segmentation's last layer writes the mask
#     texture itself, one dependent dispatch and barrier less per frame);
#  2. selfie segmentation per frame, copy / texture in / texture in + out,
#     base library (.devbuild/base, the session's start) and this branch's
#     interleaved frame by frame in one process, fp32 and fp16, three times
#     each (the spread between runs), and fp32 once with the epilogue
#     switched off (TFLITE_GLES_X_TEXTURE_EPILOGUE=0: the other changes alone);
#  3. the time line of this library (copy, tex_in, tex_in_out: three
#     reports; bench/device_tex3.sh printed two, the third was never counted
#     because a skipped step left its stamps incomplete).
# Run from the repository root, this branch's Release library carried:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_tex4.sh
# Writes three files under $OUT (tex4-tests.txt, tex4-timeline.txt, tex4-runs.txt:
# every run's output; the JSON samples stay in /tmp/tex4-json); the failures
# and the short table are printed last. ROUNDS (default 600) per run.
source "$(dirname "$0")/device_common.sh"
LIB=${TFLITE_GLES_LIB:-$PWD/build/libtflite_gles.so}
BASE=${BASE_LIB:-.devbuild/base/libtflite_gles.so}
[ -e "$BASE" ] && BASE=$(readlink -f "$BASE") || BASE=""
device_place_models
timeout 100 python3 -m pytest -q -rf --tb=line -p no:cacheprovider \
  tests/python/test_gpu_io_texture_epilogue.py tests/python/test_gpu_io_textures_in_place.py \
  tests/python/test_gpu_io_textures.py > "$OUT/tex4-tests.txt" 2>&1
JSON=/tmp/tex4-json; mkdir -p "$JSON"; : > "$OUT/tex4-runs.txt"
base_flag=()
[ -n "$BASE" ] && base_flag=(--base-library "$BASE")
runs=()
bench() {  # name, extra flags; environment from the caller
  local name=$1; shift
  echo "=== $name" >> "$OUT/tex4-runs.txt"
  timeout 60 python3 bench/texture_io_bench.py --model "$M/selfie_segmentation.tflite" \
    --library "$LIB" "${base_flag[@]}" "$@" --rounds "${ROUNDS:-600}" --warmup 30 \
    --json "$JSON/$name.json" 2>&1 | grep -v "^WARNING\|^INFO" >> "$OUT/tex4-runs.txt"
  echo "rc ${PIPESTATUS[0]}" >> "$OUT/tex4-runs.txt"
  runs+=("$name")
}
bench fp32-a
bench fp16-a --fp16
bench fp32-b
bench fp16-b --fp16
bench fp32-c
bench fp16-c --fp16
TFLITE_GLES_X_TEXTURE_EPILOGUE=0 bench fp32-no-epilogue
# Where a frame goes (this library, fp32; one report per mode: copy, tex_in,
# tex_in_out).
TFLITE_GLES_X_TIMELINE=1 timeout 40 python3 bench/texture_io_bench.py \
  --model "$M/selfie_segmentation.tflite" --library "$LIB" --rounds 200 --warmup 1 \
  > "$OUT/tex4-timeline.txt" 2>&1
echo "== time line (copy, tex_in, tex_in_out; this library):"
grep "mean of 200 invokes\|time line, mean" "$OUT/tex4-timeline.txt" | \
  sed 's/INFO: tflite-gles: //; s/, us from the start of the invoke//'
grep "writes the bound texture\|bound texture <- tensor" "$OUT/tex4-timeline.txt" | \
  sed 's/INFO: tflite-gles: //' | head -n 2
echo "== tests: $(tail -n 1 "$OUT/tex4-tests.txt")"
grep -E "^(FAILED|ERROR)|Error|assert" "$OUT/tex4-tests.txt" | head -n 15
grep -B3 "^rc [^0]" "$OUT/tex4-runs.txt" | head -n 20
echo "== selfie per frame, median ms (saved vs the same library's copy path), base = ${BASE:-none}"
python3 - "$OUT" "${runs[@]}" <<'EOF'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
import statistics
print("| run | base copy | base tex in | base tex in+out | new copy | new tex in | new tex in+out | "
      "per-round saved, base / new | max abs diff |")
print("|---|---|---|---|---|---|---|---|---|")
def paired(modes, tag):
    # Median over rounds of (copy - tex in+out) / copy within the same round.
    copy = modes.get(tag + "copy", {}).get("samples_ms", [])
    tex = modes.get(tag + "tex_in_out", {}).get("samples_ms", [])
    ratios = [(c - t) / c for c, t in zip(copy, tex)]
    return f"{100 * statistics.median(ratios):.1f} %" if ratios else "-"
for name in sys.argv[2:]:
    path = Path("/tmp/tex4-json") / f"{name}.json"
    if not path.exists():
        print(f"| {name} | (no result) |")
        continue
    report = json.loads(path.read_text())
    modes = report["modes"]
    cells = []
    for tag in ("base ", "new "):
        copy = modes.get(tag + "copy", {}).get("median_ms")
        for mode in ("copy", "tex_in", "tex_in_out"):
            value = modes.get(tag + mode, {}).get("median_ms")
            if value is None:
                cells.append("-")
            elif mode == "copy":
                cells.append(f"{value:.3f}")
            else:
                cells.append(f"{value:.3f} ({100 * (copy - value) / copy:.1f} %)")
    cells.append(paired(modes, "base ") + " / " + paired(modes, "new "))
    print(f"| {name} | " + " | ".join(cells) + f" | {report['max_abs_difference']:.1e} |")
EOF
