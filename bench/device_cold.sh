#!/bin/bash
# Cold start on the NVIDIA device machine (issue 17, part 3), one call of
# about 3-4 minutes:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_cold.sh
# Every measured process gets a new empty HOME and XDG_CACHE_HOME and no
# __GL_SHADER_DISK_CACHE* / MESA_SHADER_CACHE* variables, so NVIDIA's own
# shader cache (~/.nv/GLCache or $XDG_CACHE_HOME/nvidia/GLCache) starts empty
# and only what the delegate keeps in serialization_dir can help. Writes
# under $OUT:
#   probe-nvidia.txt       what NVIDIA's program binary holds (ELF inside?
#                          same bytes after a dispatch?) and what a loaded
#                          binary's first dispatch costs with an empty, a
#                          filled driver cache (bench/program_binary_probe.py)
#   cold-start-nvidia.*    bench/cold_start.py: MobileNet v1 1.0 stand-in and
#                          deeplabv3, cases empty/write/filled/binaries/
#                          no_data/warm_home, 2 repeats
#   cold-start-nvidia-source.txt  the same with TFLITE_GLES_X_PROGRAM_BINARIES=0:
#                          programs compiled from source, only the driver's
#                          cache kept (does NVIDIA's cache serve glProgramBinary
#                          programs, or only programs linked from source?)
#   driver-cache-files.txt what NVIDIA wrote into serialization_dir/driver_shader_cache
#                          (empty: the driver reads __GL_SHADER_DISK_CACHE_PATH
#                          later than eglInitialize, see egl/driver_shader_cache.h)
set -u
BASE_LIB=  # one library: the one in build/
source bench/device_cold_setup.sh

PROBE_PLATFORM=device timeout 90 python3 bench/program_binary_probe.py experiment \
  > "$OUT/probe-nvidia.txt" 2>&1
cat "$OUT/probe-nvidia.txt"

timeout 200 python3 bench/cold_start.py --model mobilenet_v1_1.0_224 deeplabv3_257_mv_gpu \
  --repeats 2 --json "$OUT/cold-start-nvidia.json" > "$OUT/cold-start-nvidia.txt" 2>&1
TFLITE_GLES_X_PROGRAM_BINARIES=0 timeout 80 python3 bench/cold_start.py \
  --model mobilenet_v1_1.0_224 --repeats 1 --cases empty,write,filled \
  > "$OUT/cold-start-nvidia-source.txt" 2>&1

# Which files the driver puts into the delegate's folder, once.
work=$(mktemp -d); mkdir -p "$work/home" "$work/ours"
HOME=$work/home XDG_CACHE_HOME=$work/home/.cache timeout 60 python3 bench/cold_init.py \
  --child --model mobilenet_v1_1.0_224 --serialization-dir "$work/ours" > /dev/null 2>&1
{ echo "in serialization_dir/driver_shader_cache:"; find "$work/ours/driver_shader_cache" -type f | head -20
  echo "files: $(find "$work/ours/driver_shader_cache" -type f | wc -l)"
  echo "in the empty home (must stay empty):"; find "$work/home" -type f | head; } \
  > "$OUT/driver-cache-files.txt" 2>&1
rm -rf "$work"

tail -n 4 "$OUT/driver-cache-files.txt"
echo "--- MobileNet source-compile variant"; grep "^|" "$OUT/cold-start-nvidia-source.txt"
echo "--- cold start (programs from binaries + driver cache kept)"
grep -E "^model|^\|" "$OUT/cold-start-nvidia.txt"
