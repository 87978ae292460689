#!/bin/bash
# The GLES 3.1 minimum device profile on the NVIDIA GPU (docs/device_profiles.md),
# one call on the device machine:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_minprof.sh
# Needs in .devbuild the library of branch minprof (and its tests/ in the
# checkout). Writes under $OUT:
#   minprof-models.txt   every shared model + stand-in under the profile
#                        (test_device_profiles.py: one partition, fp32 within
#                        1e-4 of the CPU) and the egl_device tests
#   minprof-report.md    per model, native vs gles31-minimum vs mali-g52:
#                        nodes, partitions, programs, dispatches, median ms
#   minprof-2gpu.txt     with 2+ GPUs: one interpreter per GPU in two threads
#                        (egl_device 0 and 1), outputs checked, throughput
# and prints the short tables last. Stays under ~4 minutes.
source "$(dirname "$0")/device_common.sh"
device_place_models
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python/test_device_profiles.py \
  tests/python/test_egl_device.py > "$OUT/minprof-models.txt" 2>&1
timeout 60 python3 bench/device_profile_report.py --profiles gles31-minimum mali-g52 \
  --iterations 50 > "$OUT/minprof-report.md" 2> "$OUT/minprof-report.err"
timeout 30 python3 bench/two_gpu_check.py > "$OUT/minprof-2gpu.txt" 2>&1
tail -n 3 "$OUT/minprof-models.txt"
cat "$OUT/minprof-report.md" "$OUT/minprof-2gpu.txt"
