#!/bin/bash
# RGBA textures, the third tensor storage (issue 17 part 2; docs/design.md,
# "Tensor layout and storage"), against SSBO reads and texture-buffer reads
# on the NVIDIA GPU, one call on the device machine:
#   DIR=.devbuild source bench/device_env.sh && bash bench/device_rgba.sh
# Needs in .devbuild the library of branch rgba (and its tests/ and bench/ in
# the checkout). Writes under $OUT:
#   rgba-models.txt     every shared model + stand-in with storage=rgba_texture
#                       against the CPU, fp32 and fp16 (test_rgba_textures.py)
#   rgba-ab-MODEL.txt   per model, the three storages x fp32/fp16 interleaved
#                       in one process (bench/options_ab.py): median ms; RGBA
#                       textures with rows of 2048 texels (the default) and
#                       with rows of W (TFLITE_GLES_X_TEXTURE_ROWS=0)
#   rgba-ops-MODEL.txt  op by op (per shader dispatch sums, GPU timer queries)
#                       for two models, fp32 (bench/storage_ab.py)
# and prints the short table last. Stays under ~4 minutes.
source "$(dirname "$0")/device_common.sh"
device_place_models
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/python/test_rgba_textures.py \
  > "$OUT/rgba-models.txt" 2>&1
for model in mobilenet_v1_0.25_224 selfie_segmentation face_detection_short_range \
             palm_detection_full deeplabv3_257_mv_gpu style_transfer_f16_384; do
  timeout 25 python3 bench/options_ab.py --model "$M/$model.tflite" --iterations 80 \
    --variant fp32-ssbo:storage=ssbo \
    --variant fp32-texbuf:storage=texture_buffer \
    --variant fp32-rgba:storage=rgba_texture \
    --variant fp32-rgbaW:storage=rgba_texture,env.TFLITE_GLES_X_TEXTURE_ROWS=0 \
    --variant "fp16-ssbo:$F16,storage=ssbo" \
    --variant "fp16-texbuf:$F16,storage=texture_buffer" \
    --variant "fp16-rgba:$F16,storage=rgba_texture" \
    --variant "fp16-rgbaW:$F16,storage=rgba_texture,env.TFLITE_GLES_X_TEXTURE_ROWS=0" \
    2>/dev/null > "$OUT/rgba-ab-$model.txt"
done
for model in deeplabv3_257_mv_gpu selfie_segmentation; do
  timeout 15 python3 bench/storage_ab.py --model "$M/$model.tflite" --iterations 20 \
    > "$OUT/rgba-ops-$model.txt" 2>/dev/null
done
tail -n 3 "$OUT/rgba-models.txt"
head -n 14 "$OUT/rgba-ops-deeplabv3_257_mv_gpu.txt"
echo "| model | fp32 ssbo | fp32 texbuf | fp32 rgba | fp32 rgba rows of W | fp16 ssbo | fp16 texbuf | fp16 rgba | fp16 rgba rows of W | (median ms) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for f in "$OUT"/rgba-ab-*.txt; do
  m=$(basename "$f" .txt); m=${m#rgba-ab-}
  echo "| $m | $(grep '^| fp' "$f" | awk -F'|' '{printf "%s |", $3}') |"
done
