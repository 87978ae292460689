// PAD, PADV2 (constant value) and MIRROR_PAD (REFLECT / SYMMETRIC) with
// constant paddings on any axis, channels included: shaders/relayout.comp
// in MODE_AFFINE, reading input[k] = output[k] - pad_before[k].
#include <algorithm>
#include <cmath>
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/layout_common.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::RelayoutSpec;

int MaxVersion(int op) {
  switch (op) {
    case abi::kTfLiteBuiltinPad: return 4;
    case abi::kTfLiteBuiltinPadv2: return 4;
    default: return 3;  // MIRROR_PAD
  }
}

std::vector<int> IdentityAxes(int rank) {
  std::vector<int> axes;
  for (int j = 0; j < rank; ++j) axes.push_back(j);
  return axes;
}

// The relayout spec of the node, or why it cannot run here.
StatusOr<RelayoutSpec> PadSpec(const NodeView& node, const GraphContext& graph) {
  const std::vector<int> in = DimsVector(node.input(0).dims);
  const std::vector<int> out = DimsVector(node.output(0).dims);
  const int rank = static_cast<int>(in.size());
  TFG_ASSIGN_OR_RETURN(auto paddings,
                       kernels::ConstantIntsOf(node, graph, 1, "paddings"));
  if (static_cast<int>(paddings.size()) != 2 * rank ||
      static_cast<int>(out.size()) != rank) {
    return Status::Error("paddings are not [rank, 2] for the input's rank");
  }
  RelayoutSpec spec;
  spec.pad = RelayoutSpec::Pad::kConstant;
  if (node.op() == abi::kTfLiteBuiltinMirrorPad) {
    const auto* params = node.params<abi::MirrorPaddingParams>();
    if (params == nullptr) return Status::Error("missing builtin parameters");
    if (params->mode == abi::kMirrorPaddingReflect) {
      spec.pad = RelayoutSpec::Pad::kReflect;
    } else if (params->mode == abi::kMirrorPaddingSymmetric) {
      spec.pad = RelayoutSpec::Pad::kSymmetric;
    } else {
      return Status::Error("unknown mirror padding mode " +
                           std::to_string(static_cast<int>(params->mode)));
    }
  }
  if (node.op() == abi::kTfLiteBuiltinPadv2 && node.has_input(2)) {
    TFG_RETURN_IF_ERROR(
        kernels::CheckConstantInput(node, graph, 2, "the pad value"));
    TFG_ASSIGN_OR_RETURN(std::vector<float> value,
                         graph.ConstantFloats(node.input_index(2)));
    if (value.size() != 1) return Status::Error("the pad value is not a scalar");
    if (std::isnan(value[0])) {
      return Status::Error("a NaN pad value has no GLSL literal");
    }
    spec.pad_value = value[0];
  }
  std::vector<int> begin, stride(rank, 1);
  for (int j = 0; j < rank; ++j) {
    const int64_t before = paddings[2 * j], after = paddings[2 * j + 1];
    if (before < 0 || after < 0) return Status::Error("negative padding");
    // One reflection must land inside the input (TFLite enforces the same).
    const int64_t limit = spec.pad == RelayoutSpec::Pad::kReflect ? in[j] - 1
                                                                   : in[j];
    if (spec.pad != RelayoutSpec::Pad::kConstant &&
        (before > limit || after > limit)) {
      return Status::Error("mirror padding of " +
                           std::to_string(std::max(before, after)) +
                           " exceeds what axis " + std::to_string(j) +
                           " of size " + std::to_string(in[j]) + " allows");
    }
    if (in[j] + before + after != out[j]) {
      return Status::Error("padded dims do not match the output tensor");
    }
    begin.push_back(static_cast<int>(-before));
  }
  TFG_ASSIGN_OR_RETURN(
      RelayoutSpec affine,
      kernels::SliceSpec(rank, rank, begin, stride, IdentityAxes(rank)));
  spec.src_axis = affine.src_axis;
  spec.begin = affine.begin;
  spec.stride = affine.stride;
  return spec;
}

Status Check(const NodeView& node, const GraphContext& graph,
             const DeviceProfile&) {
  const int max_version = MaxVersion(node.op());
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, max_version));
  TFG_RETURN_IF_ERROR(CheckArity(
      node, 2, node.op() == abi::kTfLiteBuiltinPadv2 ? 3 : 2, 1));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  TFG_RETURN_IF_ERROR(kernels::CheckNotConstantInput(node, graph, 0));
  return PadSpec(node, graph).status();
}

Status Build(const NodeView& node, GraphBuilder& builder) {
  TFG_ASSIGN_OR_RETURN(RelayoutSpec spec, PadSpec(node, builder.graph()));
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  kernels::EmitRelayout(builder, in, out, spec, node.Describe());
  return Status::Ok();
}

}  // namespace

void RegisterPadKernels(KernelRegistry& registry) {
  static constexpr char kSummary[] =
      "Constant int32/int64 paddings on every axis including channels; "
      "PADV2's constant pad value.";
  static constexpr char kDeclines[] =
      "Non-constant paddings or pad value; a NaN pad value; negative "
      "paddings.";
  registry.AddBuiltin(abi::kTfLiteBuiltinPad,
                      {"pad", Check, Build, kSummary, kDeclines, 4});
  registry.AddBuiltin(abi::kTfLiteBuiltinPadv2,
                      {"pad", Check, Build, kSummary, kDeclines, 4});
  registry.AddBuiltin(
      abi::kTfLiteBuiltinMirrorPad,
      {"mirror_pad", Check, Build,
       "REFLECT and SYMMETRIC with constant paddings on every axis.",
       "Non-constant paddings; paddings wider than the mode allows.", 3});
}

}  // namespace tflite_gles
