// The convolution kernels' device choices (tiles, shared-memory staging, the
// window kernel's forms, FMA chains): the part of TuneForDevice that follows
// the convolution measurements in docs/perf/log.md. Split from
// device_tuning.cc to keep each file a few hundred lines.
#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "delegate/device/apply_override.h"
#include "delegate/device/device_tuning.h"

namespace tflite_gles {
namespace {

// A block switch of four integers "A/B/C/D" (',' works too), each within [lo, hi]; a bad
// value is ignored with a warning naming the variable and its form. Whether the block fits the
// device is checked where it is used.
void ApplyBlock(const char* variable, const char* form, const std::string& text,
                const std::array<int, 4>& lo, const std::array<int, 4>& hi,
                std::array<int, 4>* block) {
  int v[4];
  char tail = 0;
  bool ok = std::sscanf(text.c_str(), "%d%*[/,]%d%*[/,]%d%*[/,]%d%c", &v[0], &v[1], &v[2], &v[3],
                        &tail) == 4;
  for (int i = 0; ok && i < 4; ++i) ok = v[i] >= lo[i] && v[i] <= hi[i];
  if (ok) {
    *block = {v[0], v[1], v[2], v[3]};
    return;
  }
  std::fprintf(stderr, "WARNING: tflite-gles: %s='%s' is not %s; ignored\n", variable,
               text.c_str(), form);
}

}  // namespace

void TuneConvolutionKernels(DeviceProfile* device, const DeveloperOverrides& o) {
  // Dilated 3x3 depthwise layers (DeepLab's atrous blocks) with the 3x3
  // path's input reuse, over outputs a dilation apart, instead of one fetch
  // per tap and output: llvmpipe pays per fetch (docs/perf/log.md, "llvm,
  // session 10"). Other GPUs keep the gather until measured (NVIDIA fuses
  // these layers into gemm.comp anyway).
  device->dilated_depthwise_reuse = device->gpu->IsLlvmpipe();
  Apply(o.conv_k_split, &device->conv_k_split);
  // Shared-memory tiles for the large stride-1 convolutions: on an H200 the
  // style-transfer layers that take them ran 1.07-1.26x (fp32) and
  // 1.13-1.5x (fp16) faster than K_SPLIT's gather (docs/perf/log.md, "peak,
  // session 11"). NVIDIA only until measured elsewhere; llvmpipe runs a
  // workgroup on one core, where staging only adds barriers.
  device->conv_smem_tile = device->gpu->IsNvidia();
  Apply(o.conv_smem_tile, &device->conv_smem_tile);
  // TFLITE_GLES_X_CONV_SMEM_BLOCK=LX/LY/PX/SL: conv2d.comp SMEM_TILE's block (invocations along
  // x and y, pixels and output slices per invocation) for every layer that takes SMEM_TILE
  // (sweeps; kernels::ChooseSmemTile checks it against the device).
  if (!o.conv_smem_block.empty()) {
    ApplyBlock("TFLITE_GLES_X_CONV_SMEM_BLOCK", "LX/LY/PX/SL", o.conv_smem_block, {1, 1, 1, 1},
               {1024, 1024, 16, 8}, &device->conv_smem_block);
  }
  // SMEM_TILE for 8 input slices with ST_PREFETCH and 1 pixel x 2 slices per invocation
  // (kernels::ChooseSmemTile's rule, 2): on an H100 style's @240 (3x3 32 -> 16, 192x192) ran
  // 37.2 -> 27.9 µs fp32 (K_SPLIT, or 32.1 with its weights in shared memory), and in fp16 the
  // 4-slice @256 25.0 -> 22.8; fp32's @256 was slower with it (28.2 -> 30.4; docs/perf/log.md,
  // "peak5, session 16"). NVIDIA, where it was measured.
  device->conv_smem_prefetch = device->gpu->IsNvidia() ? 2 : 0;
  if (o.conv_smem_prefetch) {
    device->conv_smem_prefetch = static_cast<int>(std::min(*o.conv_smem_prefetch, 2LL));
  }
  // K_SPLIT's weights in shared memory from 16384 output pixels, NVIDIA fp32: style's @240
  // (192x192) 36.4 -> 31.0 µs on an H200, while the dispatch sum rose 2 µs with every K_SPLIT
  // layer staging (its 96x96 ones) and fp16 did not gain (docs/perf/log.md, "peak5, session 16").
  device->conv_k_split_wsmem_rows = device->gpu->IsNvidia() && !device->fp16 ? 16384 : 0;
  Apply(o.conv_k_split_wsmem, &device->conv_k_split_wsmem_rows);
  // 4 without ST_PREFETCH: with 8 style's @240 ran 1.06x / 1.24x slower than K_SPLIT in fp32
  // / fp16 on an H200 (docs/perf/log.md, "peak, session 11"); 8 with it on NVIDIA (above).
  device->conv_smem_slices = device->gpu->IsNvidia() ? 8 : 4;
  if (o.conv_smem_slices) {
    device->conv_smem_slices = static_cast<int>(std::clamp(*o.conv_smem_slices, 1LL, 8LL));
  }
  // SMEM_TILE's weights staged once (ST_WONCE): off. On an H100 with fp16 storage style's @256
  // ran 22.4 -> 21.0 µs and @240 21.2 -> 20.4, but its dispatch sum moved only -1 to -3 µs
  // and the hair stand-in's +7 µs with the rule (2: >= 4 input slices, not the fill block);
  // fp32 lost (@256 +27 %, @240 +14 %). Two tiles (ST_DB) lost 2-7x (docs/perf/log.md,
  // "tri7, session 18").
  device->conv_smem_wonce = 0;
  if (o.conv_smem_wonce) {
    device->conv_smem_wonce = static_cast<int>(std::min(*o.conv_smem_wonce, 2LL));
  }
  device->conv_smem_db = false;
  Apply(o.conv_smem_db, &device->conv_smem_db);
  // Weights as the program's constants (ST_LIT) for layers of <= 2 output slices on NVIDIA
  // with fp32 storage: on an H100 style's @256 (3x3 16 -> 8, 384x384) 28.5 -> 23.1 µs, the
  // dispatch sum -9 µs; 4-slice layers gained nothing (@240, 8 -> 16) or lost (the hair
  // stand-in's 16 -> 16, +0.6 %), and in fp16 @256 ran 21.3 against ST_WONCE's 21.0.
  device->conv_smem_lit = device->gpu->IsNvidia() && !device->fp16 ? 1 : 0;
  if (o.conv_smem_lit) device->conv_smem_lit = static_cast<int>(std::min(*o.conv_smem_lit, 2LL));
  // Session 19's forms of it on NVIDIA with fp32 storage (H100, docs/perf/log.md, "tri8,
  // session 19"): @240's two slice groups (> 4 input slices) as literals, 28.1 -> 20.7 µs;
  // the tile's sources set once (ST_HOIST), @256 23.2 -> 20.6; with its shapes compiled in
  // and the prefetch, @256's program 19.8 -> 16.1 back to back; ST_PAIR and ST_DB lost.
  const bool nv32 = device->gpu->IsNvidia() && !device->fp16;
  device->conv_smem_lit_groups = nv32 ? 2 : 1;
  if (o.conv_smem_lit_groups) {
    device->conv_smem_lit_groups = static_cast<int>(std::clamp(*o.conv_smem_lit_groups, 1LL, 2LL));
  }
  device->conv_smem_pair = false;
  Apply(o.conv_smem_pair, &device->conv_smem_pair);
  device->conv_smem_lit_spec = nv32;
  Apply(o.conv_smem_lit_spec, &device->conv_smem_lit_spec);
  device->conv_smem_hoist = nv32;
  Apply(o.conv_smem_hoist, &device->conv_smem_hoist);
  device->conv_smem_lit_prefetch = nv32;
  Apply(o.conv_smem_lit_prefetch, &device->conv_smem_lit_prefetch);
  // The prototype's form in conv2d_window.comp (docs/perf/log.md, "gap,
  // session 12"): NVIDIA, where it was measured.
  device->window_conv_row_reuse = device->gpu->IsNvidia();
  Apply(o.window_reuse, &device->window_conv_row_reuse);
  // Off until measured (docs/perf/log.md, "gap2, session 13").
  device->window_conv_small = false;
  Apply(o.window_small, &device->window_conv_small);
  device->window_conv_acc_mediump = false;
  Apply(o.window_acc16, &device->window_conv_acc_mediump);
  // SLICE_STEPS: style's @272 (2 input slices) 43.2 -> 36.7 µs in fp32 at 2/16/8
  // on an H200, fp16 31.5 -> 28.4 (docs/perf/log.md, "peak4, session 15"): NVIDIA.
  device->window_conv_slice_steps = device->gpu->IsNvidia();
  Apply(o.window_slice_steps, &device->window_conv_slice_steps);
  // PACK3: style's @272 (8 -> 3) 45.4 -> 42.4 µs in fp32 on an H200, fp16 33.7 -> 35.9
  // (docs/perf/log.md, "peak4, session 15"): NVIDIA fp32.
  device->window_conv_pack3 = device->gpu->IsNvidia() && !device->fp16;
  Apply(o.window_pack3, &device->window_conv_pack3);
  device->window_conv_half_smem = false;
  Apply(o.window_half_smem, &device->window_conv_half_smem);
  device->window_conv_block_steps = 1;
  if (o.window_block_steps) {
    device->window_conv_block_steps = static_cast<int>(std::clamp(*o.window_block_steps, 1LL, 4LL));
  }
  // WEIGHTS_LITERAL on NVIDIA with fp32: style's @272 38.2 -> 29.6 µs, @3 35.0 -> 32.3 on an
  // H100 (docs/perf/log.md, "win7, session 18"); highp products only (the pass checks).
  device->window_conv_literal_weights = device->gpu->IsNvidia() && !device->fp16;
  Apply(o.window_literal, &device->window_conv_literal_weights);
  const bool nvidia_fp32 = device->gpu->IsNvidia() && !device->fp16;
  device->window_conv_literal_vec4s = nvidia_fp32 ? 2048 : 1024;
  if (o.window_literal_vec4s) {
    device->window_conv_literal_vec4s = std::min(*o.window_literal_vec4s, 4096LL);
  }
  // WINDOW_SMALL where the weights become literals, for layers of >= this many MFLOP: at
  // 100 (NVIDIA fp32) style's @256 / @240 (3x3, 340 MFLOP) ran 23.3 -> 21.2 / 28.1 -> 25.4 µs
  // on an H100 (docs/perf/log.md, "win8, session 19"), but conv2d.comp's ST_LIT forms of
  // the same call ran them in 19.6 / 18.9 ("tri8, session 19"): off by default, a switch.
  // @240's 1152 weight vec4s need the budget at 2048.
  device->window_conv_small_literal_mflop = 0;
  if (o.window_small_lit) device->window_conv_small_literal_mflop = *o.window_small_lit;
  // 1 pixel per invocation for those of <= 2 output slices on NVIDIA: style's @272 29.7 -> 24.1
  // µs on an H100 (PX 2 / 3: 29.7 / 29.4; docs/perf/log.md, "win7, session 18"), @3 (3 -> 8)
  // 32.0 -> 19.8 (PX 2 / 4: 32.0 / 75.5; "Lead, session 19").
  device->window_conv_literal_px = device->gpu->IsNvidia() ? 1 : 0;
  if (o.window_literal_px) {
    device->window_conv_literal_px = static_cast<int>(std::min(*o.window_literal_px, 8LL));
  }
  // FMA_CHAIN in fp32 on NVIDIA (products and accumulators both highp: one
  // rounding less per product): style's dispatch sum 0.742 -> 0.715 ms on an
  // H200, every large convolution faster (docs/perf/log.md, "peak4, session
  // 15"; gap2's session-13 rows, before the window kernel's written-out taps,
  // had it slower there). fp16 keeps it off: it doubled style's error
  // against the CPU (gap2).
  device->fma_chain = device->gpu->IsNvidia() && !device->fp16;
  Apply(o.fma_chain, &device->fma_chain);
  Apply(o.dilated_dw_reuse, &device->dilated_depthwise_reuse);
  if (!o.pointwise_tile.empty()) device->conv_tile_override = o.pointwise_tile;
  // Off until measured (docs/perf/log.md, "llvm, session 10").
  device->conv_k_unroll = false;
  Apply(o.conv_unroll, &device->conv_k_unroll);
  // Off: on DeepLab it made llvmpipe's 1x1 layers ~7 % slower, though a
  // probe GEMM ran faster (docs/perf/log.md, "llvm4, session 13").
  device->gemm_group_block = false;
  Apply(o.gemm_group_block, &device->gemm_group_block);
  device->conv_unrolled_tile = device->gpu->IsLlvmpipe();
  Apply(o.conv_unrolled_tile, &device->conv_unrolled_tile);
  // Upsample-by-2 3x3 layers as four 2x2 convolutions over the source, NVIDIA by the rule (2):
  // on an H200 style's @256 (16 -> 8, 384x384) ran 18.6 -> 14.0 µs in fp32 (literal weights,
  // one group) and 21.7 -> 17.2 in fp16; @240 (32 -> 16, 192x192) 20.5 -> 16.7 in fp16 at 1
  // output slice per invocation, and 17.9 -> 15.3 in fp32 with its weights in shared memory
  // (WSMEM; as literals over 2-4 groups 21.1-21.5; docs/perf/log.md, "Lead, session 20").
  // Elsewhere off until measured.
  device->conv_up2 = device->gpu->IsNvidia() ? 2 : 0;
  if (o.conv_up2) device->conv_up2 = static_cast<int>(std::min(*o.conv_up2, 2LL));
  // TFLITE_GLES_X_CONV_UP2_BLOCK=LX/LY/TS/Z (sweeps; Z 0: a parity per local z, 1: QUAD, 2:
  // PAR_WG; delegate/passes/upsample_conv.cc checks it against the device).
  if (!o.conv_up2_block.empty()) {
    ApplyBlock("TFLITE_GLES_X_CONV_UP2_BLOCK", "LX/LY/TS/Z", o.conv_up2_block, {1, 1, 1, 0},
               {64, 64, 4, 2}, &device->conv_up2_block);
  }
  device->conv_up2_literal_vec4s = device->gpu->IsNvidia() && !device->fp16 ? 2048 : 0;
  if (o.conv_up2_literal) device->conv_up2_literal_vec4s = std::min(*o.conv_up2_literal, 4096LL);
  // WSMEM on NVIDIA fp32 (for the rule's layers of several groups): style's @240 17.9 -> 15.3 µs
  // on an H200; in fp16 it lost (22 -> 42).
  device->conv_up2_wsmem = device->gpu->IsNvidia() && !device->fp16;
  Apply(o.conv_up2_wsmem, &device->conv_up2_wsmem);
}

}  // namespace tflite_gles
