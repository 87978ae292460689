# What the bench/device_*.sh scripts share; sourced by them, not run:
#   DIR=.devbuild source bench/device_env.sh    (on the device machine)
#   source "$(dirname "$0")/device_common.sh"   (in the script)
# Sets OUT (created), M (the models), BASE_LIB (the session's base library,
# .devbuild/base/ unless BASE_LIB is set), NEW_LIB (build/'s, the branch
# under test) and F16 (the delegate options of fp16 precision), and defines
# the steps that every script repeated: the model list, base/new run_bench
# rounds, LiteRT GPU's row and a GPU time line.
set -u
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
BASE_LIB=${BASE_LIB:-$PWD/.devbuild/base/libtflite_gles.so}
NEW_LIB=$PWD/build/libtflite_gles.so
F16="precision_loss_allowed=true,inference_priority1=min_memory_usage"
mkdir -p "$OUT"

# device_models NAME...: MODELS=(--model $M/NAME.tflite ...).
device_models() {
  MODELS=()
  local name
  for name in "$@"; do MODELS+=(--model "$M/$name.tflite"); done
}

# device_lib RUN: the library of a round named base* (BASE_LIB) or else (NEW_LIB).
device_lib() {
  case $1 in base*) echo "$BASE_LIB" ;; *) echo "$NEW_LIB" ;; esac
}

# device_rounds FILE LIMIT "RUN..." RUN_BENCH_ARGS...: our fp32 and fp16 rows
# (200 invokes, 2 s at most each) for every round (e.g. "base new base2
# new2": base and new interleaved, so a clock or neighbour change shows in
# both), each round's table appended to FILE under "== RUN".
device_rounds() {
  local file=$1 limit=$2 runs=$3 run
  shift 3
  for run in $runs; do
    echo "== $run" >> "$file"
    TFLITE_GLES_LIB=$(device_lib "$run") timeout "$limit" python3 bench/run_bench.py "$@" \
      --backends gles_fp32,gles_fp16 --iterations 200 --max-seconds 2 \
      --out-dir "/tmp/rb-$run" --name rb 2>&1 | grep "^|" >> "$file"
  done
}

# device_litert_gpu FILE LIMIT RUN_BENCH_ARGS...: LiteRT GPU's row, once.
device_litert_gpu() {
  local file=$1 limit=$2
  shift 2
  echo "== LiteRT GPU" >> "$file"
  timeout "$limit" python3 bench/run_bench.py "$@" --backends litert_gpu --iterations 200 \
    --max-seconds 2 --out-dir /tmp/rb-litert --name rb 2>&1 | grep "^|" >> "$file"
}

# device_timeline LIB MODEL VARIANT FILE [INVOKES]: bench/wall_split.py with
# the GPU time line on (TFLITE_GLES_X_TIMELINE=1), its whole log in FILE.
device_timeline() {
  TFLITE_GLES_LIB=$1 TFLITE_GLES_X_TIMELINE=1 timeout 40 python3 bench/wall_split.py \
    --model "$2" --iterations "${5:-400}" --variant "$3" > "$4" 2>&1
}

# device_place_models: the models where tests/python looks for them
# (../shared/models, as on the development machine).
device_place_models() {
  mkdir -p ../shared/models
  cp "$M"/*.tflite ../shared/models/ 2>/dev/null
}

# device_timeline_summary: for every $OUT/timeline-*.txt (device_timeline's
# logs), its mean upload/submit/wait split, its GPU time line and its table.
device_timeline_summary() {
  local f
  for f in "$OUT"/timeline-*.txt; do
    echo "== $(basename "$f" .txt)"
    grep -E "mean of [0-9]+ invokes: upload" "$f" | tail -1 | cut -c20-
    grep -E "time line" "$f" | tail -1 | cut -c20-
    grep -E "^\| (fp|variant)" "$f"
  done
}
