#!/bin/bash
# Session 12's closing run on the NVIDIA device machine (issue 18), one call
# of about 8 minutes, from the repository root with the merged library in
# build/ and the session's base library in .devbuild/base/:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_s12.sh
# 0. the model tests on NVIDIA (every carried model and the stand-ins against
#    LiteRT CPU): the session's folds (PRELU epilogue, identity resize view,
#    window-conv blocks) on the real GPU's own paths;
# 1. run_bench.py --all (every carried model, the MobileNet v1 1.0 and hair
#    segmentation stand-ins; ours fp32/fp16, XNNPACK, LiteRT GPU);
# 2. the base library, ours only (fp32/fp16), in the same call, twice,
#    interleaved with a second run of the merged library.
# Writes few files under $OUT (the tool returns a limited count); prints the
# short tables last.
source "$(dirname "$0")/device_common.sh"
BASE_LIB=$(readlink -f "$BASE_LIB")
device_place_models
timeout 150 python3 -m pytest -q -rf --tb=line -p no:cacheprovider \
  tests/python/test_models.py > /tmp/tests.txt 2>&1
timeout 300 python3 bench/run_bench.py --all --models-dir "$M" --iterations 200 --max-seconds 4 \
  --out-dir "$OUT" --name bench-nvidia-h100-s12 > /tmp/rb-new.txt 2>&1
rm -f "$OUT"/*.png
for round in 1 2; do
  TFLITE_GLES_LIB=$BASE_LIB timeout 100 python3 bench/run_bench.py --all --models-dir "$M" \
    --backends gles_fp32,gles_fp16 --iterations 200 --max-seconds 3 \
    --out-dir /tmp/base-bench --name base$round > /tmp/rb-base$round.txt 2>&1
  timeout 100 python3 bench/run_bench.py --all --models-dir "$M" \
    --backends gles_fp32,gles_fp16 --iterations 200 --max-seconds 3 \
    --out-dir /tmp/new-bench --name new$round > /tmp/rb-new$round.txt 2>&1
done
# DeepLab's final 33x33 -> 257x257 resize on the CPU at readback (llvm3's
# llvmpipe path) tried on NVIDIA: does one CPU thread beat the GPU's resize
# plus the 5.5 MB readback conversion?
CR=env.TFLITE_GLES_X_CPU_READBACK_RESIZE
timeout 60 python3 bench/options_ab.py --model "$M/deeplabv3_257_mv_gpu.tflite" --iterations 300 \
  --variant fp32: --variant "fp32-cpuresize:$CR=1" --variant "fp16:$F16" \
  --variant "fp16-cpuresize:$F16,$CR=1" 2>&1 | grep -E "^\|" > "$OUT/cpuresize.txt"
{
  for f in base1 new1 base2 new2; do echo "== $f"; grep -E "^\| [a-z_0-9.]+tflite \|" /tmp/rb-$f.txt | head -14; done
} > "$OUT/ab.txt"
echo "== model tests on NVIDIA: $(tail -n 1 /tmp/tests.txt)"; grep -E "^(FAILED|ERROR)" /tmp/tests.txt | head
cat "$OUT/ab.txt"
echo "== DeepLab CPU resize at readback"; cat "$OUT/cpuresize.txt"
echo "== merged, every backend"; grep -E "^\| [a-z_0-9.]+tflite \|" /tmp/rb-new.txt | head -14
