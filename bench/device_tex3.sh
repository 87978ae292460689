#!/bin/bash
# Branch tex3 (issue 16) on the NVIDIA device machine, ~3 minutes:
#  1. the texture tests, in place on NVIDIA's own paths, and the lifetime
#     tests (a delegate deleted under another context): before tex3 the
#     in-place test failed its structural check here, 10 cases (the timer-
#     query profile listed the readback conversion a bound output skips);
#  2. whether the driver reuses a destroyed EGLContext's handle (the cause
#     found for the late-destruction bug);
#  3. selfie segmentation per frame, copy / texture in / texture in + out,
#     base library (.devbuild/base, the session's start) and this branch's
#     interleaved frame by frame in one process, fp32 then fp16.
# Run from the repository root, this branch's Release library carried:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_tex3.sh
# Writes under $OUT: tex3-tests.txt, tex3-handles.txt, tex3-timeline.txt, tex3-{fp32,fp16}.{txt,json}; the short
# table is printed last. ROUNDS (default 500) per precision.
source "$(dirname "$0")/device_common.sh"
LIB=${TFLITE_GLES_LIB:-$PWD/build/libtflite_gles.so}
BASE=${BASE_LIB:-.devbuild/base/libtflite_gles.so}
[ -e "$BASE" ] && BASE=$(readlink -f "$BASE") || BASE=""
device_place_models
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/python/test_gpu_io_textures_in_place.py \
  tests/python/test_gpu_io_lifetime.py tests/python/test_gpu_io_textures.py \
  > "$OUT/tex3-tests.txt" 2>&1
# The late-destruction bug's cause (docs/gpu_io.md, "Lifetime"): does the
# driver hand a destroyed context's EGLContext handle to the next context?
( cd tests/python && timeout 30 python3 -c "
import egl_app_context as e
handles = []
for _ in range(6):
    c = e.ApplicationContext(); handles.append(c.context); c.close()
print('context handles, each destroyed before the next:', [hex(h) for h in handles],
      'reused' if len(set(handles)) < len(handles) else 'all different')
" ) > "$OUT/tex3-handles.txt" 2>&1
for precision in fp32 fp16; do
  flag=""; [ "$precision" = fp16 ] && flag="--fp16"
  base_flag=()
  [ -n "$BASE" ] && base_flag=(--base-library "$BASE")
  timeout 70 python3 bench/texture_io_bench.py --model "$M/selfie_segmentation.tflite" \
    --library "$LIB" "${base_flag[@]}" $flag --rounds "${ROUNDS:-500}" --warmup 20 \
    --json "$OUT/tex3-$precision.json" > "$OUT/tex3-$precision.txt" 2>&1
  echo "rc $?" >> "$OUT/tex3-$precision.txt"
done
# Where a frame goes (diagnostic, this library, fp32; one report per mode:
# copy, tex_in, tex_in_out): texture in + out was 0.061 ms slower than bound
# buffers in + out on the H100 (session 9), which no dispatch count explains.
TFLITE_GLES_X_TIMELINE=1 timeout 40 python3 bench/texture_io_bench.py \
  --model "$M/selfie_segmentation.tflite" --library "$LIB" --rounds 200 --warmup 1 \
  > "$OUT/tex3-timeline.txt" 2>&1
echo "== time line (copy, tex_in, tex_in_out):"
grep "mean of 200 invokes" "$OUT/tex3-timeline.txt" | sed 's/INFO: tflite-gles: //; s/, us from the start of the invoke//'
echo "== $(tail -n 1 "$OUT/tex3-handles.txt")"
echo "== tests: $(tail -n 1 "$OUT/tex3-tests.txt")"
grep -E "^(FAILED|ERROR)" "$OUT/tex3-tests.txt" | head -n 12
for precision in fp32 fp16; do
  echo "== selfie $precision ($([ -n "$BASE" ] && echo "base = $BASE" || echo "no base library"))"
  grep -v "^INFO\|^WARNING" "$OUT/tex3-$precision.txt" | tail -n 10
done
