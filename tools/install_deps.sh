#!/usr/bin/env bash
# Installs everything tflite-gles needs on a fresh Debian bookworm machine:
# the GL/EGL stack (Mesa llvmpipe for CI), shader and flatbuffer tools, the
# C++ toolchain and GoogleTest (apt), and the pinned Python packages (the real
# LiteRT runtime among them) into the project's own virtual environment,
# never into the system interpreter (Debian's python3 is externally managed,
# PEP 668, and may have no pip at all).
#
#   .venv/                 ai-edge-litert and the test/bench packages; every
#                          script runs with .venv/bin/python (tools/python.sh)
#   .venv-tflite-runtime/  tflite-runtime 2.14 (Python <= 3.11), the runtime
#                          Raspberry Pi users have; the ABI and model tests
#                          run against it too (tools/run_tests.sh)
#
# TFLITE_GLES_VENV / TFLITE_GLES_VENV_TFLITE_RUNTIME move them; PYTHON picks
# the interpreter that makes them (default: python3 on PATH). Idempotent:
# installs only what is missing. Every step says what it does, and a failing
# step says which one failed.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

step=""
trap 'status=$?; if [ $status -ne 0 ]; then echo "install_deps: FAILED (exit $status) while: ${step:-starting}" >&2; fi' EXIT
say() { step="$*"; echo "install_deps: $*"; }

APT_PACKAGES=(
  build-essential cmake pkg-config git ca-certificates
  python3 python3-venv
  libegl-dev libgles-dev libegl1 libgles2 libgl1-mesa-dri libegl-mesa0
  mesa-vulkan-drivers libvulkan1
  glslang-dev glslang-tools
  libflatbuffers-dev flatbuffers-compiler
  libgtest-dev googletest
  ninja-build
  # memcheck tells whose a crash is (tests/python/heap_check.py)
  valgrind
  # stb_image.h / stb_image_write.h: tools/gpu_pipeline_example.cc decodes
  # and writes PNGs with them
  libstb-dev
)
# Pinned: the reference runtime and everything the tests, tools and benches import.
PIP_PACKAGES=(
  ai-edge-litert==2.3.0
  numpy==2.4.6
  flatbuffers==25.12.19
  pytest==9.2.0
  pillow==13.0.0
  matplotlib==3.11.2
  scikit-build-core==1.1.2
)
# tflite-runtime 2.14 is built against NumPy 1.x.
PIP_PACKAGES_TFLITE_RUNTIME=(
  tflite-runtime==2.14.0
  numpy==1.26.4
  flatbuffers==25.12.19
  pytest==9.2.0
  pillow==13.0.0
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get update"
  $SUDO apt-get update -qq
  say "apt-get install ${missing[*]}"
  apt_log=$(mktemp)
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    > "$apt_log" 2>&1 || { tail -n 40 "$apt_log"; rm -f "$apt_log"; exit 1; }
  rm -f "$apt_log"
fi

# Makes (or reuses) a virtual environment at $1 and installs the pinned
# packages $2... into it when any is missing or at another version.
ensure_venv() {
  local venv=$1; shift
  local base=${PYTHON:-python3}
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
    say "creating the virtual environment $venv with $(command -v "$base") ($("$base" --version 2>&1))"
    rm -rf "$venv"
    "$base" -m venv "$venv"
  fi
  local wanted
  wanted=$(printf '%s\n' "$@")
  # One pip call lists what is there; a package that is absent is simply not
  # in the list (no per-package 'pip show', which fails for absent ones).
  local have
  step="listing the packages of $venv"
  have=$("$venv/bin/python" -m pip list --format=freeze --disable-pip-version-check 2>/dev/null \
         | tr '[:upper:]_' '[:lower:]-')
  local need=0 spec
  while read -r spec; do
    spec=$(echo "$spec" | tr '[:upper:]_' '[:lower:]-')
    grep -qxF "$spec" <<<"$have" || need=1
  done <<<"$wanted"
  if [ $need -eq 1 ]; then
    say "pip install into $venv: $*"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@"
  fi
}

VENV=${TFLITE_GLES_VENV:-$REPO/.venv}
ensure_venv "$VENV" "${PIP_PACKAGES[@]}"

# tflite-runtime has wheels for CPython 3.8-3.11 only.
VENV_TFLITE_RUNTIME=${TFLITE_GLES_VENV_TFLITE_RUNTIME:-$REPO/.venv-tflite-runtime}
if "${PYTHON:-python3}" -c 'import sys; sys.exit(0 if sys.version_info[:2] <= (3, 11) else 1)'; then
  ensure_venv "$VENV_TFLITE_RUNTIME" "${PIP_PACKAGES_TFLITE_RUNTIME[@]}"
else
  echo "install_deps: $("${PYTHON:-python3}" --version) is newer than tflite-runtime 2.14 supports (<= 3.11): its environment is not made"
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
  say "sample images from python3-skimage into $IMAGE_DIR"
  workdir=$(mktemp -d)
  (cd "$workdir" && apt-get download -qq python3-skimage 2>/dev/null) || {
    say "apt-get update (to download python3-skimage)"
    $SUDO apt-get update -qq
    say "apt-get download python3-skimage"
    (cd "$workdir" && apt-get download -qq python3-skimage)
  }
  members=()
  for image in "${SAMPLE_IMAGES[@]}"; do
    members+=("./usr/lib/python3/dist-packages/skimage/data/$image")
  done
  say "extracting ${SAMPLE_IMAGES[*]} from the python3-skimage package"
  dpkg-deb --fsys-tarfile "$workdir"/python3-skimage_*.deb | tar -x -C "$workdir" "${members[@]}"
  $SUDO mkdir -p "$IMAGE_DIR"
  for image in "${SAMPLE_IMAGES[@]}"; do
    $SUDO install -m 644 "$workdir/usr/lib/python3/dist-packages/skimage/data/$image" "$IMAGE_DIR/"
  done
  rm -rf "$workdir"
fi
step=""
echo "install_deps: ok (Python: $VENV/bin/python)"
