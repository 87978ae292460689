// TRANSPOSE_CONV (float, v1-v5) and MediaPipe's custom
// Convolution2DTransposeBias: one gather kernel, shaders/transpose_conv.comp.
//
// The two differ in their operands and padding rule:
//  - TRANSPOSE_CONV: inputs (output_shape, weights OHWI, input[, bias]);
//    padding from TFLite's forward-conv rule applied to the output size.
//  - Convolution2DTransposeBias: inputs (input, weights OHWI, bias); its
//    custom_initial_data is MediaPipe's copy of TfLiteTransposeConvParams as
//    it was in 2019: int32 padding (1 SAME, 2 VALID), stride_width,
//    stride_height; SAME pads max(0, k - (in - 1) % s - 1) in total, half of
//    it (rounded down) before (mediapipe/util/tflite/operations/
//    transpose_conv_bias.cc).
#include <algorithm>
#include <cstring>
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/common.h"
#include "delegate/kernels/conv_common.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

constexpr char kMediaPipeOp[] = "Convolution2DTransposeBias";
constexpr int kMaxVersion = 5;

// Everything the shader needs, from either op.
struct TransposeSpec {
  int input = 0, weights = 1, bias = -1;  // node input positions
  abi::Padding padding = abi::kPaddingSame;
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0;
  abi::FusedActivation activation = abi::kActNone;
};

bool IsMediaPipe(const NodeView& node) {
  return node.op() == abi::kTfLiteBuiltinCustom;
}

StatusOr<TransposeSpec> ReadSpec(const NodeView& node) {
  TransposeSpec spec;
  int32_t fields[3] = {0, 0, 0};
  if (IsMediaPipe(node)) {
    TFG_RETURN_IF_ERROR(CheckArity(node, 3, 3, 1));
    if (node.custom_data() == nullptr ||
        node.custom_data_size() < static_cast<int>(sizeof(fields))) {
      return Status::Error("custom data holds " +
                           std::to_string(node.custom_data_size()) +
                           " bytes, expected >= 12 (padding, strides)");
    }
    std::memcpy(fields, node.custom_data(), sizeof(fields));
    spec.padding = static_cast<abi::Padding>(fields[0]);
    spec.stride_w = fields[1];
    spec.stride_h = fields[2];
    spec.input = 0;
    spec.weights = 1;
    spec.bias = 2;
  } else {
    TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, kMaxVersion));
    TFG_RETURN_IF_ERROR(CheckArity(node, 3, 4, 1));
    const auto* params = node.params<abi::TransposeConvParams>();
    if (params == nullptr) return Status::Error("missing builtin parameters");
    spec.padding = params->padding;
    spec.stride_w = params->stride_width;
    spec.stride_h = params->stride_height;
    spec.activation = params->activation;
    spec.input = 2;
    spec.weights = 1;
    spec.bias = node.has_input(3) ? 3 : -1;
  }
  if (spec.padding != abi::kPaddingSame && spec.padding != abi::kPaddingValid) {
    return Status::Error("unknown padding " +
                         std::to_string(static_cast<int>(spec.padding)));
  }
  if (spec.stride_w < 1 || spec.stride_h < 1) {
    return Status::Error("strides must be >= 1");
  }
  // TFLite's TRANSPOSE_CONV refuses strides above INT16_MAX at Prepare (its
  // kernels keep them as int16), and the CPU stand-in of the MediaPipe op is
  // that kernel: decline what it refuses.
  constexpr int kInt16Max = 32767;
  if (spec.stride_w > kInt16Max || spec.stride_h > kInt16Max) {
    return Status::Error("stride " + std::to_string(spec.stride_h) + "x" +
                         std::to_string(spec.stride_w) +
                         " above INT16_MAX (TFLite's TRANSPOSE_CONV refuses it)");
  }
  return spec;
}

// The padding before the first output pixel along one axis, and whether
// `out` is the size the op produces from `in`.
int PaddingBefore(const NodeView& node, const TransposeSpec& spec, int in,
                  int out, int kernel, int stride, bool* consistent) {
  if (IsMediaPipe(node)) {
    const int total = spec.padding == abi::kPaddingSame
                          ? std::max(0, kernel - (in - 1) % stride - 1)
                          : 0;
    *consistent = out == stride * (in - 1) + kernel - total;
    return total / 2;
  }
  // TRANSPOSE_CONV takes the output size from its operand; the padding is
  // that of a forward convolution from the output back to the input.
  *consistent = true;
  const int forward =
      kernels::ConvOutputSize(spec.padding, out, kernel, stride, 1);
  return kernels::ConvPaddingBefore(spec.padding, out, kernel, stride, 1,
                                    forward);
}

