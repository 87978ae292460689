// The tiles of conv2d.comp's shared-memory and split-depth forms, chosen per
// layer and device (declared in conv_common.h; used by AddConv2dDispatch).
#include "delegate/kernels/conv_common.h"

#include <algorithm>

namespace tflite_gles::kernels {

// conv2d.comp SMEM_TILE's workgroup: the first candidate whose shared
// tiles fit the device (16 KB, 128 invocations at the GLES 3.1 minimum).
// 16 x 8 invocations of 2 pixels x 2 slices ran best or within 15 % of the
// best standalone on the four style-transfer layers swept on an H100
// (bench/peak_probe.py conv); 1 slice, then 32 x 4 x 1 pixel, fit 9x9
// windows in 16 KB. Only where it was measured to pay: batch 1, stride 1, no dilation,
// maps of >= 16384 pixels (the 96x96 layers keep K_SPLIT, which finds
// enough invocations there), <= DeviceProfile::conv_smem_slices input slices
// (4; conv2d.comp writes up to 8 out as steps).
// Many-core GPUs (DeviceProfile::min_invocations): where the block leaves
// fewer invocations, 16 x 8 of one pixel x one slice: on NVIDIA hair's
// 128x128x16 layers (128 workgroups of 2 x 2 for 132 SMs) ran 23.4 -> 16.0
// µs fp32, 19.5 -> 14.0 fp16 (docs/perf/log.md, "conv3, session 14").
SmemTile ChooseSmemTile(const DeviceProfile& device, const ConvWindow* window,
                        const Shape4& in, const Shape4& out) {
  if (!device.conv_smem_tile || window == nullptr || in.b != 1 || window->stride_h != 1 ||
      window->stride_w != 1 || window->dilation_h != 1 || window->dilation_w != 1 ||
      1LL * out.h * out.w < 16384 || in.slices() > device.conv_smem_slices) {
    return SmemTile();
  }
  const long long shared_limit = device.gpu ? device.gpu->max_shared_memory_bytes : 16384;
  const long long invocations_limit = device.gpu ? device.gpu->max_workgroup_invocations : 128;
  // A forced block (TFLITE_GLES_X_CONV_SMEM_BLOCK) first, where it fits. ST_PREFETCH's rule
  // (DeviceProfile::conv_smem_prefetch 2, NVIDIA): layers of > 4 input slices, and in fp16 of
  // 4, take 1 pixel x 2 slices per invocation with the prefetch: on an H100 style's @240
  // (8 slices) 37.2 -> 27.9 µs fp32, @256 (4) fp16 25.0 -> 22.8; fp32's @256 lost with it
  // (28.2 -> 30.4) and 16 x 8 x 2 x 2 with it lost 22 % (docs/perf/log.md, "peak5, session 16").
  const auto& forced = device.conv_smem_block;
  const bool rule = device.conv_smem_prefetch == 2 && in.slices() > (device.fp16 ? 3 : 4);
  // ST_LIT (DeviceProfile::conv_smem_lit): 1 pixel x every output slice (<= 2), one group
  // (or conv_smem_lit_groups of 2 slices: ST_LIT_G).
  // Two groups only where measured: layers of > 4 input slices (the prefetch rule's, @240).
  const int lit_groups = in.slices() > 4 ? std::clamp(device.conv_smem_lit_groups, 1, 2) : 1;
  const bool lit = device.conv_smem_lit > 0 && (device.conv_smem_lit > 1 || !device.fp16) &&
                   out.slices() <= 2 * lit_groups;
  const SmemTile preferred = lit    ? SmemTile{16, 8, 1, 2}
                             : rule ? SmemTile{16, 8, 1, 2}
                                    : SmemTile{16, 8, 2, 2};
  const SmemTile candidates[] = {{forced[0], forced[1], forced[2], forced[3]},
                                 preferred, {16, 8, 2, 2}, {16, 8, 2, 1}, {32, 4, 1, 1}};
  // Shared vec4s: one tile (two with ST_DB, ST_PAIR) and one slice's weights (every slice's:
  // ST_WONCE).
  auto shared_vec4s = [&](const SmemTile& tile) {
    const int row = tile.local_x * tile.pixels + window->kernel_w - 1;
    const int padded_row = (row - 1) + (row - 1) / 8 + 1;  // ST_SWP
    return 1LL * (tile.local_y + window->kernel_h - 1) * padded_row *
               (tile.db || tile.pair ? 2 : 1) +
           1LL * window->kernel_h * window->kernel_w * tile.slices * 4 *
               (tile.wonce ? in.slices() : 1);
  };
  auto fits = [&](SmemTile& tile) {
    tile.slices = std::min(tile.slices, out.slices());
    return tile.local_x > 0 && 16 * shared_vec4s(tile) <= shared_limit &&
           1LL * tile.local_x * tile.local_y <= invocations_limit;
  };
  // The fill block below keeps the rule's prefetch off (unmeasured there: hair's maps).
  auto with_prefetch = [&](SmemTile tile, bool fill) {
    const long long n = 1LL * tile.local_x * tile.local_y;
    const long long tile_vec4s = 1LL * (tile.local_y + window->kernel_h - 1) *
                                 (tile.local_x * tile.pixels + window->kernel_w - 1);
    const bool fits_prefetch = tile_vec4s <= 4 * n &&
                               1LL * window->kernel_h * window->kernel_w * tile.slices * 4 <= n;
    tile.prefetch = (device.conv_smem_prefetch == 1 || (rule && !fill)) && fits_prefetch;
    // ST_LIT where the tile's slice groups are few enough (no weights staged; the prefetch
    // by the rule or forced; ST_DB or ST_PAIR in its place where their two tiles fit).
    tile.lit_groups = (out.slices() + tile.slices - 1) / tile.slices;
    tile.lit = lit && tile.lit_groups <= lit_groups;
    if (tile.lit) {
      // One group: session 18's program (no prefetch) unless forced (prefetch 1) or by
      // DeviceProfile::conv_smem_lit_prefetch.
      if (tile.lit_groups == 1 && device.conv_smem_prefetch != 1) {
        tile.prefetch = device.conv_smem_lit_prefetch && device.conv_smem_prefetch > 0 &&
                        fits_prefetch;
      }
      tile.db = device.conv_smem_db && tile_vec4s <= 8 * n;
      tile.pair = !tile.db && device.conv_smem_pair;
      if (16 * shared_vec4s(tile) > shared_limit) tile.db = tile.pair = false;
      if (tile.db || tile.pair) tile.prefetch = false;
      return tile;
    }
    tile.lit_groups = 1;
    // ST_WONCE, and ST_DB in place of the prefetch, where their shared memory fits.
    tile.wonce = device.conv_smem_wonce == 1 ||
                 (device.conv_smem_wonce == 2 && !fill && in.slices() >= 4);
    tile.db = tile.wonce && device.conv_smem_db && tile_vec4s <= 8 * n;
    if (16 * shared_vec4s(tile) > shared_limit) tile.db = false;
    if (16 * shared_vec4s(tile) > shared_limit) tile.wonce = false;
    if (tile.db) tile.prefetch = false;
    return tile;
  };
  for (SmemTile tile : candidates) {
    if (!fits(tile)) continue;
    const long long per_invocation = 1LL * tile.pixels * tile.slices;
    SmemTile fill{16, 8, 1, 1};
    if (forced[0] == 0 && device.min_invocations > 0 && per_invocation > 1 &&
        1LL * out.h * out.w * out.slices() / per_invocation < device.min_invocations &&
        fits(fill)) {
      return with_prefetch(fill, true);
    }
    return with_prefetch(tile, false);
  }
  return SmemTile();
}

// Many-core GPUs (min_invocations > 0): a layer whose K_SPLIT tile leaves
// fewer invocations doubles the parts (each keeping >= 8 steps, at most 8
// parts), then halves the rows, then the slices. On NVIDIA hair's 64x64x32
// 3x3 layers (2 x 2, 4 parts: 32768 invocations) ran 24.4 -> 16.8 µs fp32,
// 18.4 -> 14.9 fp16 with 8 parts; the layers with enough invocations were
// no faster that way (docs/perf/log.md, "conv3, session 14").
DeviceProfile::ConvSplitTile FillSplitTile(DeviceProfile::ConvSplitTile tile, long long rows,
                                           int out_slices, long long steps,
                                           long long min_invocations) {
  auto invocations = [&] {
    const long long row_tiles = (rows + tile.rows - 1) / tile.rows;
    const long long groups = (out_slices + tile.slices - 1) / tile.slices;
    return (row_tiles + tile.local_x - 1) / tile.local_x * tile.local_x * groups * tile.parts;
  };
  while (tile.fill && min_invocations > 0 && invocations() < min_invocations) {
    if (tile.parts < 8 && steps >= 16LL * tile.parts) {
      tile.parts *= 2;
    } else if (tile.rows > 1) {
      tile.rows = (tile.rows + 1) / 2;
    } else if (tile.slices > 1) {
      tile.slices = (tile.slices + 1) / 2;
    } else {
      break;
    }
  }
  return tile;
}

}  // namespace tflite_gles::kernels
