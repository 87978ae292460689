#include "delegate/kernels/conv_common.h"

#include <algorithm>
#include <cstdio>

#include "delegate/graph/quantization.h"
#include "delegate/kernels/common.h"
#include "delegate/kernels/literal_weights.h"
#include "egl/shader_source.h"

namespace tflite_gles::kernels {

int ConvOutputSize(abi::Padding padding, int in, int kernel, int stride,
                   int dilation) {
  const int effective = (kernel - 1) * dilation + 1;
  if (padding == abi::kPaddingSame) return (in + stride - 1) / stride;
  return (in - effective + stride) / stride;
}

int ConvPaddingBefore(abi::Padding, int in, int kernel, int stride,
                      int dilation, int out) {
  // TFLite uses one formula for SAME and VALID; VALID's total is never > 0.
  const int effective = (kernel - 1) * dilation + 1;
  const int total = (out - 1) * stride + effective - in;
  return std::max(total, 0) / 2;
}

namespace {
// The candidate in [low, high] (searched from high down) that wastes the
// fewest padded items when `count` items are cut into tiles of that size.
int LeastWastefulTile(long long count, int high, int low) {
  int best = high;
  long long best_padded = (count + high - 1) / high * high;
  for (int size = high - 1; size >= low; --size) {
    const long long padded = (count + size - 1) / size * size;
    if (padded < best_padded) {
      best = size;
      best_padded = padded;
    }
  }
  return best;
}
}  // namespace

// The one place tile shapes are chosen (numbers from
// ../shared/research/llvmpipe.md and docs/perf/log.md):
//  - Large maps (>= 128 output pixels per slice group): pixels on x, 4
//    pixels x 4 output slices (16 accumulators, the measured optimum for
//    pointwise layers), fewer slices when the output has fewer.
//  - Small maps (7x7, 1x1, FC): output slices on x, up to 8 rows x 2 slices
//    (7x2 on 7x7 measured 38 GFLOP/s vs 15 with pixels on x); few rows (FC)
//    take more slices per invocation only while enough invocations remain
//    to fill both cores' 8-lane vectors.
GemmTile ChooseGemmTile(long long rows, int out_slices, int depth_steps,
                        long long min_invocations) {
  GemmTile tile;
  if (min_invocations > 0) {
    // Many-core GPUs (DeviceProfile::min_invocations): the largest register
    // tile that still gives every core work; rows on x (neighbouring
    // invocations read neighbouring pixels, and all read the same weights)
    // unless there are too few rows to fill a warp.
    tile.slices_on_x = rows < 32;
    const int candidates[][2] = {{4, 4}, {4, 2}, {2, 2}, {2, 1}, {1, 1}};
    for (const auto& candidate : candidates) {
      tile.rows = static_cast<int>(std::min<long long>(candidate[0], rows));
      tile.slices = std::min(candidate[1], out_slices);
      const long long invocations = ((rows + tile.rows - 1) / tile.rows) *
                                    ((out_slices + tile.slices - 1) / tile.slices);
      if (invocations >= min_invocations) break;
    }
    return tile;
  }
  if (rows >= 128) {
    tile.rows = 4;
    tile.slices = out_slices >= 4 ? 4 : out_slices >= 2 ? 2 : 1;
    if (out_slices > 4 && out_slices % 4 != 0 && out_slices % 2 == 0) {
      tile.slices = 2;
    }
    tile.slices_on_x = false;
    return tile;
  }
  tile.slices_on_x = true;
  tile.rows = rows >= 4 ? LeastWastefulTile(rows, 8, 4)
                        : static_cast<int>(rows);
  tile.slices = 1;
  for (int slices : {4, 2}) {
    if (tile.rows * slices <= 16 && out_slices / slices >= 128) {
      tile.slices = slices;
      break;
    }
  }
  if (tile.slices == 1 && tile.rows >= 4 && out_slices >= 2) tile.slices = 2;
  return tile;
}

// Depthwise blocks (same place, same sources). The 3x3 path slides a
// 3-row window down a column of BLOCK_H output rows, BLOCK_W wide: width
// buys horizontal reuse (each loaded vec4 feeds 3 outputs per row) and
// height amortizes the window's first rows. The footprint of a block row,
// (BLOCK_W - 1) * stride + 3 input columns, must stay <= 9: Mesa's NIR
// unrolls the loops over it only up to 9 iterations, and a rolled loop
// indexes register arrays dynamically, which llvmpipe scalarizes (footprint
// 10 measured 0.6 GFLOP/s vs 7.3 at 9 on 112x112, docs/perf/log.md). So 7
// wide at stride 1 (MobileNet's maps are all multiples of 7) and 4 at
// stride 2. Maps with >= 32 slices put slices
// on x (llvmpipe vectorizes x; small maps have few blocks). The gathering
// path reuses nothing, so its block only amortizes index math.
DepthwiseBlock ChooseDepthwiseBlock(const Shape4& out, int stride_w,
                                    bool fast_3x3, long long min_invocations) {
  DepthwiseBlock block = ChooseDepthwiseBlockForLlvmpipe(out, stride_w, fast_3x3);
  // Many-core GPUs: shrink the block (height first: the 3x3 path's reuse is
  // along the width) until every core has work.
  auto invocations = [&] {
    return 1LL * out.b * out.slices() * ((out.w + block.width - 1) / block.width) *
           ((out.h + block.height - 1) / block.height);
  };
  while (min_invocations > 0 && invocations() < min_invocations &&
         (block.height > 1 || block.width > 1)) {
    if (block.height > 1) {
      block.height = (block.height + 1) / 2;
    } else {
      block.width = (block.width + 1) / 2;
    }
  }
  return block;
}

namespace {
// 4-8 rows, the fewest padded rows, 7 first: maps that are multiples of 7
// (all of MobileNet's: 112, 56, 28, 14, 7) then get 7-row blocks at every
// size, so that each stride runs one program (shapes are uniforms). 7 rows
// ran as fast as 8 on the 112 and 56 maps (within 3%, docs/perf/log.md,
// "Cold init (coldinit)"); maps of 8k rows keep 8.
int DepthwiseBlockHeight(int rows) {
  int best = 7;
  int best_padded = (rows + 6) / 7 * 7;
  for (int height : {8, 6, 5, 4}) {
    const int padded = (rows + height - 1) / height * height;
    if (padded < best_padded) {
      best = height;
      best_padded = padded;
    }
  }
  return best;
}
}  // namespace

DepthwiseBlock ChooseDepthwiseBlockForLlvmpipe(const Shape4& out, int stride_w,
                                              bool fast_3x3) {
  DepthwiseBlock block;
  block.slices_on_x = out.slices() >= 32;
  if (!fast_3x3) {
    block.width = out.w >= 4 ? 4 : out.w;
    block.height = 1;
    return block;
  }
  const int widest = std::max(1, (9 - 3) / stride_w + 1);
  block.width = out.w <= widest ? out.w : LeastWastefulTile(out.w, widest, 4);
  block.height = out.h <= 8 ? out.h : DepthwiseBlockHeight(out.h);
  return block;
}

std::array<uint32_t, 3> LocalSize2d(uint32_t grid_x, uint32_t grid_y) {
  uint32_t x = 8;
  while (x < 64 && x < grid_x) x *= 2;
  uint32_t y = 1;
  while (x * y < 64 && y < grid_y) y *= 2;
  return {x, y, 1};
}

std::array<uint32_t, 3> GemmGroupLocalSize(uint32_t groups) {
  uint32_t y = 8;
  if (groups <= 16) {
    y = groups;
  } else {
    for (uint32_t d = 16; d >= 4; --d) {
      if (groups % d == 0) {
        y = d;
        break;
      }
    }
  }
  return {8, y, 1};
}

std::vector<float> PackGemmWeights(int out_c, int taps, int in_lanes,
                                   int tile_slices, const WeightAt& weight) {
  const int out_slices = (out_c + 3) / 4;
  const int groups = (out_slices + tile_slices - 1) / tile_slices;
  const int depth = (in_lanes + 3) / 4;
  std::vector<float> packed(
      static_cast<size_t>(groups) * taps * depth * tile_slices * 16, 0.0f);
  size_t i = 0;
  for (int g = 0; g < groups; ++g)
    for (int t = 0; t < taps; ++t)
      for (int d = 0; d < depth; ++d)
        for (int o = 0; o < tile_slices; ++o)
          for (int k = 0; k < 4; ++k)
            for (int lane = 0; lane < 4; ++lane, ++i) {
              const int oc = (g * tile_slices + o) * 4 + lane;
              const int ic = d * 4 + k;
              if (oc < out_c && ic < in_lanes) packed[i] = weight(oc, t, ic);
            }
  return packed;
}

ValueId NewGemmWeights(GraphBuilder& builder, int out_c, int taps, int in_lanes,
                       int tile_slices, const WeightAt& weight, const LazyWeights& lazy) {
  if (lazy.tensor < 0) {
    return builder.NewConstant(PackGemmWeights(out_c, taps, in_lanes, tile_slices, weight));
  }
  const size_t groups = static_cast<size_t>((out_c + 3) / 4 + tile_slices - 1) / tile_slices;
  const size_t floats = groups * taps * ((in_lanes + 3) / 4) * tile_slices * 16;
  const std::string recipe = "gemm weights out_c=" + std::to_string(out_c) +
                             " taps=" + std::to_string(taps) +
                             " in_lanes=" + std::to_string(in_lanes) +
                             " tile_slices=" + std::to_string(tile_slices) + " " + lazy.recipe;
  return builder.NewLazyConstant(floats, recipe, {lazy.tensor}, [=] {
    return PackGemmWeights(out_c, taps, in_lanes, tile_slices, weight);
  });
}

std::vector<float> PackBias(const std::vector<float>& bias, int out_c,
                            int slices) {
  std::vector<float> packed(static_cast<size_t>(slices) * 4, 0.0f);
  for (int c = 0; c < out_c && c < static_cast<int>(bias.size()); ++c) {
    packed[c] = bias[c];
  }
  return packed;
}

Status AddConv2dDispatch(const NodeView& node, GraphBuilder& builder,
                         ValueId in, ValueId out, const ConvWindow& window,
                         const GemmInput* gemm, int in_lanes,
                         const WeightAt& weight, const std::vector<float>& bias,
                         abi::FusedActivation activation, const LazyWeights& lazy,
                         ValueId bias_value) {
  const Shape4 in_shape = builder.shape(in);
  const Shape4 out_shape = builder.shape(out);
  const int taps = gemm ? 1 : window.kernel_h * window.kernel_w;
  const long long rows =
      gemm ? gemm->rows : 1LL * out_shape.b * out_shape.h * out_shape.w;
  const int depth_steps = gemm ? gemm->depth_steps : in_shape.slices();
  GemmTile tile = ChooseGemmTile(rows, out_shape.slices(), depth_steps,
                                 builder.device().min_invocations);
  // DeviceProfile::conv_unrolled_tile: 6 x 4 for 1x1 layers and general ones
  // over several input slices; 8 x 4 for 1x1 layers with >= 16 depth steps
  // (DeepLab's projections 0.84-0.95x, shorter sums gain nothing) unless it
  // leaves > 10 % more lanes of llvmpipe's 8-wide rows idle (palm's 12x12
  // layers ran 1.2x slower so). A general layer over one slice (a first 3x3
  // on RGB) ran 1.5x slower at 6 x 4 (docs/perf/log.md, "llvm5, session 14").
  // 1x1 layers of 3 or of 4k + 2 slices (>= 6) take 3 or 4 slices too, not 2
  // (DeepLab's 12- and 72-channel layers 0.61-0.93x).
  const bool unrolled = builder.device().conv_unrolled_tile && !tile.slices_on_x &&
                        builder.device().min_invocations == 0;
  if (unrolled && gemm && rows >= 128 && tile.slices == 2 && out_shape.slices() >= 3) {
    tile.slices = std::min(4, out_shape.slices());
  }
  if ((gemm || in_shape.slices() > 1) && rows >= 128 && unrolled && tile.slices >= 3) {
    auto lanes = [&](long long tile_rows) {  // rows padded to whole 8-lane rows of tiles
      return (rows + 8 * tile_rows - 1) / (8 * tile_rows) * 8 * tile_rows;
    };
    tile.rows = gemm && depth_steps >= 16 && lanes(8) * 10 <= lanes(6) * 11 ? 8 : 6;
  }
  const std::string& forced = builder.device().conv_tile_override;
  if (gemm && rows >= 128 && !forced.empty()) {
    // "ROWS,SLICES" (or '/'): a sweep's tile; a bad value declines the node.
    int forced_rows = 0, forced_slices = 0;
    char separator = 0;
    if (std::sscanf(forced.c_str(), "%d%c%d", &forced_rows, &separator, &forced_slices) != 3 ||
        (separator != ',' && separator != '/') || forced_rows < 1 || forced_rows > 16 ||
        forced_slices < 1 || forced_slices > 8) {
      return Status::Error("TFLITE_GLES_X_POINTWISE_TILE='" + forced + "' is not ROWS,SLICES");
    }
    tile.rows = forced_rows;
    tile.slices = std::min(forced_slices, out_shape.slices());
    tile.slices_on_x = false;
  }
  // The sum split across a workgroup's z (conv2d.comp K_SPLIT): general
  // convolutions with a long sum (>= 32 tap x slice steps, 8 or more each:
  // at 18 steps a 384->192 layer ran 23 -> 31 µs on an H100, at 36 and up
  // 1.1-1.5x faster; docs/perf/log.md, "perf, session 9")
  // on maps of >= 128 pixels, where the tile above shrinks to one pixel x
  // one slice to find enough invocations.
  // The tile is the device's (DeviceProfile::conv_split_tile); one over its
  // workgroup or shared-memory limits falls back to 4 x 2, 4 parts, 32 wide
  // (3 x 32 x 8 vec4 = 12 KB, 128 invocations: the GLES 3.1 minimums).
  DeviceProfile::ConvSplitTile split =
      FillSplitTile(builder.device().conv_split_tile, rows, out_shape.slices(),
                    1LL * taps * in_shape.slices(), builder.device().min_invocations);
  {
    const egl::GpuInfo* gpu = builder.device().gpu;
    const long long invocations_limit = gpu ? gpu->max_workgroup_invocations : 128;
    const long long shared_limit = gpu ? gpu->max_shared_memory_bytes : 16384;
    const long long shared =
        16LL * std::max(1, split.parts - 1) * split.local_x * split.rows * split.slices;
    if (1LL * split.local_x * split.parts > invocations_limit || shared > shared_limit ||
        split.parts > 64 || (split.row_step != 1 && split.row_step != split.local_x)) {
      split = DeviceProfile::ConvSplitTile();
    }
  }
  const SmemTile smem = ChooseSmemTile(builder.device(), gemm ? nullptr : &window, in_shape,
                                       out_shape);
  const bool k_split = !gemm && smem.local_x == 0 && builder.device().conv_k_split &&
                       rows >= 128 && 1LL * taps * in_shape.slices() >= 8 * split.parts;
  if (smem.local_x > 0) {
    tile.rows = smem.pixels;
    tile.slices = smem.slices;
    tile.slices_on_x = false;
  }
  if (k_split) {
    tile.rows = split.rows;
    tile.slices = std::min(split.slices, out_shape.slices());
    tile.slices_on_x = false;
  }
  const int groups = (out_shape.slices() + tile.slices - 1) / tile.slices;
  const long long row_tiles = (rows + tile.rows - 1) / tile.rows;

  Dispatch dispatch;
  dispatch.shader = "conv2d";
  dispatch.label = node.Describe();
  auto& d = dispatch.defines;
  TFG_ASSIGN_OR_RETURN(std::string act, ActivationDefine(activation));
  if (!act.empty()) d[act] = "";
  if (tile.slices_on_x) d["SLICES_ON_X"] = "";
  d["TILE_ROWS"] = std::to_string(tile.rows);
  d["TILE_SLICES"] = std::to_string(tile.slices);
  d["ROWS"] = std::to_string(rows);
  d["SLICE_GROUPS"] = std::to_string(groups);
  d["IN_S"] = std::to_string(in_shape.slices());
  d["IN_HW"] = std::to_string(in_shape.h * in_shape.w);
  d["OUT_S"] = std::to_string(out_shape.slices());
  d["OUT_C"] = std::to_string(out_shape.c);
  d["OUT_HW"] = std::to_string(out_shape.h * out_shape.w);
  // Shapes are uniforms (the shader's @uniform lines): the ones a path does
  // not read are 0, so that layers sharing a program differ only in them.
  d["IN_H"] = std::to_string(gemm ? 0 : in_shape.h);
  d["IN_W"] = std::to_string(gemm ? 0 : in_shape.w);
  d["OUT_W"] = std::to_string(gemm ? 0 : out_shape.w);
  d["PAD_TOP"] = std::to_string(gemm ? 0 : window.pad_top);
  d["PAD_LEFT"] = std::to_string(gemm ? 0 : window.pad_left);
  d["ROW_PIXELS"] = std::to_string(gemm ? gemm->row_pixels : 0);
  d["DEPTH_STEPS"] = std::to_string(gemm ? gemm->depth_steps : 0);
  d["DEPTH_STRIDE"] = std::to_string(gemm ? gemm->depth_stride : 0);
  if (gemm && builder.device().conv_k_unroll) d["K_UNROLL"] = "2";
  if (!gemm) {
    d["GENERIC"] = "";
    if (in_shape.slices() == 1) d["ONE_INPUT_SLICE"] = "";
    d["KERNEL_H"] = std::to_string(window.kernel_h);
    d["KERNEL_W"] = std::to_string(window.kernel_w);
    d["STRIDE_H"] = std::to_string(window.stride_h);
    d["STRIDE_W"] = std::to_string(window.stride_w);
    d["DILATION_H"] = std::to_string(window.dilation_h);
    d["DILATION_W"] = std::to_string(window.dilation_w);
  }
  // The shader's div_mod() is exact only below this; larger layers get a
  // program of their own with integer divisions by constants.
  dispatch.specialize = rows >= gl::kExactDivModLimit ||
                        (smem.lit && builder.device().conv_smem_lit_spec);
  const uint32_t gx = static_cast<uint32_t>(tile.slices_on_x ? groups : row_tiles);
  const uint32_t gy = static_cast<uint32_t>(tile.slices_on_x ? row_tiles : groups);
  dispatch.grid = {gx, gy, 1};
  dispatch.local = LocalSize2d(gx, gy);
  if (gemm && !tile.slices_on_x && builder.device().gemm_group_block) {
    dispatch.local = GemmGroupLocalSize(gy);
  }
  d["ROW_STEP"] = "1";
  // conv2d.comp writes out up to 16 rows x 8 slices.
  if (builder.device().conv_unrolled_tile && !k_split && smem.local_x == 0 &&
      tile.rows <= 16 && tile.slices <= 8) {
    d["ROWS_UNROLLED"] = "";
  }
  if (builder.device().fp16 && builder.device().fp16_math >= 1) d["MATH_P"] = "mediump";
  if (builder.device().fp16 && builder.device().fp16_math >= 2) d["ACC_P"] = "mediump";
  // Products fused one by one into the accumulators (DeviceProfile::fma_chain)
  // where both have one precision (gemm.comp's rule).
  d["FMA_CHAIN"] = builder.device().fma_chain &&
                           (!builder.device().fp16 || builder.device().fp16_math != 1)
                       ? "1" : "0";
  if (k_split) {
    d["K_SPLIT"] = "";
    d["ROW_STEP"] = std::to_string(split.row_step);
    // KS_WSMEM: the slice group's weights (every step's) in shared memory beside the
    // partial sums, where both fit the device (DeviceProfile::conv_k_split_wsmem_rows).
    const long long weight_vec4s = 1LL * taps * in_shape.slices() * tile.slices * 4;
    const egl::GpuInfo* gpu = builder.device().gpu;
    const long long wsmem_rows = builder.device().conv_k_split_wsmem_rows;
    if (wsmem_rows > 0 && rows >= wsmem_rows &&
        16 * (weight_vec4s + 1LL * std::max(1, split.parts - 1) * split.local_x * tile.rows *
                                 tile.slices) <= (gpu ? gpu->max_shared_memory_bytes : 16384)) {
      d["KS_WSMEM"] = std::to_string(weight_vec4s);
    }
    // Whole workgroups of rows: with a row step of LOCAL_X a workgroup
    // covers LOCAL_X x TILE_ROWS rows, each invocation every LOCAL_X-th.
    const uint32_t local_x = static_cast<uint32_t>(split.local_x);
    dispatch.grid = {(gx + local_x - 1) / local_x * local_x, gy,
                     static_cast<uint32_t>(split.parts)};
    dispatch.local = {local_x, 1, static_cast<uint32_t>(split.parts)};
  }
  if (smem.local_x > 0) {
    d["SMEM_TILE"] = "";
    d["ST_SLICES"] = std::to_string(in_shape.slices());
    if (smem.prefetch) d["ST_PREFETCH"] = "1";
    if (smem.wonce) d["ST_WONCE"] = "1";
    if (smem.db) d["ST_DB"] = "1";
    if (smem.lit) {  // the weights as the program's constants (one slice group: tile.slices)
      const std::vector<float> w = PackGemmWeights(out_shape.c, taps, in_lanes, tile.slices,
                                                   weight);
      d["ST_LIT"] = Vec4Literals(w);
      d["ST_LIT_N"] = std::to_string(w.size() / 4);
      if (smem.lit_groups > 1) d["ST_LIT_G"] = std::to_string(smem.lit_groups);
      if (smem.pair) d["ST_PAIR"] = "1";
      if (builder.device().conv_smem_hoist) d["ST_HOIST"] = "1";
    }
    const uint32_t lx = static_cast<uint32_t>(smem.local_x);
    const uint32_t ly = static_cast<uint32_t>(smem.local_y);
    const uint32_t tile_w = lx * static_cast<uint32_t>(smem.pixels);
    dispatch.grid = {(static_cast<uint32_t>(out_shape.w) + tile_w - 1) / tile_w * lx,
                     (static_cast<uint32_t>(out_shape.h) + ly - 1) / ly * ly,
                     static_cast<uint32_t>(groups)};
    dispatch.local = {lx, ly, 1};
  }
  dispatch.flops = 2LL * rows * out_shape.c * in_lanes * taps;

  ValueId weights = NewGemmWeights(builder, out_shape.c, taps, in_lanes, tile.slices,
                                   weight, lazy);
  // The shader reads the bias at min(slice, OUT_S - 1): a tensor of OUT_S
  // vec4s serves as well as the packed constant.
  ValueId packed_bias =
      bias_value >= 0 ? bias_value
                      : builder.NewConstant(PackBias(bias, out_shape.c, groups * tile.slices));
  dispatch.outputs = {out};
  dispatch.inputs = {in, weights, packed_bias};
  builder.AddDispatch(std::move(dispatch));
  return Status::Ok();
}

Status CheckConvActivation(abi::FusedActivation activation) {
  switch (activation) {
    case abi::kActNone:
    case abi::kActRelu:
    case abi::kActRelu6:
    case abi::kActReluN1To1:
      return Status::Ok();
    case abi::kActTanh:
    case abi::kActSigmoid:
      return Status::Error(
          "fused TANH/SIGMOID: TFLite's CPU kernels ignore it (they only "
          "clamp for the ReLU family), so GPU results would disagree");
    default:
      return Status::Error("fused activation " +
                           std::to_string(static_cast<int>(activation)) +
                           " is not supported");
  }
}

Status CheckLoopBudget(long long iterations, const std::string& what) {
  if (iterations > kMaxLoopIterationsPerInvocation) {
    return Status::Error(what + " needs " + std::to_string(iterations) +
                         " loop iterations per invocation, over llvmpipe's "
                         "limit (" +
                         std::to_string(kMaxLoopIterationsPerInvocation) + ")");
  }
  return Status::Ok();
}

Status CheckConvWindow(abi::Padding padding, int stride_w, int stride_h,
                       int dilation_w, int dilation_h, const Shape4& in,
                       const Shape4& out, int filter_h, int filter_w) {
  constexpr int kLargest = 32767;
  for (int value : {stride_w, stride_h, dilation_w, dilation_h}) {
    if (value < 1 || value > kLargest) {
      return Status::Error("strides and dilations must be in [1, " +
                           std::to_string(kLargest) + "], got " +
                           std::to_string(value));
    }
  }
  if (padding != abi::kPaddingSame && padding != abi::kPaddingValid) {
    return Status::Error("unknown padding " +
                         std::to_string(static_cast<int>(padding)));
  }
  const int expected_h = ConvOutputSize(padding, in.h, filter_h, stride_h, dilation_h);
  const int expected_w = ConvOutputSize(padding, in.w, filter_w, stride_w, dilation_w);
  if (out.b != in.b || out.h != expected_h || out.w != expected_w) {
    return Status::Error("output shape " + out.ToString() +
                         " does not follow from the input and window");
  }
  return Status::Ok();
}

StatusOr<std::shared_ptr<const DeferredFloats>> DeferredFloats::Of(
    const GraphContext& graph, int tensor) {
  TFG_ASSIGN_OR_RETURN(const size_t count, graph.ConstantFloatCount(tensor));
  std::shared_ptr<DeferredFloats> deferred(new DeferredFloats(graph, tensor, count));
  const abi::Tensor& source = graph.context()->tensors[tensor];
  // (A folded DEQUANTIZE's output has no data of its own: read now.)
  const bool plain = source.data != nullptr && !graph.IsQuantizedConstant(tensor) &&
                     (source.type == abi::kFloat32 || source.type == abi::kFloat16);
  if (!plain) {
    TFG_ASSIGN_OR_RETURN(deferred->values_, graph.ConstantFloats(tensor));
    deferred->read_ = true;
  }
  return std::shared_ptr<const DeferredFloats>(std::move(deferred));
}

const std::vector<float>& DeferredFloats::Read() const {
  auto values = graph_.ConstantFloats(tensor_);
  // A plain float constant that was counted cannot fail to be read; should
  // it anyway, zeros of the counted size keep every index in bounds.
  if (values.ok() && values->size() == count_) {
    values_ = std::move(*values);
  } else {
    values_.assign(count_, 0.0f);
  }
  read_ = true;
  return values_;
}

Status CheckWeights(const NodeView& node, const GraphContext& graph, int i,
                    long long expected, const char* what) {
  TFG_RETURN_IF_ERROR(CheckConstantInput(node, graph, i, what));
  const abi::Tensor& weights = node.input(i);
  // int32: a quantized model's bias (scale input x weight scale).
  const bool quantized_weights =
      (IsQuantizedType(weights.type) || weights.type == abi::kInt32) &&
      HasAffineQuantization(weights);
  if (weights.type != abi::kFloat32 && !quantized_weights) {
    // TFLite's float kernels require float32 weights of their own (weights
    // of other types arrive through a DEQUANTIZE, whose output is float32);
    // its integer and hybrid kernels take uint8/int8 weights with affine
    // quantization, which ConstantFloats dequantizes (or refuses, with
    // quantized models off or unsound params).
    return Status::Error(std::string(what) + " (input " + std::to_string(i) +
                         ") is " + TypeName(node.input(i).type) +
                         ", TFLite's float kernel takes float32");
  }
  auto count = graph.ConstantFloatCount(node.input_index(i));
  if (!count.ok()) {
    return count.status().WithContext(std::string(what) + " (input " +
                                      std::to_string(i) + ")");
  }
  if (static_cast<long long>(*count) != expected) {
    return Status::Error(std::string(what) + " holds " +
                         std::to_string(*count) + " values, expected " +
                         std::to_string(expected));
  }
  return Status::Ok();
}

}  // namespace tflite_gles::kernels
