#!/usr/bin/env bash
# Builds tflite-gles with AddressSanitizer + UBSan into ./build-asan and runs
#  1. the C++ tests (ctest) with leak detection on, Mesa's own leaks
#     suppressed (tools/sanitizers/lsan.supp says which and why), and
#  2. the Python tests against the ASan build of the delegate, with libasan
#     preloaded into the Python interpreter (leak detection off there:
#     CPython and the LiteRT wheel hold their allocations until exit),
#     the hostile-model suites among them, and
#  3. a short run of the mutation fuzzer against the ASan build
#     (TFLITE_GLES_FUZZ_CASES cases, 200 by default).
# Any ASan or UBSan report fails the run. Usage:
#   bash tools/run_sanitizers.sh             # both
#   bash tools/run_sanitizers.sh cpp         # C++ tests only
#   bash tools/run_sanitizers.sh python [pytest args]
#   bash tools/run_sanitizers.sh fuzz        # the fuzzer only
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
shift || true

mkdir -p build-asan
log=build-asan/build.log
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTFLITE_GLES_SANITIZE=ON \
  > $log 2>&1 || { cat $log; exit 1; }
cmake --build build-asan -j"$(nproc)" >> $log 2>&1 || { tail -n 60 $log; exit 1; }
echo "sanitizers: build ok (build-asan/)"

supp="$PWD/tools/sanitizers"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
status=0
if [ "$what" = all ] || [ "$what" = cpp ]; then
  echo "== C++ tests under ASan + UBSan =="
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1" \
  LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
    ctest --test-dir build-asan --output-on-failure -j1 || status=1
fi
if [ "$what" = all ] || [ "$what" = python ]; then
  echo "== Python tests against the ASan build (libasan preloaded) =="
  libasan=$(gcc -print-file-name=libasan.so)
  libubsan=$(gcc -print-file-name=libubsan.so)
  # The fuzzer has its own stage below ("fuzz"); the soak re-runs what the
  # other tests cover, 10x slower under ASan (see docs/reliability.md).
  LD_PRELOAD="$libasan $libubsan" \
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:verify_asan_link_order=0" \
  TFLITE_GLES_LIB="$PWD/build-asan/libtflite_gles.so" \
    bash tools/python.sh -m pytest -q -p no:cacheprovider tests/python \
      --deselect tests/python/test_fuzz_models.py --deselect tests/python/test_soak.py "$@" \
    || status=1
fi
if [ "$what" = all ] || [ "$what" = fuzz ]; then
  echo "== The mutation fuzzer against the ASan build =="
  libasan=$(gcc -print-file-name=libasan.so)
  libubsan=$(gcc -print-file-name=libubsan.so)
  started=$(date +%s)
  LD_PRELOAD="$libasan $libubsan" \
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:verify_asan_link_order=0" \
  TFLITE_GLES_LIB="$PWD/build-asan/libtflite_gles.so" \
  TFLITE_GLES_FUZZ_CASES="${TFLITE_GLES_FUZZ_CASES:-200}" \
  TFLITE_GLES_FUZZ_BUDGET_S="${TFLITE_GLES_FUZZ_BUDGET_S:-1500}" \
    bash tools/python.sh -m pytest -q -s -p no:cacheprovider tests/python/test_fuzz_models.py \
    || status=1
  echo "sanitizers: fuzz took $(( $(date +%s) - started )) s"
fi
exit $status
