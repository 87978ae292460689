#!/bin/bash
# gap2, session 13 (issue 18): the three largest convolutions of style
# transfer and of DeepLab, per layer, against the H100's FMA peak (67 TFLOP/s
# fp32, 134 fp16), base library vs this branch, and the branch's switches.
# From the repository root, with this branch's library in build/ and the
# session's base library in .devbuild/base/ (BASE_LIB overrides it):
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_gap2.sh
# 1. conv_sweep.py (per-dispatch timer queries, min of 6 x 10 profiled
#    invokes, variants interleaved in one process): style's @3, @272, @240,
#    @256 and DeepLab's three largest convolution dispatches by FLOPs; base
#    library (defaults), then this branch with its switches:
#    WINDOW_SMALL (@240 / @256 on conv2d_window.comp), WINDOW_ACC16
#    (mediump accumulators in conv2d_window.comp with fp16), FP16_MATH=2,
#    FMA_CHAIN (products fused one by one into the accumulators, where
#    both have one precision), FUSE_UPLOAD=0 (@3 without its read of the
#    host-memory staging), gemm.comp tiles for DeepLab (TFLITE_GLES_GEMM_TILE).
# 2. fp16_precision.py: the model-level error of those switches against
#    LiteRT CPU with test_models' criteria; test_models' fp16 cases.
# 3. run_bench.py style + DeepLab, base / new / base / new (ours fp32, fp16).
# Prints the short tables last. About 2.5 minutes.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
BASE_LIB=$(readlink -f "${BASE_LIB:-.devbuild/base/libtflite_gles.so}")
NEW_LIB=$PWD/build/libtflite_gles.so
# No bench/ on PYTHONPATH: its profile.py would shadow the standard library's
# (pytest's import of it failed in call 2); the scripts find their modules.
mkdir -p "$OUT" ../shared/models
cp "$M"/*.tflite ../shared/models/ 2>/dev/null   # where the model catalog looks
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
STYLE=$M/style_transfer_f16_384.tflite
DEEP=$M/deeplabv3_257_mv_gpu.tflite
WS=env.TFLITE_GLES_X_WINDOW_SMALL=1
WA=env.TFLITE_GLES_X_WINDOW_ACC16=1
M2=env.TFLITE_GLES_X_FP16_MATH=2
NU=env.TFLITE_GLES_FUSE_UPLOAD=0
G=env.TFLITE_GLES_GEMM_TILE
SM=(--match "CONV_2D v1 @3 " --match "CONV_2D v1 @272 " --match "CONV_2D v1 @240 "
    --match "CONV_2D v1 @256 " --match "conversion")
sweep() {
  local lib=$1 model=$2; shift 2
  TFLITE_GLES_LIB=$lib timeout 110 python3 bench/conv_sweep.py --model "$model" --stat min \
    --rounds ${GAP2_ROUNDS:-6} --per-round ${GAP2_PER:-10} --peak 67 "$@" 2>&1 | grep -v "^INFO\|^WARNING: All log"
}
FM=env.TFLITE_GLES_X_FMA_CHAIN=1
# Call 1 (05:50) measured WINDOW_SMALL, WINDOW_ACC16, FMA_CHAIN and gemm
# tiles (docs/perf/log.md, "gap2, session 13"); the new default since is
# FP16_MATH=2 on NVIDIA: M1 is the old default.
M1=env.TFLITE_GLES_X_FP16_MATH=1
S_VARIANTS=${GAP2_STYLE:-"f32: f32-noupload:$NU f16:$F16 f16-m1:$F16,$M1 f16-fma:$F16,$FM
  f16-noupload:$F16,$NU"}
D_VARIANTS=${GAP2_DEEP:-"f32: f16:$F16 f16-m1:$F16,$M1 f16-fma:$F16,$FM"}
sargs=(); for v in $S_VARIANTS; do sargs+=(--variant "$v"); done
dargs=(); for v in $D_VARIANTS; do dargs+=(--variant "$v"); done
{
  echo "== base library, style"
  sweep "$BASE_LIB" "$STYLE" "${SM[@]}" --variant f32: --variant "f16:$F16"
  echo "== new library, style"
  sweep "$NEW_LIB" "$STYLE" "${SM[@]}" "${sargs[@]}"
  echo "== base library, DeepLab"
  sweep "$BASE_LIB" "$DEEP" --by-flops --top 5 --variant f32: --variant "f16:$F16"
  echo "== new library, DeepLab"
  sweep "$NEW_LIB" "$DEEP" --by-flops --top 5 "${dargs[@]}"
} > "$OUT/layers.md" 2>&1
P_VARIANTS=${GAP2_PREC:-"f16: f16-m1:$M1"}
pargs=(); for v in $P_VARIANTS; do pargs+=(--variant "$v"); done
timeout 60 python3 bench/fp16_precision.py --model style_transfer_f16_384 \
  --model deeplabv3_257_mv_gpu --model selfie_segmentation "${pargs[@]}" 2>&1 \
  | grep "^|" > "$OUT/precision.md"
# The new defaults against every model's fp16 criteria on this GPU.
timeout 120 python3 -m pytest -q -rf --tb=line -p no:cacheprovider -k fp16 \
  tests/python/test_models.py > /tmp/gap2-tests.txt 2>&1
{ echo "== test_models fp16 (new library): $(tail -n 1 /tmp/gap2-tests.txt)"
  grep -E "^(FAILED|ERROR)" /tmp/gap2-tests.txt | head; } >> "$OUT/precision.md"
for run in base new base2 new2; do
  case $run in base*) L=$BASE_LIB ;; *) L=$NEW_LIB ;; esac
  TFLITE_GLES_LIB=$L timeout 60 python3 bench/run_bench.py --model "$STYLE" --model "$DEEP" \
    --backends gles_fp32,gles_fp16 --iterations ${GAP2_ITER:-100} --max-seconds 2 \
    --out-dir /tmp/gap2-bench --name $run > /tmp/gap2-rb-$run.txt 2>&1
  echo "== run_bench, $run"; grep -E "^\| [a-z_0-9.]+tflite \|" /tmp/gap2-rb-$run.txt | head -4
done > "$OUT/bench.md"
echo "== peaks: 67 TFLOP/s fp32, 134 fp16 (H100 SXM5 non-tensor FMA); % in cells is of 67"
cat "$OUT/bench.md" "$OUT/precision.md" "$OUT/layers.md"
