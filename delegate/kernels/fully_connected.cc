// FULLY_CONNECTED (float weights, default format): a register-tiled GEMM in
// shaders/conv2d.comp with output slices on x. The input is either a
// matrix of rows over its last dimension (any rank; keep_num_dims keeps
// the leading dims) or, for a 4-D input whose per-batch size is the weights'
// depth, flattened per batch: the weights are then repacked into the
// PHWC4 order of the input, so no relayout pass is needed.
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

// Later versions only add quantized variants, refused by their types.
constexpr int kMaxVersion = 12;

// How the input is read; false if it fits neither layout.
bool PlanGemm(const Shape4& in, int depth, long long out_rows,
              kernels::GemmInput* gemm) {
  if (in.c == depth) {
    gemm->rows = 1LL * in.b * in.h * in.w;
    gemm->row_pixels = in.h * in.w;
    gemm->depth_steps = in.slices();
    gemm->depth_stride = in.h * in.w;
  } else if (1LL * in.h * in.w * in.c == depth) {
    gemm->rows = in.b;
    gemm->row_pixels = 1;
    gemm->depth_steps = in.slices() * in.h * in.w;
    gemm->depth_stride = 1;
  } else {
    return false;
  }
  return gemm->rows == out_rows;
}

Status CheckFullyConnected(const NodeView& node, const GraphContext& graph,
                           const DeviceProfile& device) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, kMaxVersion));
  TFG_RETURN_IF_ERROR(CheckArity(node, 2, 3, 1));
  const auto* params = node.params<abi::FullyConnectedParams>();
  if (params == nullptr) return Status::Error("missing builtin parameters");
  if (params->weights_format != abi::kFullyConnectedWeightsFormatDefault) {
    return Status::Error("shuffled weights format " +
                         std::to_string(static_cast<int>(params->weights_format)) +
                         " is not supported (only the default layout)");
  }
  if (!node.has_input(0)) return Status::Error("the input is missing");
  if (node.input(1).dims == nullptr || node.input(1).dims->size != 2) {
    return Status::Error("weights must be 2-D [outputs, depth]");
  }
  if (node.input(1).type != abi::kFloat32 && node.input(1).type != abi::kFloat16 &&
      !graph.IsQuantizedConstant(node.input_index(1))) {
    return Status::Error(std::string("weights are ") + TypeName(node.input(1).type) +
                         " (float32, float16 or quantized uint8/int8 constants)");
  }
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  const std::vector<int> weights = DimsVector(node.input(1).dims);
  const Shape4 in = ShapeOf(node.input(0));
  const Shape4 out = ShapeOf(node.output(0));
  if (out.c != weights[0]) {
    return Status::Error("output has " + std::to_string(out.c) +
                         " channels, the weights " + std::to_string(weights[0]));
  }
  TFG_RETURN_IF_ERROR(kernels::CheckWeights(
      node, graph, 1, 1LL * weights[0] * weights[1], "weights"));
  if (node.has_input(2)) {
    TFG_RETURN_IF_ERROR(kernels::CheckWeights(node, graph, 2, out.c, "bias"));
  }
  kernels::GemmInput gemm;
  if (!PlanGemm(in, weights[1], out.elements() / out.c, &gemm)) {
    return Status::Error("input " + in.ToString() + " and output " +
                         out.ToString() + " do not form rows of depth " +
                         std::to_string(weights[1]) +
                         " (only the last dimension or a whole 4-D batch "
                         "can be flattened)");
  }
  TFG_RETURN_IF_ERROR(kernels::CheckLoopBudget(
      gemm.depth_steps, "a depth of " + std::to_string(weights[1])));
  return kernels::CheckConvActivation(params->activation);
}

Status BuildFullyConnected(const NodeView& node, GraphBuilder& builder) {
  const auto* params = node.params<abi::FullyConnectedParams>();
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  const Shape4 in_shape = builder.shape(in);
  const Shape4 out_shape = builder.shape(out);
  const int depth = DimsVector(node.input(1).dims)[1];
  kernels::GemmInput gemm;
  if (!PlanGemm(in_shape, depth, out_shape.elements() / out_shape.c, &gemm)) {
    return Status::Error("input does not form rows of the weights' depth");
  }
  // Owned by the lambda: read and packed later or never (kernels::LazyWeights,
  // kernels::DeferredFloats).
  TFG_ASSIGN_OR_RETURN(auto weights,
                       kernels::DeferredFloats::Of(builder.graph(), node.input_index(1)));
  std::vector<float> bias;
  if (node.has_input(2)) {
    TFG_ASSIGN_OR_RETURN(bias, builder.graph().ConstantFloats(node.input_index(2)));
  }
  const int channels = in_shape.c;
  const int pixels = in_shape.h * in_shape.w;
  const bool flattened = gemm.row_pixels == 1 && channels != depth;
  // Lane = depth step * 4 + k; a step is an input vec4 (slice s, pixel q),
  // whose lane k is channel 4s + k of TFLite's flattened index q * C + c.
  kernels::WeightAt weight = [weights, flattened, pixels, channels, depth](int oc, int,
                                                                          int lane) {
    const int step = lane / 4;
    const int slice = flattened ? step / pixels : step;
    const int pixel = flattened ? step % pixels : 0;
    const int c = slice * 4 + lane % 4;
    if (c >= channels) return 0.0f;
    return weights->values()[static_cast<size_t>(oc) * depth + pixel * channels + c];
  };
  const kernels::LazyWeights lazy{
      node.input_index(1), "fully_connected channels=" + std::to_string(channels) +
                               " pixels=" + std::to_string(pixels) +
                               " depth=" + std::to_string(depth) +
                               " flattened=" + std::to_string(flattened)};
  if (builder.device().shared_memory_gemm) {
    return kernels::AddSharedGemmDispatch(node, builder, in, out, gemm, weight,
                                          bias, params->activation, lazy);
  }
  return kernels::AddConv2dDispatch(node, builder, in, out, {}, &gemm,
                                    4 * gemm.depth_steps, weight, bias,
                                    params->activation, lazy);
}

}  // namespace

void RegisterFullyConnectedKernels(KernelRegistry& registry) {
  registry.AddBuiltin(
      abi::kTfLiteBuiltinFullyConnected,
      {"fully_connected", CheckFullyConnected, BuildFullyConnected,
       "Default-format float weights [outputs, depth] as a register-tiled "
       "GEMM: rows over the input's last dimension (any rank, keep_num_dims "
       "either way), or a 4-D input flattened per batch (the weights are "
       "repacked into its PHWC4 order: no relayout); optional bias; fused "
       "NONE/RELU/RELU6/RELU_N1_TO_1.",
       "shuffled weight formats; weights that are not float32/float16 "
       "tensors; non-constant weights or bias; inputs that do not form rows "
       "of the weights' depth; depths over the per-invocation loop budget; "
       "fused TANH/SIGMOID; newer versions",
       kMaxVersion});
}

}  // namespace tflite_gles
