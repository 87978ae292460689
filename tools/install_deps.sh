#!/usr/bin/env bash
# Installs everything tflite-gles needs on a fresh Debian bookworm machine:
# the GL/EGL stack (Mesa llvmpipe for CI), shader and flatbuffer tools, the
# C++ toolchain and GoogleTest, and the pinned Python packages (the real
# LiteRT runtime among them). Idempotent: installs only what is missing.
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake pkg-config git
  libegl-dev libgles-dev libegl1 libgles2 libgl1-mesa-dri libegl-mesa0
  mesa-vulkan-drivers libvulkan1
  glslang-dev glslang-tools
  libflatbuffers-dev flatbuffers-compiler
  libgtest-dev googletest
)
PIP_PACKAGES=(
  ai-edge-litert==2.3.0
  numpy==2.4.6
  flatbuffers==25.12.19
  pytest==9.2.0
  pillow==13.0.0
  matplotlib==3.11.2
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install_deps: apt packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PYTHON=${PYTHON:-python3}
need_pip=0
for spec in "${PIP_PACKAGES[@]}"; do
  name=${spec%%==*}
  version=${spec##*==}
  installed=$("$PYTHON" -m pip show "$name" 2>/dev/null | awk '/^Version:/ {print $2}')
  [ "$installed" = "$version" ] || need_pip=1
done
if [ $need_pip -eq 1 ]; then
  echo "install_deps: pip packages: ${PIP_PACKAGES[*]}"
  "$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore "${PIP_PACKAGES[@]}"
fi

# Real photographs for the model tests and the segmentation demo: scikit-image's
# sample images (public domain / CC0), taken from Debian's python3-skimage
# package. Only the .deb is fetched and the few images extracted; installing
# the package would pull in SciPy, Matplotlib and ~50 other packages.
IMAGE_DIR=${TFLITE_GLES_IMAGES:-/usr/local/share/tflite-gles/images}
SAMPLE_IMAGES=(astronaut.png chelsea.png coffee.png motorcycle_left.png)
missing_images=0
for image in "${SAMPLE_IMAGES[@]}"; do
  [ -f "$IMAGE_DIR/$image" ] || missing_images=1
done
if [ $missing_images -eq 1 ]; then
  echo "install_deps: sample images from python3-skimage into $IMAGE_DIR"
  workdir=$(mktemp -d)
  trap 'rm -rf "$workdir"' EXIT
  (cd "$workdir" && apt-get download -qq python3-skimage 2>/dev/null) || {
    $SUDO apt-get update -qq
    (cd "$workdir" && apt-get download -qq python3-skimage)
  }
  members=()
  for image in "${SAMPLE_IMAGES[@]}"; do
    members+=("./usr/lib/python3/dist-packages/skimage/data/$image")
  done
  dpkg-deb --fsys-tarfile "$workdir"/python3-skimage_*.deb | tar -x -C "$workdir" "${members[@]}"
  $SUDO mkdir -p "$IMAGE_DIR"
  for image in "${SAMPLE_IMAGES[@]}"; do
    $SUDO install -m 644 "$workdir/usr/lib/python3/dist-packages/skimage/data/$image" "$IMAGE_DIR/"
  done
fi
