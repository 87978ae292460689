// CONV_2D (float, v1-v6): a specialised 1x1 kernel (stride 1, no padding:
// a plain GEMM over the pixels) tried before the general kernel (any kernel
// size, stride, dilation, SAME/VALID padding, gathered in place without an
// im2col buffer). Both run shaders/conv2d.comp; see conv_common.h.
#include <memory>
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/common.h"
#include "delegate/kernels/conv_common.h"
#include "delegate/kernels/gemm.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

constexpr int kMaxVersion = 6;  // 7+ add quantized-only variants

Status CheckConv(const NodeView& node, const GraphContext& graph,
                 const DeviceProfile& device) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, kMaxVersion));
  TFG_RETURN_IF_ERROR(CheckArity(node, 2, 3, 1));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  const auto* params = node.params<abi::ConvParams>();
  if (params == nullptr) return Status::Error("missing builtin parameters");
  if (!node.has_input(0)) return Status::Error("the input is missing");
  if (!node.has_input(1)) return Status::Error("the filter is missing");
  // TFLite's float CONV_2D requires the bias (conv.cc Prepare: "has_bias").
  if (node.num_inputs() != 3 || !node.has_input(2)) {
    return Status::Error("the bias is missing (TFLite's CONV_2D requires it)");
  }
  if (node.input(0).dims->size != 4 || node.output(0).dims->size != 4) {
    return Status::Error("input and output must be 4-D");
  }
  if (node.input(1).dims == nullptr || node.input(1).dims->size != 4) {
    return Status::Error("filter must be 4-D (OHWI)");
  }
  const Shape4 in = ShapeOf(node.input(0));
  const Shape4 out = ShapeOf(node.output(0));
  const std::vector<int> filter = DimsVector(node.input(1).dims);
  if (filter[3] != in.c) {
    return Status::Error("filter has " + std::to_string(filter[3]) +
                         " input channels for an input of " +
                         std::to_string(in.c) +
                         " (grouped convolution is not supported)");
  }
  if (filter[0] != out.c) {
    return Status::Error("filter has " + std::to_string(filter[0]) +
                         " output channels, the output " + std::to_string(out.c));
  }
  TFG_RETURN_IF_ERROR(kernels::CheckWeights(
      node, graph, 1, 1LL * filter[0] * filter[1] * filter[2] * filter[3],
      "filter"));
  TFG_RETURN_IF_ERROR(kernels::CheckWeights(node, graph, 2, out.c, "bias"));
  TFG_RETURN_IF_ERROR(kernels::CheckConvWindow(
      params->padding, params->stride_width, params->stride_height,
      params->dilation_width_factor, params->dilation_height_factor, in, out,
      filter[1], filter[2]));
  // conv2d.comp loops over taps, and within each over input slices.
  const long long taps = 1LL * filter[1] * filter[2];
  TFG_RETURN_IF_ERROR(kernels::CheckLoopBudget(
      taps == 1 ? in.slices() : taps * (1 + in.slices()),
      "a window of " + std::to_string(taps) + " taps over " +
          std::to_string(in.c) + " channels"));
  return kernels::CheckConvActivation(params->activation);
}

bool IsPointwise(const NodeView& node) {
  const auto* params = node.params<abi::ConvParams>();
  const std::vector<int> filter = DimsVector(node.input(1).dims);
  return filter[1] == 1 && filter[2] == 1 && params->stride_width == 1 &&
         params->stride_height == 1;
}

Status CheckPointwise(const NodeView& node, const GraphContext& graph,
                      const DeviceProfile& device) {
  TFG_RETURN_IF_ERROR(CheckConv(node, graph, device));
  if (!IsPointwise(node)) {
    const std::vector<int> filter = DimsVector(node.input(1).dims);
    return Status::Error("kernel is " + std::to_string(filter[1]) + "x" +
                         std::to_string(filter[2]) + " with stride " +
                         std::to_string(node.params<abi::ConvParams>()->stride_height) +
                         ", not 1x1 stride 1");
  }
  return Status::Ok();
}

// DeviceProfile::broadcast_concat_bias: `in` is written by one channel
// concat of two inputs, one of them a RESIZE of a single pixel `pixel`
// (every output pixel of such a resize is that pixel, bilinear or nearest,
// whatever the corner rules). `x` is the other input; *_first say where
// each one's channels start in `in`.
struct BroadcastConcat {
  ValueId x = -1, pixel = -1;
  int x_first = 0, pixel_first = 0;
};