Status CheckTransposeConv(const NodeView& node, const GraphContext& graph,
                          const DeviceProfile& device) {
  TFG_ASSIGN_OR_RETURN(TransposeSpec spec, ReadSpec(node));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  if (!node.has_input(spec.input) || graph.IsConstant(node.input_index(spec.input))) {
    return Status::Error("the data input must be a non-constant tensor");
  }
  if (node.input(spec.input).dims->size != 4 || node.output(0).dims->size != 4) {
    return Status::Error("input and output must be 4-D");
  }
  if (!node.has_input(spec.weights) || node.input(spec.weights).dims == nullptr ||
      node.input(spec.weights).dims->size != 4) {
    return Status::Error("weights must be 4-D (OHWI)");
  }
  const Shape4 in = ShapeOf(node.input(spec.input));
  const Shape4 out = ShapeOf(node.output(0));
  const std::vector<int> filter = DimsVector(node.input(spec.weights).dims);
  if (filter[0] != out.c || filter[3] != in.c || out.b != in.b) {
    return Status::Error("weights " + std::to_string(filter[0]) + "x" +
                         std::to_string(filter[1]) + "x" +
                         std::to_string(filter[2]) + "x" +
                         std::to_string(filter[3]) + " do not match input " +
                         in.ToString() + " and output " + out.ToString());
  }
  TFG_RETURN_IF_ERROR(kernels::CheckWeights(
      node, graph, spec.weights,
      1LL * filter[0] * filter[1] * filter[2] * filter[3], "weights"));
  if (spec.bias >= 0) {
    TFG_RETURN_IF_ERROR(kernels::CheckWeights(node, graph, spec.bias, out.c, "bias"));
  }
  if (!IsMediaPipe(node)) {
    auto shape = graph.ConstantInts(node.input_index(0));
    if (!shape.ok()) {
      return shape.status().WithContext("output_shape (input 0) must be a constant");
    }
    const std::vector<int64_t> expected = {out.b, out.h, out.w, out.c};
    if (*shape != expected) {
      return Status::Error("output_shape operand differs from the output tensor " +
                           out.ToString());
    }
  }
  bool consistent_h = true, consistent_w = true;
  PaddingBefore(node, spec, in.h, out.h, filter[1], spec.stride_h, &consistent_h);
  PaddingBefore(node, spec, in.w, out.w, filter[2], spec.stride_w, &consistent_w);
  if (!consistent_h || !consistent_w) {
    return Status::Error("output shape " + out.ToString() +
                         " does not follow from the input and window");
  }
  TFG_RETURN_IF_ERROR(kernels::CheckLoopBudget(
      1LL * filter[1] * filter[2] * (1 + in.slices()),
      "a window of " + std::to_string(filter[1] * filter[2]) + " taps over " +
          std::to_string(in.c) + " channels"));
  return kernels::CheckConvActivation(spec.activation);
}

