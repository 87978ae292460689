#!/bin/bash
# Session 11's closing run on the NVIDIA device machine (issues 16 and 18),
# one call of about 7-8 minutes, from the repository root with the merged
# library in build/ and the session's base library in .devbuild/base/:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_s11.sh
# 0. the GPU I/O tests (texture, in place, epilogue, lifetime) on NVIDIA;
# 1. run_bench.py --all (every carried model + the MobileNet v1 1.0
#    stand-in; ours fp32/fp16, XNNPACK, LiteRT GPU): the closing table;
# 2. the base library, ours only (fp32/fp16), in the same call;
# 3. options_ab.py: the session's graph folds off and on, in one process
#    per model: style transfer (style2: norm prologue, nearest upsampling,
#    second epilogue operand; the window path stays on) and selfie (seg:
#    elementwise/resize prologues and FC chains in gemm.comp);
# 4. selfie per frame with texture in + out against the copy path, base and
#    merged interleaved (bench/texture_io_bench.py), fp32 and fp16.
# Writes under $OUT (few files: the tool returns a limited count); prints
# the short tables last.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
BASE_LIB=$(readlink -f "${BASE_LIB:-.devbuild/base/libtflite_gles.so}")
NEW_LIB=$PWD/build/libtflite_gles.so
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
mkdir -p "$OUT" ../shared/models
cp "$M"/*.tflite ../shared/models/ 2>/dev/null   # where the tests look for the models
# The texture tests on NVIDIA's own paths, merged library (tex4 + the folds).
timeout 100 python3 -m pytest -q -rf --tb=line -p no:cacheprovider \
  tests/python/test_gpu_io_texture_epilogue.py tests/python/test_gpu_io_textures_in_place.py \
  tests/python/test_gpu_io_textures.py tests/python/test_gpu_io_lifetime.py > "$OUT/tests.txt" 2>&1
timeout 280 python3 bench/run_bench.py --all --models-dir "$M" \
  --standin mobilenet_v1_1.0_224 --iterations 200 --max-seconds 4 \
  --out-dir "$OUT" --name bench-nvidia-h100-s11 > /tmp/rb-new.txt 2>&1
rm -f "$OUT"/*.png
TFLITE_GLES_LIB=$BASE_LIB timeout 110 python3 bench/run_bench.py --all --models-dir "$M" \
  --standin mobilenet_v1_1.0_224 --backends gles_fp32,gles_fp16 --iterations 200 \
  --max-seconds 3 --out-dir /tmp/base-bench --name bench-base-s11 > /tmp/rb-base.txt 2>&1
cp /tmp/base-bench/bench-base-s11.md "$OUT"/ 2>/dev/null
P=env.TFLITE_GLES_X_NORM_PROLOGUE; U=env.TFLITE_GLES_X_FUSE_UPSAMPLE
E=env.TFLITE_GLES_X_EPILOGUE_IN2
{
  timeout 70 python3 bench/options_ab.py --model "$M/style_transfer_f16_384.tflite" \
    --iterations 200 --variant "fp32-nofolds:$P=0,$U=0,$E=0" --variant fp32-merged: \
    --variant "fp16-nofolds:$F16,$P=0,$U=0,$E=0" --variant "fp16-merged:$F16" 2>&1
  EW=env.TFLITE_GLES_X_FUSE_EW_PROLOGUE; RS=env.TFLITE_GLES_X_FUSE_RESIZE_PROLOGUE
  FC=env.TFLITE_GLES_X_FUSE_FC_CHAIN
  timeout 50 python3 bench/options_ab.py --model "$M/selfie_segmentation.tflite" \
    --iterations 300 --variant "fp32-nofolds:$EW=0,$RS=0,$FC=0" --variant fp32-merged: \
    --variant "fp16-nofolds:$F16,$EW=0,$RS=0,$FC=0" --variant "fp16-merged:$F16" 2>&1
} | grep -v "^INFO\|^WARNING" > "$OUT/ab.txt"
{
  for p in fp32 fp16; do
    flag=(); [ $p = fp16 ] && flag=(--fp16)
    echo "=== $p"
    timeout 45 python3 bench/texture_io_bench.py --model "$M/selfie_segmentation.tflite" \
      --library "$NEW_LIB" --base-library "$BASE_LIB" "${flag[@]}" --rounds 400 --warmup 30 \
      2>&1 | grep -v "^WARNING\|^INFO"
  done
} > "$OUT/tex.txt"
echo "== GPU I/O tests: $(tail -n 1 "$OUT/tests.txt")"; grep -E "^(FAILED|ERROR)" "$OUT/tests.txt" | head
echo "== texture in + out vs copy (selfie)"; grep -E "^===|copy \||tex_in_out" "$OUT/tex.txt"
echo "== folds off / on"; grep -E "^\|" "$OUT/ab.txt"
echo "== base (ours)"; grep -E "^\| [a-z_0-9.]+tflite \|" /tmp/rb-base.txt | head -12
echo "== merged"; grep -E "^\| [a-z_0-9.]+tflite \|" /tmp/rb-new.txt | head -12
