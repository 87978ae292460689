// DEPTHWISE_CONV_2D (float, v1-v2): any window, stride, dilation, depth
// multiplier and SAME/VALID padding, with a fast path for 3x3 windows of
// multiplier 1 that reuses each loaded input across an output block
// (shaders/depthwise_conv2d.comp).
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/common.h"
#include "delegate/kernels/conv_common.h"
#include "egl/shader_source.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

constexpr int kMaxVersion = 2;  // 3+ are quantized variants

Status CheckDepthwise(const NodeView& node, const GraphContext& graph,
                      const DeviceProfile& device) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, kMaxVersion));
  TFG_RETURN_IF_ERROR(CheckArity(node, 2, 3, 1));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  const auto* params = node.params<abi::DepthwiseConvParams>();
  if (params == nullptr) return Status::Error("missing builtin parameters");
  if (!node.has_input(0)) return Status::Error("the input is missing");
  if (!node.has_input(1)) return Status::Error("the filter is missing");
  if (node.num_inputs() == 3 && !node.has_input(2)) {
    // TFLite takes a third input as the bias and reads it.
    return Status::Error("input 2 (the bias) is listed but absent (-1)");
  }
  if (node.input(0).dims->size != 4 || node.output(0).dims->size != 4) {
    return Status::Error("input and output must be 4-D");
  }
  if (node.input(1).dims == nullptr || node.input(1).dims->size != 4 ||
      node.input(1).dims->data[0] != 1) {
    return Status::Error("filter must be 1xHxWxC");
  }
  const Shape4 in = ShapeOf(node.input(0));
  const Shape4 out = ShapeOf(node.output(0));
  const std::vector<int> filter = DimsVector(node.input(1).dims);
  if (filter[3] != out.c || out.c % in.c != 0) {
    return Status::Error("filter channels " + std::to_string(filter[3]) +
                         " and output channels " + std::to_string(out.c) +
                         " must be equal and a multiple of the input's " +
                         std::to_string(in.c));
  }
  // TFLite's kernel: depth_multiplier is redundant and must agree with the
  // shapes (depthwise_conv.cc Prepare).
  if (1LL * params->depth_multiplier * in.c != filter[3]) {
    return Status::Error("depth_multiplier " + std::to_string(params->depth_multiplier) +
                         " times the input's " + std::to_string(in.c) +
                         " channels is not the filter's " + std::to_string(filter[3]));
  }
  TFG_RETURN_IF_ERROR(kernels::CheckWeights(
      node, graph, 1, 1LL * filter[1] * filter[2] * filter[3], "filter"));
  if (node.has_input(2)) {
    if (node.input(2).dims == nullptr || node.input(2).dims->size != 1) {
      return Status::Error("the bias must be 1-D");
    }
    TFG_RETURN_IF_ERROR(kernels::CheckWeights(node, graph, 2, out.c, "bias"));
  }
  TFG_RETURN_IF_ERROR(kernels::CheckConvWindow(
      params->padding, params->stride_width, params->stride_height,
      params->dilation_width_factor, params->dilation_height_factor, in, out,
      filter[1], filter[2]));
  TFG_RETURN_IF_ERROR(kernels::CheckLoopBudget(
      1LL * filter[1] * filter[2] * 8, "a window of " +
                                            std::to_string(filter[1]) + "x" +
                                            std::to_string(filter[2])));
  return kernels::CheckConvActivation(params->activation);
}

