#!/bin/bash
# style3, session 14 (issue 18): style transfer's fixed and non-convolution
# time on the NVIDIA device machine, base library (the session's start) vs
# this branch. From the repository root, after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_style3.sh
# 1. The norm statistics' split tests with both libraries (the failing
#    case's assertion printed), and test_models.py's style cases (new).
# 2. conv_sweep.py (per-dispatch timer queries, min of 4 x 10 profiled
#    invokes) of every style dispatch, base then new library; one merged
#    table of the 9x9 layers, the norms, the last apply, the readback.
# 3. GPU time lines (TFLITE_GLES_X_TIMELINE=1, new library) of style fp32
#    and fp16, the copies in parts of >= 400 KB (the new default) and of
#    >= 1 MB (the old one, TFLITE_GLES_X_COPY_MIN_PART_KB=1024); fp32 also
#    on 8 threads in parts of >= 200 KB.
# 4. run_bench.py style fp32/fp16: base / new / new with 1 MB parts,
#    interleaved, 3 rounds; LiteRT GPU's row; DeepLab and the MobileNet v1
#    1.0 stand-in base / new once (nothing of theirs changes).
# Two files: $OUT/style3-layers.txt and $OUT/style3-rest.txt; the summary
# on stdout is their decisive lines. Under 100 s.
source "$(dirname "$0")/device_common.sh"
ST=$M/style_transfer_f16_384.tflite
DL=$M/deeplabv3_257_mv_gpu.tflite
OLD=env.TFLITE_GLES_X_COPY_MIN_PART_KB=1024
ITER=${STYLE3_ITER:-200}
LAYERS=$OUT/style3-layers.txt
REST=$OUT/style3-rest.txt
: > "$LAYERS"
: > "$REST"
device_place_models

for lib in new base; do
  L=$NEW_LIB; [ $lib = base ] && L=$BASE_LIB
  TFLITE_GLES_LIB=$L timeout 25 python3 -m pytest -q -p no:cacheprovider --tb=short \
    tests/python/test_norm_stats.py -k split > /tmp/style3-norm-$lib.txt 2>&1
  { echo "== norm split tests, $lib: $(tail -n 1 /tmp/style3-norm-$lib.txt)"
    grep -E "^(E |FAILED)|test_norm_stats.py:[0-9]+" /tmp/style3-norm-$lib.txt | cut -c1-150 |
      head -6; } >> "$REST"
done
# The failing case's error against LiteRT CPU by library and mean: a mean of ~25
# over a spread of ~0.5 makes one ulp of the mean ~1e-5 of the output.
cat > /tmp/style3-normerr.py <<'PY'
import os, sys
sys.path.insert(0, "tests/python")
from gles_testing import interpreter, invoke, random_inputs, relative_error, run_gpu
from test_fusion import Chain
from test_norm_stats import conditional_norm
os.environ["TFLITE_GLES_FUSE_NORM_STATS"] = "1"
cells = []
for low, high in ((20.0, 30.0), (8.0, 12.0), (-1.0, 1.0)):
    for shape in ([1, 32, 20, 5], [1, 96, 96, 5]):
        c = Chain(shape, seed=shape[1])
        x = c.binary("ADD", c.conv(c.x, shape[-1]), c.const([shape[-1]], low, high))
        y, _ = conditional_norm(c, x, c.extra_input([1, 1, 1, 12]))
        model = c.build([y])
        inputs = random_inputs(c.input_shapes, seed=3)
        cpu = invoke(interpreter(model), inputs)[0]
        gpu = run_gpu(model, inputs, {"precision_loss_allowed": False})[0][0]
        cells.append(f"mean {low:g}-{high:g} {shape[1]}x{shape[2]}: {relative_error(gpu, cpu):.2e}")
print("; ".join(cells))
PY
for lib in new base; do
  L=$NEW_LIB; [ $lib = base ] && L=$BASE_LIB
  echo "== fp32 conditional norm vs CPU, $lib: $(TFLITE_GLES_LIB=$L timeout 20 python3 \
    /tmp/style3-normerr.py 2>&1 | grep mean | tail -n 1)" >> "$REST"
done
timeout 30 python3 -m pytest -q -p no:cacheprovider --tb=short tests/python/test_models.py \
  -k style > /tmp/style3-models.txt 2>&1
{ echo "== test_models style (new): $(tail -n 1 /tmp/style3-models.txt)"
  grep -E "^(E |FAILED)" /tmp/style3-models.txt | cut -c1-160 | head -4; } >> "$REST"

