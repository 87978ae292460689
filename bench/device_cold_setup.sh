# Sourced by the cold-start scripts of the NVIDIA device machine
# (device_cold.sh, device_cold3.sh) after
# `DIR=.devbuild source bench/device_env.sh`: the set-up they share.
# - the models where the model catalog looks for them, and the MobileNet v1
#   1.0 stand-in built once before any timed run;
# - no driver-cache variables, so every measured process (a new empty HOME
#   each, bench/cold_start.py) starts with the driver's own cache empty;
# - COLD_LIBS: the --lib arguments of bench/cold_start.py, `new` (the
#   library in build/) and, where BASE_LIB names a file, `base` (copied, so
#   that its file, whose size and time key its model data, is its own).
OUT=${OUT:-/tmp/out}
M=${TFLITE_GLES_MODELS:?source bench/device_env.sh first}
mkdir -p "$OUT" ../shared/models
cp "$M"/*.tflite ../shared/models/
unset __GL_SHADER_DISK_CACHE_PATH __GL_SHADER_DISK_CACHE MESA_SHADER_CACHE_DIR
python3 -c "import sys; sys.path[:0]=['tools','tests/python']; import model_catalog as mc; \
mc.CATALOG['mobilenet_v1_1.0_224'].path" > /dev/null 2>&1
COLD_LIBS=(--lib "new=$PWD/build/libtflite_gles.so")
if [ -n "${BASE_LIB:-}" ] && [ -f "$BASE_LIB" ]; then
  mkdir -p /tmp/cold-base && cp -L "$BASE_LIB" /tmp/cold-base/libtflite_gles.so
  COLD_LIBS=(--lib "base=/tmp/cold-base/libtflite_gles.so" "${COLD_LIBS[@]}")
fi
