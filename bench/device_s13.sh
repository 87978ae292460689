#!/bin/bash
# Session 13's runs on the NVIDIA device machine (issue 18), from the
# repository root with the library under test in build/ and the session's
# base library in .devbuild/base/:
#   DIR=.devbuild source bench/device_env.sh && S13=warmup bash bench/device_s13.sh
# S13=warmup: does run_bench's time-based warm-up (--warmup-seconds) change
#   the ratios? Ours fp32/fp16 and LiteRT GPU over every carried model and
#   the stand-ins, with 0 and 0.5 s of warm-up, twice interleaved, while
#   nvidia-smi samples the SM clock every ~0.15 s (its spread per run shows
#   whether the clock sagged).
# S13=copy: the Interpreter rows with and without the second output copy.
# S13=final: the model tests on NVIDIA (TESTS: other test files, TESTS_LIMIT
#   seconds), run_bench --all (every backend) of the library under test,
#   its tables named BENCH_NAME.
# S13=ab: base and new (ours fp32/fp16 and LiteRT GPU) twice interleaved.
# Prints short tables last; writes few files under $OUT.
source "$(dirname "$0")/device_common.sh"
BASE_LIB=$(readlink -f "$BASE_LIB")
python3 tools/build_standins.py build/models mobilenet_v1_1.0_224 hair_segmentation_512 \
  hair_segmentation_512_builtin hair_segmentation_512_exact > /tmp/standins.txt 2>&1
ALL=(--all --models-dir "$M")
clocks() {  # name, command...: the command with the SM clock sampled around it
  local name=$1; shift
  # One nvidia-smi call per sample: its own -lms loop writes through a
  # buffer that the kill lost (the first run's files were empty).
  : > "/tmp/clock-$name.txt"
  while :; do
    nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits >> "/tmp/clock-$name.txt" 2>/dev/null
    sleep 0.1
  done &
  local sampler=$!
  "$@"
  kill $sampler 2>/dev/null; wait $sampler 2>/dev/null
  python3 - "$name" "/tmp/clock-$name.txt" <<'PY'
import sys, statistics
v = [int(x) for x in open(sys.argv[2]).read().split() if x.strip().isdigit()]
if v:
    below = sum(1 for x in v if x < 0.8 * max(v)) / len(v)
    print(f"clock {sys.argv[1]:10s} MHz min {min(v)} median {statistics.median(v):.0f} "
          f"max {max(v)}, {below:.0%} of {len(v)} samples below 80 % of max")
PY
}
case ${S13:-final} in
copy)
  # The Interpreter rows with and without the second output copy
  # (bench_worker.py before / after session 13's fix), interleaved.
  W=bench/bench_worker.py; cp $W /tmp/worker-new.py
  sed 's/interp.get_tensor(d\["index"\]) for d in output_details/interp.get_tensor(d["index"]).copy() for d in output_details/' \
    /tmp/worker-new.py > /tmp/worker-old.py
  grep -q 'copy() for d in output_details' /tmp/worker-old.py || echo "old worker not made"
  device_models deeplabv3_257_mv_gpu style_transfer_f16_384 selfie_segmentation
  for run in old1 new1 old2 new2; do
    cp /tmp/worker-${run%?}.py $W
    echo "== $run" >> "$OUT/copy.txt"
    timeout 100 python3 bench/run_bench.py "${MODELS[@]}" --standin hair_segmentation_512 \
      --backends gles_fp32,gles_fp16 --iterations 200 --max-seconds 2 --out-dir /tmp/rb-$run \
      --name rb 2>&1 | grep -E "^\| [a-z_0-9.]+tflite \|" >> "$OUT/copy.txt"
  done
  cp /tmp/worker-new.py $W
  cat "$OUT/copy.txt"
  ;;
warmup)
  for run in w0a w5a w0b w5b; do
    case $run in w0*) W=0 ;; *) W=0.5 ;; esac
    clocks "$run" timeout 140 python3 bench/run_bench.py "${ALL[@]}" --warmup-seconds $W \
      --backends gles_fp32,gles_fp16,litert_gpu --iterations 200 --max-seconds 2 \
      --out-dir /tmp/rb-$run --name rb > "/tmp/rb-$run.txt" 2>&1
  done
  for run in w0a w5a w0b w5b; do
    echo "== $run (warm-up ${run:1:1}/10 s)"
    grep -E "^\| [a-z_0-9.]+tflite \|" /tmp/rb-$run.txt | cut -d'|' -f2-5
  done
  ;;
final)
  device_place_models
  timeout "${TESTS_LIMIT:-150}" python3 -m pytest -q -rf --tb=line -p no:cacheprovider \
    ${TESTS:-tests/python/test_models.py} > /tmp/tests.txt 2>&1
  clocks all timeout 400 python3 bench/run_bench.py "${ALL[@]}" --iterations 200 --max-seconds 3 \
    --out-dir "$OUT" --name "${BENCH_NAME:-bench-nvidia-h100-s13}" > /tmp/rb-new.txt 2>&1
  rm -f "$OUT"/*.png
  echo "== model tests on NVIDIA: $(tail -n 1 /tmp/tests.txt)"
  grep -E "^(FAILED|ERROR)" /tmp/tests.txt | head
  echo "== every backend, library under test"
  grep -E "^\| [a-z_0-9.]+tflite \|" /tmp/rb-new.txt | head -14
  ;;
ab)
  for run in base1 new1 base2 new2; do
    clocks $run env TFLITE_GLES_LIB=$(device_lib $run) timeout 120 python3 bench/run_bench.py \
      "${ALL[@]}" --backends gles_fp32,gles_fp16,litert_gpu --iterations 200 --max-seconds 2 \
      --out-dir /tmp/ab-bench --name $run > /tmp/rb-$run.txt 2>&1
  done
  for run in base1 new1 base2 new2; do
    echo "== $run"; grep -E "^\| [a-z_0-9.]+tflite \|" /tmp/rb-$run.txt | head -14 | cut -d'|' -f2-5
  done
  ;;
esac
