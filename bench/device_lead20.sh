#!/bin/bash
# Lead, session 20 (issue 18): style's @256 and @240 (3x3 convolutions over a nearest upsample
# by 2) as four 2x2 convolutions over the upsample's source (shaders/conv2d_up2.comp,
# TFLITE_GLES_X_CONV_UP2): its blocks and weight forms against today's programs in one
# conv_sweep process (per-dispatch timer queries, the figure of record), fp32 and fp16; the
# whole style model with it off and on (options_ab, interleaved); the pass's tests on the GPU.
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_lead20.sh
# LEAD20_V32 / LEAD20_V16 replace the variant lists; LEAD20_PARTS picks "sweep ab tests";
# LEAD20_LAYERS adds layers to @256 and @240 (e.g. "@3 @272").
source "$(dirname "$0")/device_common.sh"
STYLE=$M/style_transfer_f16_384.tflite
U=env.TFLITE_GLES_X_CONV_UP2=1
B=env.TFLITE_GLES_X_CONV_UP2_BLOCK
L=env.TFLITE_GLES_X_CONV_UP2_LITERAL
H=precision_loss_allowed=true
R=env.TFLITE_GLES_X_PROFILE_REPEAT=20
sweep() {  # LIMIT FILE VARIANT...
  local limit=$1 file=$2 args=() l
  shift 2
  for v in "$@"; do args+=(--variant "$v"); done
  for l in ${LEAD20_LAYERS:-}; do args+=(--match "CONV_2D v1 $l "); done
  timeout "$limit" python3 bench/conv_sweep.py --model "$STYLE" --stat min \
    --rounds ${LEAD20_R:-4} --per-round ${LEAD20_P:-8} --peak 67 "${args[@]}" \
    --match "CONV_2D v1 @256 " --match "CONV_2D v1 @240 " 2>&1 |
    grep -v "^INFO\|^WARNING: All log" > "$file"
}
T0=$(date +%s)
PARTS=${LEAD20_PARTS:-"sweep ab tests"}
if [[ $PARTS == *sweep* ]]; then
  LEAD20_R=1 LEAD20_P=6 sweep 20 /tmp/lead20-warm.md off: "u:$U"
  V32=${LEAD20_V32:-"off: u842:$U u842b:$U,$L=0 u841:$U,$B=8/4/1/0 u844:$U,$B=8/4/4/0
    u1622:$U,$B=16/2/2/0 u1621:$U,$B=16/2/1/0 u1642:$U,$B=16/4/2/0 u1641:$U,$B=16/4/1/0
    u481:$U,$B=4/8/1/0 u882q:$U,$B=8/8/2/1 offrep:$R u842rep:$U,$R u841rep:$U,$B=8/4/1/0,$R"}
  # shellcheck disable=SC2086
  sweep 200 "$OUT/f32.md" $V32
  echo "fp32 sweep after $(( $(date +%s) - T0 )) s"
  V16=${LEAD20_V16:-"h_off:$H h_u842:$H,$U h_u841:$H,$U,$B=8/4/1/0 h_u1641:$H,$U,$B=16/4/1/0
    h_u1621:$H,$U,$B=16/2/1/0 h_u481:$H,$U,$B=4/8/1/0"}
  # shellcheck disable=SC2086
  sweep 120 "$OUT/f16.md" $V16
  echo "fp16 sweep after $(( $(date +%s) - T0 )) s"
fi
if [[ $PARTS == *ab* ]]; then
  timeout 90 python3 bench/options_ab.py --model "$STYLE" --variant off: --variant "up2:$U" \
    --variant "h_off:$H" --variant "h_up2:$H,$U" ${LEAD20_AB:-} > "$OUT/ab.md" 2>&1
  echo "options_ab after $(( $(date +%s) - T0 )) s"
fi
if [[ $PARTS == *tests* ]]; then
  timeout 120 python3 -m pytest -q -rf --tb=line -p no:cacheprovider \
    tests/python/test_upsample_conv.py tests/python/test_upsample_fusion.py > "$OUT/tests.txt" 2>&1
  echo "tests after $(( $(date +%s) - T0 )) s: $(tail -n 1 "$OUT/tests.txt")"
fi
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>/dev/null | head -1
for f in f32 f16 ab; do
  [ -f "$OUT/$f.md" ] && { echo "== $f"; grep -E "^\||rror|Trace" "$OUT/$f.md" | cut -c1-200 | head -30; }
done
grep -E "^(FAILED|ERROR)" "$OUT/tests.txt" 2>/dev/null | head
