// Shared by the convolution family (conv.cc, depthwise_conv.cc,
// fully_connected.cc, transpose_conv.cc): TFLite's padding rule, the tile
// shapes chosen per layer shape, weight repacking, and the dispatch of
// shaders/conv2d.comp.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "delegate/graph/graph.h"
#include "delegate/abi/node_view.h"
#include "delegate/abi/tflite_builtin.h"

namespace tflite_gles::kernels {

// Output size TFLite computes for an input of `in` pixels.
int ConvOutputSize(abi::Padding padding, int in, int kernel, int stride,
                   int dilation);
// Pixels of zero padding before the first input pixel (TFLite's rule: half
// of the total, the odd one after).
int ConvPaddingBefore(abi::Padding padding, int in, int kernel, int stride,
                      int dilation, int out);

// Register tile of one conv2d.comp invocation (see ChooseGemmTile).
struct GemmTile {
  int rows = 4;         // output pixels (or FC rows) per invocation
  int slices = 2;       // output channel slices per invocation
  bool slices_on_x = false;
};
// min_invocations > 0 (DeviceProfile::min_invocations, many-core GPUs):
// the largest tile that still makes that many invocations.
GemmTile ChooseGemmTile(long long rows, int out_slices, int depth_steps,
                        long long min_invocations = 0);

// Output block of one depthwise_conv2d.comp invocation.
struct DepthwiseBlock {
  int width = 4;
  int height = 2;
  bool slices_on_x = false;
};
// min_invocations as for ChooseGemmTile; 0 keeps llvmpipe's blocks.
DepthwiseBlock ChooseDepthwiseBlock(const Shape4& out, int stride_w,
                                    bool fast_3x3, long long min_invocations = 0);
DepthwiseBlock ChooseDepthwiseBlockForLlvmpipe(const Shape4& out, int stride_w,
                                              bool fast_3x3);

// The geometry of a convolution window. A 1x1, stride 1, unpadded window
// (or an FC) is read as a plain GEMM.
struct ConvWindow {
  int kernel_h = 1, kernel_w = 1;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  int pad_top = 0, pad_left = 0;
};

// A weight by output channel, kernel tap (ky * kernel_w + kx) and input
// lane (the input channel; for a flattened FC the depth step * 4 + lane).
using WeightAt = std::function<float(int out_channel, int tap, int lane)>;

// Weights packed as conv2d.comp reads them: [group][tap][lane / 4]
// [tile_slices][4 input lanes] vec4 of 4 output channels. Lanes and
// channels beyond the real ones are zero.
std::vector<float> PackGemmWeights(int out_c, int taps, int in_lanes,
                                   int tile_slices, const WeightAt& weight);

// One vec4 per output slice, padded with zeros to `slices` slices; `bias`
// may be empty (no bias).
std::vector<float> PackBias(const std::vector<float>& bias, int out_c,
                            int slices);

// How conv2d.comp reads the input (see the shader's header).
struct GemmInput {
  long long rows = 0;
  int row_pixels = 1;
  int depth_steps = 1;
  int depth_stride = 1;
};

// Emits one conv2d.comp dispatch writing `out` from `in`, choosing the
// tile. With `gemm` null the input is read through `window` (GENERIC) and
// `in_lanes` is the input's channel count; with `gemm` set the window is
// ignored and in_lanes = 4 * gemm->depth_steps.
// With `lazy.tensor` set the weights are packed only if the serialization
// cache lacks them (GraphBuilder::NewLazyConstant): `weight` must then own
// what it reads (capture by value), and `lazy.recipe` name how it reads
// `lazy.tensor` (every parameter that changes the values it returns).
// conv2d.comp SMEM_TILE's workgroup (local_x = 0: not used).
struct SmemTile {
  int local_x = 0, local_y = 0;
  int pixels = 1;  // consecutive output pixels per invocation
  int slices = 1;  // output slices per invocation
  // ST_PREFETCH: DeviceProfile::conv_smem_prefetch, where the next slice's tile takes
  // <= 4 vec4s and its weights 1 per invocation (registers held across the taps).
  bool prefetch = false;
  // ST_WONCE / ST_DB: DeviceProfile::conv_smem_wonce / conv_smem_db, where they fit (ST_DB:
  // with ST_WONCE, <= 8 tile vec4s per invocation, in place of ST_PREFETCH).
  bool wonce = false, db = false;
  // ST_LIT: DeviceProfile::conv_smem_lit, lit_groups (ST_LIT_G, <= conv_smem_lit_groups)
  // slice groups of <= 2; ST_PAIR: DeviceProfile::conv_smem_pair, with ST_LIT.
  bool lit = false, pair = false;
  int lit_groups = 1;
};
SmemTile ChooseSmemTile(const DeviceProfile& device, const ConvWindow* window,
                        const Shape4& in, const Shape4& out);
// K_SPLIT's tile for one layer: the device's, refilled on many-core GPUs.
DeviceProfile::ConvSplitTile FillSplitTile(DeviceProfile::ConvSplitTile tile, long long rows,
                                           int out_slices, long long steps,
                                           long long min_invocations);

struct LazyWeights {
  int tensor = -1;
  std::string recipe;
};
Status AddConv2dDispatch(const NodeView& node, GraphBuilder& builder,
                         ValueId in, ValueId out, const ConvWindow& window,
                         const GemmInput* gemm, int in_lanes,
                         const WeightAt& weight, const std::vector<float>& bias,
                         abi::FusedActivation activation,
                         const LazyWeights& lazy = LazyWeights(),
                         ValueId bias_value = -1);
// With `bias_value` >= 0 the bias is that tensor (one vec4 per output
// slice, e.g. a one-pixel GEMM's output) instead of `bias`, which is then
// ignored.
// PackGemmWeights as a constant of `builder`: lazy when `lazy.tensor` is set.
ValueId NewGemmWeights(GraphBuilder& builder, int out_c, int taps, int in_lanes,
                       int tile_slices, const WeightAt& weight, const LazyWeights& lazy);

// Local size for a 2-D grid: x a multiple of 8 (llvmpipe vectorizes only
// along x, 8 lanes at a time) and 64 invocations in all (real GPUs want
// whole warps).
std::array<uint32_t, 3> LocalSize2d(uint32_t grid_x, uint32_t grid_y);
// DeviceProfile::gemm_group_block's workgroup for a grid of grid_x pixel
// tiles by `groups` slice groups: 8 tiles x the groups, or the largest
// divisor of them from 4 to 16 (else 8), so that few invocations fall
// past the last group.
std::array<uint32_t, 3> GemmGroupLocalSize(uint32_t groups);

// The fused activations the convolution family runs: the ReLU family and
// none. TFLite's CPU kernels of these ops apply a fused activation only as a
// clamp, so they ignore TANH and SIGMOID; the GPU would disagree with them,
// so such nodes stay on the CPU.
Status CheckConvActivation(abi::FusedActivation activation);

// Declines a layer whose invocations would loop `iterations` times in all
// (llvmpipe's per-invocation loop limit, kernels::
// kMaxLoopIterationsPerInvocation); `what` names the loop for the message.
Status CheckLoopBudget(long long iterations, const std::string& what);

// The window parameters of CONV_2D / DEPTHWISE_CONV_2D: strides and
// dilations in TFLite's CPU range [1, 32767] (a model the CPU refuses must
// not run here, and larger values overflow the window arithmetic), a known
// padding, and an output shape that follows from input and window.
Status CheckConvWindow(abi::Padding padding, int stride_w, int stride_h,
                       int dilation_w, int dilation_h, const Shape4& in,
                       const Shape4& out, int filter_h, int filter_w);

// The float values of a constant weight tensor, read from the model at
// their first use: the packing, which a filled serialization cache skips, so
// a filled start copies no weights (17 MB for the MobileNet v1 1.0
// stand-in; docs/perf/log.md, "cold2"). Keeps a copy of the GraphContext (a
// pointer and two small maps): the model's tensors outlive the kernels, a
// later Prepare's context does not matter. Constants that are not plain
// float32/float16 (dequantized ones) are read at once, so that reading can
// never fail later, where no error can be returned.
class DeferredFloats {
 public:
  static StatusOr<std::shared_ptr<const DeferredFloats>> Of(const GraphContext& graph,
                                                           int tensor);
  // Inline: the packing calls it for every weight.
  const std::vector<float>& values() const { return read_ ? values_ : Read(); }

 private:
  const std::vector<float>& Read() const;
  DeferredFloats(const GraphContext& graph, int tensor, size_t count)
      : graph_(graph), tensor_(tensor), count_(count) {}
  GraphContext graph_;
  int tensor_;
  size_t count_;
  mutable std::vector<float> values_;
  mutable bool read_ = false;
};

// Checks that input `i` holds float weights of `expected` elements.
Status CheckWeights(const NodeView& node, const GraphContext& graph, int i,
                    long long expected, const char* what);

}  // namespace tflite_gles::kernels
