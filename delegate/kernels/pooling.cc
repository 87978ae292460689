// AVERAGE_POOL_2D, MAX_POOL_2D and MediaPipe's custom ops
// MaxPoolingWithArgmax2D and MaxUnpooling2D: shaders/pooling.comp and
// shaders/max_unpooling.comp.
//
// The MediaPipe ops keep their parameters as a raw TfLitePoolParams struct in
// custom_initial_data (not a flexbuffer), the same layout as the builtin
// pools' builtin_data (abi::PoolParams). MaxPoolingWithArgmax2D writes the
// pooled values and, as floats, the in-window index of each maximum;
// MaxUnpooling2D puts each value back at that index inside an output of
// (H * filter_h, W * filter_w).
#include <cstring>
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/common.h"
#include "delegate/kernels/mean.h"

namespace tflite_gles {
namespace {

using kernels::AddShapeDefines;
using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

constexpr const char kArgmaxOpName[] = "MaxPoolingWithArgmax2D";
constexpr const char kUnpoolOpName[] = "MaxUnpooling2D";

enum class PoolKind { kAverage, kMax, kMaxArgmax, kUnpool };

PoolKind KindOf(const NodeView& node) {
  if (node.op() == abi::kTfLiteBuiltinAveragePool2d) return PoolKind::kAverage;
  if (node.op() == abi::kTfLiteBuiltinMaxPool2d) return PoolKind::kMax;
  return node.custom_name() == kArgmaxOpName ? PoolKind::kMaxArgmax
                                             : PoolKind::kUnpool;
}

// The pool parameters: builtin_data for builtin ops, the raw struct in
// custom_initial_data for the MediaPipe ops. Only the fields up to the
// activation are read; `computed` belongs to the CPU kernel.
StatusOr<abi::PoolParams> ParamsOf(const NodeView& node) {
  abi::PoolParams params{};
  if (node.op() != abi::kTfLiteBuiltinCustom) {
    const auto* builtin = node.params<abi::PoolParams>();
    if (builtin == nullptr) return Status::Error("missing builtin parameters");
    params = *builtin;
    return params;
  }
  constexpr int kNeeded = offsetof(abi::PoolParams, computed);
  if (node.custom_data() == nullptr || node.custom_data_size() < kNeeded) {
    return Status::Error("custom options hold " +
                         std::to_string(node.custom_data_size()) +
                         " bytes, a TfLitePoolParams needs at least " +
                         std::to_string(kNeeded));
  }
  std::memcpy(&params, node.custom_data(), kNeeded);
  return params;
}

// Output size and padding before the data along one axis, as TFLite's
// pooling kernels compute them.
struct AxisGeometry {
  int out = 0;
  int pad = 0;
};

AxisGeometry PoolAxis(abi::Padding padding, int in, int filter, int stride) {
  AxisGeometry axis;
  axis.out = padding == abi::kPaddingSame ? (in + stride - 1) / stride
                                          : (in - filter + stride) / stride;
  const int total = (axis.out - 1) * stride + filter - in;
  axis.pad = total > 0 ? total / 2 : 0;
  return axis;
}

// MaxUnpooling2D derives its padding the other way round: the pooled map
// (`in`) is what a pool over the unpooled one (`out`) would have produced.
int UnpoolPadding(int in, int out, int filter, int stride) {
  const int total = (in - 1) * stride + filter - out;
  return total > 0 ? total / 2 : 0;
}

// An average pool with one window covering the whole unpadded map is a
// mean over H and W: that kernel splits big maps over more invocations
// (and keeps them under llvmpipe's loop limit).
bool IsGlobalAverage(PoolKind kind, const abi::PoolParams& params,
                     const Shape4& in) {
  if (kind != PoolKind::kAverage) return false;
  const AxisGeometry y = PoolAxis(params.padding, in.h, params.filter_height,
                                  params.stride_height);
  const AxisGeometry x = PoolAxis(params.padding, in.w, params.filter_width,
                                  params.stride_width);
  return y.out == 1 && x.out == 1 && y.pad == 0 && x.pad == 0 &&
         params.filter_height >= in.h && params.filter_width >= in.w;
}

Status CheckParams(const abi::PoolParams& params, PoolKind kind) {
  if (params.filter_width < 1 || params.filter_height < 1 ||
      params.stride_width < 1 || params.stride_height < 1) {
    return Status::Error("filter " + std::to_string(params.filter_height) +
                         "x" + std::to_string(params.filter_width) +
                         " and strides " + std::to_string(params.stride_height) +
                         "x" + std::to_string(params.stride_width) +
                         " must be positive");
  }
  // Bounded so that no size computed from them overflows an int (an
  // implausible model, but it must be declined, not computed wrongly).
  constexpr int kLargest = 1 << 16;
  if (params.filter_width > kLargest || params.filter_height > kLargest ||
      params.stride_width > kLargest || params.stride_height > kLargest) {
    return Status::Error("filter or stride above " + std::to_string(kLargest));
  }
  // MaxUnpooling2D's kernel derives its padding from the shapes and never
  // reads this field, but a value that is no TfLitePadding is not a model
  // MediaPipe wrote: declined like any other out-of-range option.
  if (params.padding != abi::kPaddingSame &&
      params.padding != abi::kPaddingValid) {
    return Status::Error("padding " +
                         std::to_string(static_cast<int>(params.padding)) +
                         " is neither SAME nor VALID");
  }
  if (kind == PoolKind::kUnpool) return Status::Ok();  // no activation applied
  // The CPU pools clamp to an activation range: TANH and SIGMOID have none
  // there, so they are declined rather than applied differently.
  switch (params.activation) {
    case abi::kActNone:
    case abi::kActRelu:
    case abi::kActRelu6:
    case abi::kActReluN1To1:
      return Status::Ok();
    default:
      return Status::Error("fused activation " +
                           std::to_string(static_cast<int>(params.activation)) +
                           " is not a clamp the pooling kernels apply");
  }
}

Status Check(const NodeView& node, const GraphContext& graph,
             const DeviceProfile& device) {
  const PoolKind kind = KindOf(node);
  const int max_version = node.op() == abi::kTfLiteBuiltinCustom ? 1 : 3;
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, max_version));
  TFG_RETURN_IF_ERROR(CheckArity(node, kind == PoolKind::kUnpool ? 2 : 1,
                                 kind == PoolKind::kUnpool ? 2 : 1,
                                 kind == PoolKind::kMaxArgmax ? 2 : 1));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) return Status::Error("an input is missing");
    TFG_RETURN_IF_ERROR(kernels::CheckNotConstantInput(node, graph, i));
    if (node.input(i).dims->size != 4) {
      return Status::Error("input " + std::to_string(i) + " has rank " +
                           std::to_string(node.input(i).dims->size) +
                           ", pooling needs 4");
    }
  }
  TFG_ASSIGN_OR_RETURN(abi::PoolParams params, ParamsOf(node));
  TFG_RETURN_IF_ERROR(CheckParams(params, kind));

  const Shape4 in = ShapeOf(node.input(0));
  Shape4 expected = in;
  if (kind == PoolKind::kUnpool) {
    if (ShapeOf(node.input(1)) != in) {
      return Status::Error("indices shape " + ShapeOf(node.input(1)).ToString() +
                           " differs from the values shape " + in.ToString());
    }
    const long long out_h = 1LL * in.h * params.filter_height;
    const long long out_w = 1LL * in.w * params.filter_width;
    if (out_h > (1 << 24) || out_w > (1 << 24)) {
      return Status::Error("unpooled map " + std::to_string(out_h) + "x" +
                           std::to_string(out_w) + " is implausibly large");
    }
    expected.h = static_cast<int>(out_h);
    expected.w = static_cast<int>(out_w);
  } else {
    expected.h = PoolAxis(params.padding, in.h, params.filter_height,
                          params.stride_height).out;
    expected.w = PoolAxis(params.padding, in.w, params.filter_width,
                          params.stride_width).out;
    if (expected.h < 1 || expected.w < 1) {
      return Status::Error("the filter is larger than the unpadded input " +
                           in.ToString());
    }
  }
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (ShapeOf(node.output(i)) != expected || node.output(i).dims->size != 4) {
      return Status::Error("output " + std::to_string(i) + " shape " +
                           ShapeOf(node.output(i)).ToString() +
                           " is not the pooled shape " + expected.ToString());
    }
  }
  if (IsGlobalAverage(kind, params, in)) return kernels::CheckSpatialMean(in);
  // The window loop: rows, and the columns inside each row.
  const long long iterations =
      kind == PoolKind::kUnpool
          ? 1LL * ((params.filter_height + params.stride_height - 1) /
                   params.stride_height) *
                (((params.filter_width + params.stride_width - 1) /
                  params.stride_width) + 1)
          : 1LL * params.filter_height * (params.filter_width + 1LL);
  if (iterations > kernels::kMaxLoopIterationsPerInvocation) {
    return Status::Error("a " + std::to_string(params.filter_height) + "x" +
                         std::to_string(params.filter_width) +
                         " window needs " + std::to_string(iterations) +
                         " loop iterations in one invocation, over the limit of " +
                         std::to_string(kernels::kMaxLoopIterationsPerInvocation) +
                         " (llvmpipe stops longer loops silently)");
  }
  // fp16 holds integers exactly only up to 2048: larger argmax indices
  // would come back as a neighbouring position.
  if (device.fp16 && (kind == PoolKind::kMaxArgmax || kind == PoolKind::kUnpool) &&
      1LL * params.filter_height * params.filter_width > 2048) {
    return Status::Error("a " + std::to_string(params.filter_height) + "x" +
                         std::to_string(params.filter_width) +
                         " window has indices fp16 cannot hold exactly");
  }
  return Status::Ok();
}

