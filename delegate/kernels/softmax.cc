// SOFTMAX (any beta) and L2_NORMALIZATION over the last axis, which is the
// channel axis of every rank 1-4 tensor in PHWC4: shaders/channel_normalize.comp.
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/common.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

// TFLite's float L2_NORMALIZATION divides by max(norm, 1e-6).
constexpr float kL2Epsilon = 1e-6f;

// From this many slices (64 channels) on, a workgroup of 64 shares each
// pixel (COOPERATIVE in the shader): one invocation walking a classifier's
// 251 slices three times took 49 us on an H200, a dispatch's worth of time.
constexpr int kCooperativeMinSlices = 16;
constexpr int kCooperativeWorkgroup = 64;

bool Cooperative(int slices) { return slices >= kCooperativeMinSlices; }

Status Check(const NodeView& node, const GraphContext& graph,
             const DeviceProfile& device) {
  const bool softmax = node.op() == abi::kTfLiteBuiltinSoftmax;
  const int max_version = softmax ? 3 : 2;
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, max_version));
  TFG_RETURN_IF_ERROR(CheckArity(node, 1, 1, 1));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  if (!node.has_input(0)) return Status::Error("the input is missing");
  TFG_RETURN_IF_ERROR(kernels::CheckNotConstantInput(node, graph, 0));
  if (DimsVector(node.input(0).dims) != DimsVector(node.output(0).dims)) {
    return Status::Error("input and output shapes differ");
  }
  if (node.input(0).dims->size < 1) {
    return Status::Error("a scalar has no axis to normalize");
  }
  // Softmax walks a pixel's slices three times, L2 twice: in one invocation,
  // or shared by a workgroup.
  const int slices = ShapeOf(node.input(0)).slices();
  const long long per_invocation =
      Cooperative(slices) ? (slices + kCooperativeWorkgroup - 1) / kCooperativeWorkgroup
                          : slices;
  const long long iterations = (softmax ? 3LL : 2LL) * per_invocation;
  if (iterations > kernels::kMaxLoopIterationsPerInvocation) {
    return Status::Error(std::to_string(ShapeOf(node.input(0)).c) +
                         " channels need " + std::to_string(iterations) +
                         " loop iterations in one invocation, over the limit of " +
                         std::to_string(kernels::kMaxLoopIterationsPerInvocation) +
                         " (llvmpipe stops longer loops silently)");
  }
  if (softmax) {
    const auto* params = node.params<abi::SoftmaxParams>();
    if (params == nullptr) return Status::Error("missing builtin parameters");
    if (!(params->beta == params->beta) || params->beta > 3.0e38f ||
        params->beta < -3.0e38f) {
      return Status::Error("beta " + std::to_string(params->beta) +
                           " is not a finite number");
    }
  } else {
    const auto* params = node.params<abi::L2NormParams>();
    if (params != nullptr && params->activation != abi::kActNone) {
      return Status::Error("fused activation " +
                           std::to_string(static_cast<int>(params->activation)) +
                           " (the CPU kernel applies none)");
    }
  }
  return Status::Ok();
}

Status Build(const NodeView& node, GraphBuilder& builder) {
  const bool softmax = node.op() == abi::kTfLiteBuiltinSoftmax;
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  const Shape4 shape = builder.shape(out);
  const long long pixels = 1LL * shape.b * shape.h * shape.w;

  Dispatch dispatch;
  dispatch.shader = "channel_normalize";
  if (Cooperative(shape.slices())) {
    dispatch.grid = {static_cast<uint32_t>(pixels * kCooperativeWorkgroup), 1, 1};
    dispatch.local = {kCooperativeWorkgroup, 1, 1};
    dispatch.defines["COOPERATIVE"] = "";
  } else {
    dispatch.grid = {static_cast<uint32_t>(pixels), 1, 1};
    dispatch.local = {builder.device().preferred_local_x, 1, 1};
  }
  dispatch.label = node.Describe();
  auto& defines = dispatch.defines;
  defines["TOTAL"] = std::to_string(pixels);
  defines["H"] = std::to_string(shape.h);
  defines["W"] = std::to_string(shape.w);
  defines["S"] = std::to_string(shape.slices());
  defines["C"] = std::to_string(shape.c);
  if (softmax) {
    defines["OP_SOFTMAX"] = "";
    defines["BETA"] =
        kernels::FloatLiteral(node.params<abi::SoftmaxParams>()->beta);
  } else {
    defines["OP_L2_NORMALIZATION"] = "";
    defines["EPSILON"] = kernels::FloatLiteral(kL2Epsilon);
  }
  dispatch.outputs = {out};
  dispatch.inputs = {in};
  dispatch.flops = shape.elements() * (softmax ? 4 : 3);
  builder.AddDispatch(std::move(dispatch));
  return Status::Ok();
}

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry& registry) {
  registry.AddBuiltin(
      abi::kTfLiteBuiltinSoftmax,
      {"channel_normalize", Check, Build,
       "Over the last axis (the channel axis of any rank 1-4 tensor), any "
       "finite beta; wide channel counts are shared by a workgroup.",
       "a non-finite beta; input and output shapes that differ; scalars; a "
       "constant input; channel counts over the per-invocation loop budget; "
       "newer versions",
       3});
  registry.AddBuiltin(
      abi::kTfLiteBuiltinL2Normalization,
      {"channel_normalize", Check, Build,
       "x / max(||x||, 1e-6) over the last axis (the channel axis of any "
       "rank 1-4 tensor), as TFLite's float kernel.",
       "fused activations (the CPU kernel applies none); input and output "
       "shapes that differ; scalars; a constant input; channel counts over "
       "the per-invocation loop budget; newer versions",
       2});
}

}  // namespace tflite_gles