sweep() {
  TFLITE_GLES_LIB=$1 timeout 30 python3 bench/conv_sweep.py --model "$ST" --stat min \
    --rounds "${STYLE3_ROUNDS:-4}" --per-round "${STYLE3_PER:-10}" --top 60 \
    --variant f32: --variant "f16:$F16" 2>&1 | grep -E "^\|" > "/tmp/style3-sweep-$2.md"
}
sweep "$BASE_LIB" base
sweep "$NEW_LIB" new
# One row per dispatch: base f32, new f32, base f16, new f16 (µs); the
# summary keeps the 9x9 layers, the norms of the 384x384 and 192x192 maps,
# the last apply, the readback conversion and the sums.
python3 - /tmp/style3-sweep-base.md /tmp/style3-sweep-new.md > "$LAYERS" <<'PY'
import re, sys
def rows(path):
    out = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "---"):
            continue
        name = re.sub(r"MEAN \+ SQUARED_DIFFERENCE \+ MEAN \+ ADD \+ RSQRT \+ ?", "norm", cells[0])
        out[name] = [re.sub(r" us.*| ms", "", c) for c in cells[1:3]]
    return out
base, new = rows(sys.argv[1]), rows(sys.argv[2])
print("| dispatch | base f32 | new f32 | base f16 | new f16 |")
for name in base:
    b, n = base[name], new.get(name, ["-", "-"])
    print(f"| {name[:40]} | {b[0]} | {n[0]} | {b[1]} | {n[1]} |")
PY

TFLITE_GLES_LIB=$NEW_LIB TFLITE_GLES_X_TIMELINE=1 timeout 30 python3 bench/wall_split.py \
  --model "$ST" --iterations "${STYLE3_TL:-200}" --variant fp32: --variant "fp32-1mb:$OLD" \
  --variant "fp32-8x200kb:env.TFLITE_GLES_X_COPY_THREADS=8,env.TFLITE_GLES_X_COPY_MIN_PART_KB=200" \
  --variant "fp16:$F16" --variant "fp16-1mb:$F16,$OLD" > /tmp/style3-timeline.txt 2>&1
{ echo "== time lines (new library; variants in order: fp32, fp32-1mb, fp32-8x200kb, fp16, fp16-1mb)"
  grep -E "time line" /tmp/style3-timeline.txt | sed -e 's/.*start of the invoke: //' \
    -e 's/issued the last dispatch/issued/' -e 's/finished the last dispatch/GPU done/'
  grep -E "^\| " /tmp/style3-timeline.txt; } >> "$REST"

# rounds RUN... -- RUN_BENCH_ARGS: our fp32 and fp16 rows per run, appended
# to $REST (base*: BASE_LIB; new*: NEW_LIB; old*: NEW_LIB with 1 MB parts).
rounds() {
  local run lib
  local runs=()
  while [ "$1" != "--" ]; do runs+=("$1"); shift; done
  shift
  for run in "${runs[@]}"; do
    lib=$NEW_LIB; case $run in base*) lib=$BASE_LIB ;; esac
    local extra=()
    case $run in old*) extra=(env TFLITE_GLES_X_COPY_MIN_PART_KB=1024) ;; esac
    TFLITE_GLES_LIB=$lib timeout 20 "${extra[@]}" python3 bench/run_bench.py "$@" \
      --backends gles_fp32,gles_fp16 --iterations "$ITER" --max-seconds 2 \
      --out-dir "/tmp/rb-$run" --name rb 2>&1 | grep "^| [a-z]" | grep -v "^| model" |
      sed -e "s/^/$run /" -e "s/_transfer_f16_384.tflite//" -e "s/_257_mv_gpu.tflite//" \
        -e "s/.tflite//" >> "$REST"
  done
}
echo "== run_bench ms (model | fp32 | fp16)" >> "$REST"
rounds base new old base2 new2 old2 base3 new3 old3 -- --model "$ST"
left() { echo $((98 - SECONDS)); }
[ "$(left)" -gt 10 ] && timeout "$(left)" python3 bench/run_bench.py --model "$ST" \
  --backends litert_gpu --iterations "$ITER" --max-seconds 2 --out-dir /tmp/rb-litert \
  --name rb 2>&1 | grep "^| [a-z]" | grep -v "^| model" | sed -e "s/^/LiteRT-GPU /" \
  -e "s/_transfer_f16_384.tflite//" >> "$REST"
[ "$(left)" -gt 15 ] && rounds base4 new4 -- --model "$DL" --standin mobilenet_v1_1.0_224

echo "== layers (min µs per dispatch, timer queries; all in style3-layers.txt)"
grep -E "dispatch|@3 |@272 |norm|LOGISTIC|conversion|sum of|wall" "$LAYERS"
cat "$REST"
echo "== $SECONDS s"