Status Build(const NodeView& node, GraphBuilder& builder) {
  const PoolKind kind = KindOf(node);
  TFG_ASSIGN_OR_RETURN(abi::PoolParams params, ParamsOf(node));
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  const Shape4 out_shape = builder.shape(out);
  const Shape4 in_shape = builder.shape(in);

  if (IsGlobalAverage(kind, params, in_shape)) {
    TFG_ASSIGN_OR_RETURN(std::string act,
                         kernels::ActivationDefine(params.activation));
    return kernels::BuildSpatialMean(node.Describe(), in, out, act, builder);
  }
  Dispatch dispatch = kernels::ElementwiseDispatch(
      kind == PoolKind::kUnpool ? "max_unpooling" : "pooling", out_shape,
      builder.device());
  dispatch.label = node.Describe();
  auto& defines = dispatch.defines;
  defines["TOTAL"] = std::to_string(out_shape.vec4_count());
  defines["IN_H"] = std::to_string(in_shape.h);
  defines["IN_W"] = std::to_string(in_shape.w);
  defines["OUT_H"] = std::to_string(out_shape.h);
  defines["OUT_W"] = std::to_string(out_shape.w);
  defines["OUT_S"] = std::to_string(out_shape.slices());
  defines["OUT_C"] = std::to_string(out_shape.c);
  defines["FILTER_H"] = std::to_string(params.filter_height);
  defines["FILTER_W"] = std::to_string(params.filter_width);
  defines["STRIDE_H"] = std::to_string(params.stride_height);
  defines["STRIDE_W"] = std::to_string(params.stride_width);
  const long long window = 1LL * params.filter_height * params.filter_width;
  if (kind == PoolKind::kUnpool) {
    defines["PAD_H"] = std::to_string(UnpoolPadding(
        in_shape.h, out_shape.h, params.filter_height, params.stride_height));
    defines["PAD_W"] = std::to_string(UnpoolPadding(
        in_shape.w, out_shape.w, params.filter_width, params.stride_width));
    TFG_ASSIGN_OR_RETURN(ValueId indices, builder.Input(node, 1));
    dispatch.inputs = {in, indices};
    dispatch.outputs = {out};
    dispatch.flops = out_shape.elements();
    builder.AddDispatch(std::move(dispatch));
    return Status::Ok();
  }
  defines["PAD_H"] = std::to_string(PoolAxis(params.padding, in_shape.h,
                                             params.filter_height,
                                             params.stride_height).pad);
  defines["PAD_W"] = std::to_string(PoolAxis(params.padding, in_shape.w,
                                             params.filter_width,
                                             params.stride_width).pad);
  TFG_ASSIGN_OR_RETURN(std::string act, kernels::ActivationDefine(params.activation));
  if (!act.empty()) defines[act] = "";
  dispatch.outputs = {out};
  if (kind == PoolKind::kAverage) {
    defines["POOL_AVERAGE"] = "";
  } else if (kind == PoolKind::kMax) {
    defines["POOL_MAX"] = "";
  } else {
    defines["POOL_MAX_ARGMAX"] = "";
    TFG_ASSIGN_OR_RETURN(ValueId indices, builder.Output(node, 1));
    dispatch.outputs.push_back(indices);
  }
  dispatch.inputs = {in};
  dispatch.flops = out_shape.elements() * window;
  builder.AddDispatch(std::move(dispatch));
  return Status::Ok();
}

}  // namespace