// The one dispatch that writes `id`, or null.
const Dispatch* OnlyWriter(const GraphBuilder& builder, ValueId id) {
  const Dispatch* writer = nullptr;
  int writers = 0;
  for (const Dispatch& d : builder.dispatches()) {
    for (ValueId o : d.outputs) {
      if (StorageRoot(builder.values(), o) == StorageRoot(builder.values(), id)) {
        ++writers;
        writer = &d;
      }
    }
    for (ValueId o : d.read_write) writers += o == id;
  }
  return writers == 1 ? writer : nullptr;
}

bool FindBroadcastConcat(const GraphBuilder& builder, ValueId in, BroadcastConcat* found) {
  if (builder.shape(in).b != 1 || builder.value(in).storage_of >= 0) return false;
  const Dispatch* concat = OnlyWriter(builder, in);
  if (concat == nullptr || concat->shader != "concat" || concat->inputs.size() != 2 ||
      concat->outputs.size() != 1 || concat->outputs[0] != in ||
      (!concat->defines.count("AXIS_C_SLICES") && !concat->defines.count("AXIS_C_LANES"))) {
    return false;
  }
  for (const auto& [name, value] : concat->defines) {
    if (name.rfind("ACT_", 0) == 0) return false;  // an activation after the join
  }
  for (int k = 0; k < 2; ++k) {
    const ValueId resized = concat->inputs[k];
    const Dispatch* resize = OnlyWriter(builder, resized);
    if (resize == nullptr || resize->shader != "resize" || resize->inputs.size() != 1 ||
        resize->outputs.size() != 1 || resize->outputs[0] != resized ||
        builder.value(resized).storage_of >= 0) {
      continue;
    }
    const ValueId pixel = resize->inputs[0];
    const Shape4 p = builder.shape(pixel);
    if (p.b != 1 || p.h != 1 || p.w != 1 || p.c != builder.shape(resized).c) continue;
    found->x = concat->inputs[1 - k];
    found->pixel = pixel;
    found->pixel_first = k == 0 ? 0 : builder.shape(found->x).c;
    found->x_first = k == 0 ? p.c : 0;
    return true;
  }
  return false;
}

// conv(concat(X, broadcast P)) = conv_X(X) + (conv_P(P) + bias) at every
// pixel: a one-row GEMM makes the second term, which the first reads as its
// bias; the concat and the resize are left unread (passes/dead_dispatches.h).
Status BuildBroadcastConcatConv(const NodeView& node, GraphBuilder& builder,
                                const BroadcastConcat& split, ValueId out,
                                const kernels::WeightAt& weight, const std::vector<float>& bias,
                                const kernels::LazyWeights& lazy) {
  const auto* params = node.params<abi::ConvParams>();
  const Shape4 x_shape = builder.shape(split.x);
  const Shape4 p_shape = builder.shape(split.pixel);
  Shape4 bias_shape;
  bias_shape.c = builder.shape(out).c;
  const ValueId pixel_bias = builder.NewTemporary(bias_shape);
  auto part = [&](int first, int count) {
    return kernels::WeightAt([weight, first, count](int oc, int, int lane) {
      return lane < count ? weight(oc, 0, first + lane) : 0.0f;
    });
  };
  auto part_lazy = [&](int first, int count) {
    kernels::LazyWeights l = lazy;
    l.recipe += " channels " + std::to_string(first) + "+" + std::to_string(count);
    return l;
  };
  kernels::GemmInput p_gemm;  // one row: the pixel's slices, one apart
  p_gemm.rows = 1;
  p_gemm.row_pixels = 1;
  p_gemm.depth_steps = p_shape.slices();
  p_gemm.depth_stride = 1;
  TFG_RETURN_IF_ERROR(kernels::AddConv2dDispatch(
      node, builder, split.pixel, pixel_bias, {}, &p_gemm, 4 * p_gemm.depth_steps,
      part(split.pixel_first, p_shape.c), bias, abi::kActNone,
      part_lazy(split.pixel_first, p_shape.c)));
  kernels::GemmInput x_gemm;
  x_gemm.rows = 1LL * x_shape.b * x_shape.h * x_shape.w;
  x_gemm.row_pixels = x_shape.h * x_shape.w;
  x_gemm.depth_steps = x_shape.slices();
  x_gemm.depth_stride = x_shape.h * x_shape.w;
  if (builder.device().shared_memory_gemm) {
    // NVIDIA's GEMM (gemm.comp) reads the pixel's share as its bias tensor.
    return kernels::AddSharedGemmDispatch(node, builder, split.x, out, x_gemm,
                                          part(split.x_first, x_shape.c), {},
                                          params->activation,
                                          part_lazy(split.x_first, x_shape.c), pixel_bias);
  }
  return kernels::AddConv2dDispatch(node, builder, split.x, out, {}, &x_gemm,
                                    4 * x_gemm.depth_steps, part(split.x_first, x_shape.c),
                                    {}, params->activation,
                                    part_lazy(split.x_first, x_shape.c), pixel_bias);
}