Status BuildDepthwise(const NodeView& node, GraphBuilder& builder) {
  const auto* params = node.params<abi::DepthwiseConvParams>();
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  const Shape4 in_shape = builder.shape(in);
  const Shape4 out_shape = builder.shape(out);
  const std::vector<int> filter = DimsVector(node.input(1).dims);
  const int kernel_h = filter[1], kernel_w = filter[2];
  const int multiplier = out_shape.c / in_shape.c;
  TFG_ASSIGN_OR_RETURN(std::vector<float> weights,
                       builder.graph().ConstantFloats(node.input_index(1)));
  std::vector<float> bias;
  if (node.has_input(2)) {
    TFG_ASSIGN_OR_RETURN(bias, builder.graph().ConstantFloats(node.input_index(2)));
  }

  const int dilation_h = params->dilation_height_factor;
  const int dilation_w = params->dilation_width_factor;
  const bool dilated = dilation_h > 1 || dilation_w > 1;
  // Dilated 3x3 windows at stride 1 slide over outputs a dilation apart
  // (depthwise_conv2d.comp) where the device asks for it
  // (DeviceProfile::dilated_depthwise_reuse); otherwise they gather.
  const bool fast = kernel_h == 3 && kernel_w == 3 && multiplier == 1 &&
                    params->stride_height <= 2 &&
                    (!dilated || (builder.device().dilated_depthwise_reuse &&
                                  params->stride_height == 1 &&
                                  params->stride_width == 1));
  // A dilated block covers outputs `dilation` apart: it is chosen for the
  // lattice of one phase (every dilation-th row and column), and each
  // phase has its own blocks.
  Shape4 lattice = out_shape;
  if (fast && dilated) {
    lattice.h = (out_shape.h + dilation_h - 1) / dilation_h;
    lattice.w = (out_shape.w + dilation_w - 1) / dilation_w;
  }
  const kernels::DepthwiseBlock block =
      kernels::ChooseDepthwiseBlock(lattice, params->stride_width, fast,
                                    builder.device().min_invocations);
  const int phases_h = fast && dilated ? dilation_h : 1;
  const int phases_w = fast && dilated ? dilation_w : 1;
  const int blocks_x = phases_w * ((lattice.w + block.width - 1) / block.width);
  const int blocks_y = phases_h * ((lattice.h + block.height - 1) / block.height);
  const int blocks = out_shape.b * blocks_x * blocks_y;

  Dispatch dispatch;
  dispatch.shader = "depthwise_conv2d";
  dispatch.label = node.Describe();
  auto& d = dispatch.defines;
  TFG_ASSIGN_OR_RETURN(std::string act,
                       kernels::ActivationDefine(params->activation));
  if (!act.empty()) d[act] = "";
  if (fast) d["FAST_3X3"] = "";
  d["SLICES_ON_X"] = block.slices_on_x ? "1" : "0";
  d["BLOCK_W"] = std::to_string(block.width);
  d["BLOCK_H"] = std::to_string(block.height);
  d["BLOCKS_X"] = std::to_string(blocks_x);
  d["BLOCKS_Y"] = std::to_string(blocks_y);
  d["BLOCKS"] = std::to_string(blocks);
  d["OUT_S"] = std::to_string(out_shape.slices());
  d["OUT_C"] = std::to_string(out_shape.c);
  d["OUT_H"] = std::to_string(out_shape.h);
  d["OUT_W"] = std::to_string(out_shape.w);
  d["IN_S"] = std::to_string(in_shape.slices());
  d["IN_H"] = std::to_string(in_shape.h);
  d["IN_W"] = std::to_string(in_shape.w);
  d["STRIDE_H"] = std::to_string(params->stride_height);
  d["STRIDE_W"] = std::to_string(params->stride_width);
  d["PAD_TOP"] = std::to_string(kernels::ConvPaddingBefore(
      params->padding, in_shape.h, kernel_h, params->stride_height,
      params->dilation_height_factor, out_shape.h));
  d["PAD_LEFT"] = std::to_string(kernels::ConvPaddingBefore(
      params->padding, in_shape.w, kernel_w, params->stride_width,
      params->dilation_width_factor, out_shape.w));
  if (fast && dilated) {
    d["DILATION_H"] = std::to_string(dilation_h);
    d["DILATION_W"] = std::to_string(dilation_w);
  }
  if (!fast) {
    d["KERNEL_H"] = std::to_string(kernel_h);
    d["KERNEL_W"] = std::to_string(kernel_w);
    d["DILATION_H"] = std::to_string(params->dilation_height_factor);
    d["DILATION_W"] = std::to_string(params->dilation_width_factor);
    d["MULTIPLIER"] = std::to_string(multiplier);
  }
  const uint32_t slices = static_cast<uint32_t>(out_shape.slices());
  const uint32_t gx = block.slices_on_x ? slices : static_cast<uint32_t>(blocks);
  const uint32_t gy = block.slices_on_x ? static_cast<uint32_t>(blocks) : slices;
  dispatch.grid = {gx, gy, 1};
  // The shader's div_mod() is exact only below this (egl/shader_source.h).
  dispatch.specialize = blocks >= gl::kExactDivModLimit;
  // llvmpipe (min_invocations 0): one local size for every layer, so that
  // layers of one block shape share a program whichever axis their slices
  // are on. 32 lanes along x: a multiple of llvmpipe's 8, and no more than
  // the fewest slices it puts on x (32); y stays 1 because a 7x7 map has
  // one block per slice. Measured as fast as LocalSize2d's 64 or 32x2
  // (docs/perf/log.md, "Cold init (coldinit)").
  dispatch.local = builder.device().min_invocations == 0
                       ? std::array<uint32_t, 3>{32, 1, 1}
                       : kernels::LocalSize2d(gx, gy);
  dispatch.flops = 2LL * out_shape.elements() * kernel_h * kernel_w;

  // [out slice][tap] vec4: lane j of slice s holds channel 4s + j.
  const int taps = kernel_h * kernel_w;
  std::vector<float> packed(static_cast<size_t>(out_shape.slices()) * taps * 4,
                            0.0f);
  for (int c = 0; c < out_shape.c; ++c) {
    for (int t = 0; t < taps; ++t) {
      packed[(static_cast<size_t>(c / 4) * taps + t) * 4 + c % 4] =
          weights[static_cast<size_t>(t) * out_shape.c + c];
    }
  }
  ValueId packed_weights = builder.NewConstant(std::move(packed));
  ValueId packed_bias = builder.NewConstant(
      kernels::PackBias(bias, out_shape.c, out_shape.slices()));
  dispatch.outputs = {out};
  dispatch.inputs = {in, packed_weights, packed_bias};
  builder.AddDispatch(std::move(dispatch));
  return Status::Ok();
}

}  // namespace

void RegisterDepthwiseConvKernels(KernelRegistry& registry) {
  registry.AddBuiltin(
      abi::kTfLiteBuiltinDepthwiseConv2d,
      {"depthwise_conv", CheckDepthwise, BuildDepthwise,
       "Any window, stride, dilation, depth multiplier and SAME/VALID "
       "padding, fused NONE/RELU/RELU6/RELU_N1_TO_1; 3x3 windows of "
       "multiplier 1 (stride <= 2, no dilation; on devices that ask for it "
       "also dilated at stride 1) reuse each loaded input across an output "
       "block; constant 1xHxWxC weights, optional bias.",
       "filters that are not 1xHxWxC or channels that do not match the "
       "depth multiplier; non-constant weights or bias; fused TANH/SIGMOID; "
       "windows over the per-invocation loop budget; output shapes that do "
       "not follow from the window; non-4-D tensors; newer versions",
       kMaxVersion});
}

}  // namespace tflite_gles