void RegisterPoolingKernels(KernelRegistry& registry) {
  constexpr const char* kPoolDeclines =
      "filters or strides below 1 or above 2^16; paddings other than "
      "SAME/VALID; fused TANH/SIGMOID (not a clamp TFLite's pools apply); "
      "windows over the per-invocation loop budget; output shapes that do "
      "not follow from the window; non-4-D tensors; newer versions";
  registry.AddBuiltin(
      abi::kTfLiteBuiltinAveragePool2d,
      {"pooling", Check, Build,
       "Any window and stride, SAME/VALID padding (the average counts only "
       "the pixels inside the input, as TFLite's), fused "
       "NONE/RELU/RELU6/RELU_N1_TO_1.",
       kPoolDeclines, 3});
  registry.AddBuiltin(
      abi::kTfLiteBuiltinMaxPool2d,
      {"pooling", Check, Build,
       "Any window and stride, SAME/VALID padding (padding never wins), "
       "fused NONE/RELU/RELU6/RELU_N1_TO_1.",
       kPoolDeclines, 3});
  registry.AddCustom(
      kArgmaxOpName,
      {"pooling", Check, Build,
       "MediaPipe's max pool that also writes, as floats, the in-window "
       "index of each maximum; its parameters are a raw TfLitePoolParams in "
       "the custom data.",
       "custom data shorter than TfLitePoolParams; windows of more than 2048 "
       "taps with fp16 storage (indices would not be exact); and what the "
       "builtin pools decline",
       1});
  registry.AddCustom(
      kUnpoolOpName,
      {"max_unpooling", Check, Build,
       "MediaPipe's unpooling: each value goes back to its recorded "
       "in-window index inside an output of (H * filter_h, W * filter_w).",
       "custom data shorter than TfLitePoolParams; indices shaped unlike "
       "the values; output sizes other than the unpooled map; windows of "
       "more than 2048 taps with fp16 storage",
       1});
}

}  // namespace tflite_gles