// Build for both candidates: the 1x1 case reads the input as a GEMM.
Status BuildConv(const NodeView& node, GraphBuilder& builder) {
  const auto* params = node.params<abi::ConvParams>();
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  const Shape4 in_shape = builder.shape(in);
  const Shape4 out_shape = builder.shape(out);
  const std::vector<int> filter = DimsVector(node.input(1).dims);
  // Read at the packing, if it runs (kernels::DeferredFloats).
  TFG_ASSIGN_OR_RETURN(auto weights,
                       kernels::DeferredFloats::Of(builder.graph(), node.input_index(1)));
  std::vector<float> bias;
  if (node.has_input(2)) {
    TFG_ASSIGN_OR_RETURN(bias, builder.graph().ConstantFloats(node.input_index(2)));
  }
  const int in_c = in_shape.c;
  const int taps = filter[1] * filter[2];
  // Owned by the lambdas: the packing may run later, at Allocate, or never
  // (the serialization cache holds it).
  kernels::WeightAt weight = [weights, taps, in_c](int oc, int tap, int ic) {
    return weights->values()[(static_cast<size_t>(oc) * taps + tap) * in_c + ic];
  };
  kernels::LazyWeights lazy{node.input_index(1),
                            "conv2d in_c=" + std::to_string(in_c) +
                                " taps=" + std::to_string(taps)};
  if (IsPointwise(node)) {
    kernels::GemmInput gemm;
    gemm.rows = 1LL * in_shape.b * in_shape.h * in_shape.w;
    gemm.row_pixels = in_shape.h * in_shape.w;
    gemm.depth_steps = in_shape.slices();
    gemm.depth_stride = in_shape.h * in_shape.w;
    kernels::WeightAt lane_weight = [weight, in_c](int oc, int, int lane) {
      return lane < in_c ? weight(oc, 0, lane) : 0.0f;
    };
    lazy.recipe += " pointwise";
    BroadcastConcat split;
    if (builder.device().broadcast_concat_bias && FindBroadcastConcat(builder, in, &split)) {
      return BuildBroadcastConcatConv(node, builder, split, out, weight, bias, lazy);
    }
    if (builder.device().shared_memory_gemm) {
      return kernels::AddSharedGemmDispatch(node, builder, in, out, gemm,
                                            lane_weight, bias, params->activation, lazy);
    }
    return kernels::AddConv2dDispatch(node, builder, in, out, {}, &gemm,
                                      4 * gemm.depth_steps, lane_weight, bias,
                                      params->activation, lazy);
  }
  kernels::ConvWindow window;
  window.kernel_h = filter[1];
  window.kernel_w = filter[2];
  window.stride_h = params->stride_height;
  window.stride_w = params->stride_width;
  window.dilation_h = params->dilation_height_factor;
  window.dilation_w = params->dilation_width_factor;
  window.pad_top = kernels::ConvPaddingBefore(
      params->padding, in_shape.h, window.kernel_h, window.stride_h,
      window.dilation_h, out_shape.h);
  window.pad_left = kernels::ConvPaddingBefore(
      params->padding, in_shape.w, window.kernel_w, window.stride_w,
      window.dilation_w, out_shape.w);
  return kernels::AddConv2dDispatch(node, builder, in, out, window, nullptr,
                                    in_c, weight, bias, params->activation, lazy);
}

}  // namespace

void RegisterConvKernels(KernelRegistry& registry) {
  registry.AddBuiltin(
      abi::kTfLiteBuiltinConv2d,
      {"conv_1x1", CheckPointwise, BuildConv,
       "1x1 windows at stride 1: a register-tiled GEMM over the pixels "
       "(shaders/conv2d.comp, or shaders/gemm.comp where the device profile "
       "enables the many-core GEMM), fused NONE/RELU/RELU6/RELU_N1_TO_1; "
       "constant weights and bias; an elementwise op that follows may run in "
       "its epilogue.",
       "any other window or stride (conv_generic takes it), and what "
       "conv_generic declines",
       kMaxVersion});
  registry.AddBuiltin(
      abi::kTfLiteBuiltinConv2d,
      {"conv_generic", CheckConv, BuildConv,
       "Any window, stride, dilation and SAME/VALID padding, gathered in "
       "place (no im2col buffer), fused NONE/RELU/RELU6/RELU_N1_TO_1; "
       "constant OHWI weights and optional bias.",
       "grouped convolution (filter depth != input channels); non-constant "
       "weights or bias; fused TANH/SIGMOID (TFLite's CPU kernels ignore "
       "them); windows over the per-invocation loop budget; output shapes "
       "that do not follow from the window; non-4-D tensors; newer versions",
       kMaxVersion});
}

}  // namespace tflite_gles