Status BuildTransposeConv(const NodeView& node, GraphBuilder& builder) {
  TFG_ASSIGN_OR_RETURN(TransposeSpec spec, ReadSpec(node));
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, spec.input));
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  const Shape4 in_shape = builder.shape(in);
  const Shape4 out_shape = builder.shape(out);
  const std::vector<int> filter = DimsVector(node.input(spec.weights).dims);
  const int kernel_h = filter[1], kernel_w = filter[2];
  bool unused;
  const int pad_top = PaddingBefore(node, spec, in_shape.h, out_shape.h,
                                    kernel_h, spec.stride_h, &unused);
  const int pad_left = PaddingBefore(node, spec, in_shape.w, out_shape.w,
                                     kernel_w, spec.stride_w, &unused);
  TFG_ASSIGN_OR_RETURN(std::vector<float> weights,
                       builder.graph().ConstantFloats(node.input_index(spec.weights)));
  std::vector<float> bias;
  if (spec.bias >= 0) {
    TFG_ASSIGN_OR_RETURN(bias, builder.graph().ConstantFloats(node.input_index(spec.bias)));
  }

  // Pixels per invocation share one row and x phase: at most
  // ceil(OUT_W / STRIDE_W) of them.
  const int per_phase = (out_shape.w + spec.stride_w - 1) / spec.stride_w;
  // Many-core GPUs (min_invocations > 0): as conv2d.comp, the largest
  // tile that still gives every core work. With llvmpipe's fixed 4-pixel
  // tiles the hair model's 64x64x16 -> 128x128x16 layer ran 4096
  // invocations (~31 per multiprocessor of an H100) for 52 us.
  kernels::GemmTile tile = kernels::ChooseGemmTile(
      1LL * out_shape.b * out_shape.h * out_shape.w, out_shape.slices(),
      in_shape.slices() * kernel_h * kernel_w, builder.device().min_invocations);
  tile.rows = std::min(tile.rows, per_phase);
  const int groups_per_phase = (per_phase + tile.rows - 1) / tile.rows;
  const long long pixel_groups =
      1LL * out_shape.b * out_shape.h * spec.stride_w * groups_per_phase;
  const int slice_groups = (out_shape.slices() + tile.slices - 1) / tile.slices;

  Dispatch dispatch;
  dispatch.shader = "transpose_conv";
  dispatch.label = node.Describe();
  auto& d = dispatch.defines;
  TFG_ASSIGN_OR_RETURN(std::string act, kernels::ActivationDefine(spec.activation));
  if (!act.empty()) d[act] = "";
  if (tile.slices_on_x) d["SLICES_ON_X"] = "";
  d["TILE_ROWS"] = std::to_string(tile.rows);
  d["TILE_SLICES"] = std::to_string(tile.slices);
  d["PIXEL_GROUPS"] = std::to_string(pixel_groups);
  d["BAND_BEGIN"] = "0";  // all of them (a fused readback's bands: runtime_bands.cc)
  d["BAND_END"] = std::to_string(pixel_groups);
  d["SLICE_GROUPS"] = std::to_string(slice_groups);
  d["GROUPS_PER_PHASE"] = std::to_string(groups_per_phase);
  d["IN_S"] = std::to_string(in_shape.slices());
  d["IN_H"] = std::to_string(in_shape.h);
  d["IN_W"] = std::to_string(in_shape.w);
  d["OUT_S"] = std::to_string(out_shape.slices());
  d["OUT_C"] = std::to_string(out_shape.c);
  d["OUT_H"] = std::to_string(out_shape.h);
  d["OUT_W"] = std::to_string(out_shape.w);
  d["KERNEL_H"] = std::to_string(kernel_h);
  d["KERNEL_W"] = std::to_string(kernel_w);
  d["STRIDE_H"] = std::to_string(spec.stride_h);
  d["STRIDE_W"] = std::to_string(spec.stride_w);
  d["PAD_TOP"] = std::to_string(pad_top);
  d["PAD_LEFT"] = std::to_string(pad_left);
  const uint32_t gx = static_cast<uint32_t>(tile.slices_on_x ? slice_groups : pixel_groups);
  const uint32_t gy = static_cast<uint32_t>(tile.slices_on_x ? pixel_groups : slice_groups);
  dispatch.grid = {gx, gy, 1};
  dispatch.local = kernels::LocalSize2d(gx, gy);
  // Useful arithmetic: each input pixel meets every tap once.
  dispatch.flops = 2LL * in_shape.b * in_shape.h * in_shape.w * in_shape.c *
                   out_shape.c * kernel_h * kernel_w;

  const int taps = kernel_h * kernel_w;
  const int in_c = in_shape.c;
  kernels::WeightAt weight = [&](int oc, int tap, int ic) {
    return weights[(static_cast<size_t>(oc) * taps + tap) * in_c + ic];
  };
  ValueId packed_weights = builder.NewConstant(kernels::PackGemmWeights(
      out_shape.c, taps, in_c, tile.slices, weight));
  ValueId packed_bias = builder.NewConstant(
      kernels::PackBias(bias, out_shape.c, slice_groups * tile.slices));
  dispatch.outputs = {out};
  dispatch.inputs = {in, packed_weights, packed_bias};
  builder.AddDispatch(std::move(dispatch));
  return Status::Ok();
}

}  // namespace

void RegisterTransposeConvKernels(KernelRegistry& registry) {
  registry.AddBuiltin(
      abi::kTfLiteBuiltinTransposeConv,
      {"transpose_conv", CheckTransposeConv, BuildTransposeConv,
       "One gather kernel: any window and stride, SAME/VALID padding by "
       "TFLite's rule (a forward convolution's padding from the output "
       "size), constant OHWI weights, optional bias (v3+), fused "
       "NONE/RELU/RELU6/RELU_N1_TO_1 (v4+).",
       "non-constant weights, bias or output_shape; an output_shape that "
       "differs from the output tensor; a constant data input; fused "
       "TANH/SIGMOID; windows over the per-invocation loop budget; newer "
       "versions",
       kMaxVersion});
  registry.AddCustom(
      kMediaPipeOp,
      {"transpose_conv_bias", CheckTransposeConv, BuildTransposeConv,
       "MediaPipe's transposed convolution with bias: (input, OHWI weights, "
       "bias) and its 2019 TfLiteTransposeConvParams in the custom data; "
       "SAME pads max(0, k - (in - 1) % s - 1), half of it before.",
       "custom data shorter than 12 bytes; non-constant weights or bias; "
       "output shapes that do not follow from the input and window; windows "
       "over the per-invocation loop budget",
       1});
}

}  // namespace tflite_gles
