#!/bin/bash
# hair2, session 13 (issue 18): the MediaPipe hair segmentation stand-in
# (tools/standin_hair.py: 512x512x4 -> 512x512x2, ENet) on the NVIDIA device
# machine: where the ~0.85 ms of its invoke that no kernel accounts for goes,
# and the fold of ENet's last PRELU (after 1x1 CONV + residual ADD) into the
# GEMM as a second epilogue operand (gemm.comp EPILOGUE_IN2). From the
# repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_hair2.sh
# 1. Time lines (TFLITE_GLES_X_TIMELINE=1, bench/wall_split.py), base and new
#    library, fp32 and fp16: CPU upload done, GPU past the uploads, each
#    dispatch's end, the readback, the CPU's copy; set_tensor / invoke /
#    get_tensor as Python sees them.
# 2. bench/profile.py (GPU timer queries per dispatch), new library, fp32:
#    the time line's per-shader spans minus these are the gaps between
#    dispatches.
# 3. options_ab.py, new library, one process: the second operand off
#    (TFLITE_GLES_X_EPILOGUE_IN2=0, = base's dispatches) and on, fp32 / fp16.
# 4. run_bench.py base / new / base / new (ours fp32 + fp16) and LiteRT GPU
#    once, on the custom-op model, its builtin twin and selfie segmentation.
# Under 3 minutes; the short table is last.
source "$(dirname "$0")/device_common.sh"
HAIR=build/models/hair_segmentation_512.tflite
python3 tools/build_standins.py build/models hair_segmentation_512 \
  hair_segmentation_512_builtin hair_segmentation_512_exact > "$OUT/standins.txt" 2>&1
for lib in base new; do
  for p in fp32 fp16; do
    v="$p:"; [ $p = fp16 ] && v="fp16:$F16"
    device_timeline "$(device_lib $lib)" "$HAIR" "$v" "$OUT/timeline-$lib-$p.txt"
  done
done
TFLITE_GLES_LIB=$NEW_LIB timeout 30 python3 bench/profile.py --model "$HAIR" --iterations 20 \
  --top 0 --json "$OUT/profile-new-fp32.json" > "$OUT/profile-new-fp32.txt" 2>&1
IN2=env.TFLITE_GLES_X_EPILOGUE_IN2
TFLITE_GLES_LIB=$NEW_LIB timeout 40 python3 bench/options_ab.py --model "$HAIR" --iterations 300 \
  --variant "fp32-in2off:$IN2=0" --variant fp32: --variant "fp16-in2off:$F16,$IN2=0" \
  --variant "fp16:$F16" 2>&1 | grep -v "^INFO\|^WARNING" > "$OUT/ab.txt"
# The 1x1 GEMMs (56, ~12 us each on 64x64 / 128x128 maps, far from the
# bandwidth): gemm.comp's tile forced for every GEMM (TM/TN/TR/TS/KP; the
# default picks 2/1/16/4/8 where 4/1/16/4/4 gives < 192 workgroups), as a
# lead for the tile's owner, fp32 only.
GT=env.TFLITE_GLES_GEMM_TILE
TFLITE_GLES_LIB=$NEW_LIB timeout 40 python3 bench/options_ab.py --model "$HAIR" --iterations 300 \
  --variant fp32: --variant "t4x1k4:$GT=4/1/16/4/4" --variant "t2x1k4:$GT=2/1/16/4/4" \
  --variant "t2x2k2:$GT=2/2/16/4/2" 2>&1 | grep -v "^INFO\|^WARNING" > "$OUT/ab-tile.txt"
# Selfie segmentation: its last layer is a transposed convolution too
# (PIXEL_INTERLEAVE); a no-regression row.
# The invoke's ends (05:53 time line: GPU starts 192 us in, after a 153 us
# CPU upload; 147 us from the GPU's end to the CPU's): waiting for the
# readback fence by spinning, and the first flush right after the upload
# conversion instead of after two dispatches.
TFLITE_GLES_LIB=$NEW_LIB timeout 40 python3 bench/options_ab.py --model "$HAIR" --iterations 300 \
  --variant fp32: --variant "spin:env.TFLITE_GLES_X_READBACK=mapped_spin" \
  --variant "flush1:env.TFLITE_GLES_X_EARLY_FLUSH=1" --variant "ct2:env.TFLITE_GLES_X_COPY_THREADS=2" \
  2>&1 | grep -v "^INFO\|^WARNING" > "$OUT/ab-io.txt"
RB=(--standin hair_segmentation_512 --standin hair_segmentation_512_builtin
    --model "$TFLITE_GLES_MODELS/selfie_segmentation.tflite")
device_rounds "$OUT/rb.txt" 60 "base new base2 new2" "${RB[@]}"
device_litert_gpu "$OUT/rb.txt" 60 "${RB[@]}"
# Per shader: dispatches, time-line span (sum of done-to-done steps), timer
# query sum; the difference is what the GPU spends between dispatches.
python3 - "$OUT" <<'PY' > "$OUT/summary.txt" 2>&1
import collections, json, re, sys
out = sys.argv[1]
step = re.compile(r"INFO: tflite-gles: +(\d+) (\S+) (.*?) +([\d.]+) us, issued at +([\d.]+), done at +([\d.]+)")
for name in ("base-fp32", "new-fp32", "base-fp16", "new-fp16"):
    try:
        lines = open(f"{out}/timeline-{name}.txt").read().splitlines()
    except OSError:
        continue
    heads = [i for i, l in enumerate(lines) if "time line, mean of" in l]
    if not heads:
        print(f"== {name}: no time line"); continue
    head = heads[-1]
    print(f"== {name}: {lines[head][19:]}")
    for l in lines:
        if l.startswith("| " + name[-4:]):
            print("   wall_split (ms): set_tensor | invoke | get_tensor | sum | dispatches: " + l)
    rows = [step.match(l) for l in lines[head + 1:]]
    rows = [r for r in rows if r]
    spans = collections.defaultdict(lambda: [0, 0.0])
    for r in rows:
        spans[r.group(2)][0] += 1
        spans[r.group(2)][1] += float(r.group(4))
    if name == "new-fp32":
        prof = collections.defaultdict(float)
        try:
            for row in json.load(open(f"{out}/profile-new-fp32.json"))["rows"]:
                prof[row.get("shader", "?")] += float(row.get("ms", 0.0)) * 1e3
        except Exception as e:  # noqa: BLE001
            print("   (no profile: %s)" % e)
        print("   shader        n  time-line us  timer-query us  gap us")
        for k, (n, us) in sorted(spans.items(), key=lambda kv: -kv[1][1]):
            print(f"   {k:12s} {n:3d} {us:12.1f} {prof.get(k, 0.0):14.1f} {us - prof.get(k, 0.0):8.1f}")
        slow = sorted(rows, key=lambda r: -float(r.group(4)))[:12]
        print("   slowest steps: " + "; ".join(f"{r.group(1)} {r.group(2)} {r.group(4)}" for r in slow))
    else:
        print("   " + ", ".join(f"{k} {n} {us:.0f}" for k, (n, us) in
                                 sorted(spans.items(), key=lambda kv: -kv[1][1])))
PY
cat "$OUT/summary.txt"
grep -E "^(delegated|sum of)" "$OUT/profile-new-fp32.txt"
grep -E "^\||invokes per" "$OUT/ab.txt" "$OUT/ab-tile.txt" "$OUT/ab-io.txt" | cut -d: -f2-
cat "$OUT/rb.txt"
