# Sourced at the start of every command on the NVIDIA device machine (see
# ../shared/GPU.md and docs/gpu.md): unpacks the carried GLVND/Vulkan loaders
# from .gl/, installs the carried wheels from .whl/ into /tmp/site, and puts
# the carried library of DIR (default .devbuild: libtflite_gles.so*, models/,
# images/) where the tools look for it.
DIR=${DIR:-.devbuild}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || return 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
mkdir -p build /usr/local/share/tflite-gles/images
cp -a "$DIR"/libtflite_gles.so* build/
[ -d "$DIR/images" ] && cp "$DIR"/images/* /usr/local/share/tflite-gles/images/
mkdir -p build/models && cp "$DIR"/models/*.tflite build/models/ 2>/dev/null
export TFLITE_GLES_LIB=$PWD/build/libtflite_gles.so TFLITE_GLES_MODELS=$PWD/$DIR/models
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
