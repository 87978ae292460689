// CONCATENATION along any axis (channels too, at any channel counts),
// 1..N inputs, constant inputs included:
// shaders/concat.comp through EmitConcat.
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/layout_common.h"

namespace tflite_gles {
namespace {

using kernels::CheckFloatTensors;
using kernels::DimsOf;
using kernels::Shape4Axis;
using kernels::ShapeOf;

Status Check(const NodeView& node, const GraphContext& graph,
             const DeviceProfile&) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, 4));
  if (node.num_inputs() < 1 || node.num_outputs() != 1) {
    return Status::Error("expected 1+ inputs and 1 output");
  }
  const auto* params = node.params<abi::ConcatenationParams>();
  if (params == nullptr) return Status::Error("missing builtin parameters");
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  // concat.comp can apply one (EmitConcat takes it), but TFLite's own
  // CONCATENATION kernel refuses fused activations, so a model that has one
  // is invalid for the runtime: decline it as the CPU would, rather than run
  // a model only the delegate accepts.
  if (params->activation != abi::kActNone) {
    return Status::Error("fused activation " +
                         std::to_string(static_cast<int>(params->activation)) +
                         " (TFLite's CONCATENATION kernel refuses them too)");
  }
  const int rank = node.output(0).dims->size;
  TFG_ASSIGN_OR_RETURN(int axis4, Shape4Axis(rank, params->axis));
  const kernels::Int4 out = DimsOf(ShapeOf(node.output(0)));
  int total = 0;
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) return Status::Error("an input is missing");
    const abi::Tensor& input = node.input(i);
    const bool folded_constant = graph.IsConstant(node.input_index(i)) &&
                                 graph.ConstantFloats(node.input_index(i)).ok();
    if (input.type != abi::kFloat32 && !folded_constant &&
        !IsQuantizedType(input.type)) {  // CheckFloatTensors checked those
      return Status::Error("input " + std::to_string(i) + " is " +
                           TypeName(input.type) + ", only float32 runs here");
    }
    if (input.dims->size != rank) {
      return Status::Error("input " + std::to_string(i) + " has rank " +
                           std::to_string(input.dims->size) + ", output " +
                           std::to_string(rank));
    }
    auto shape = ShapeFromDims(input.dims);
    if (!shape.ok()) return shape.status();
    const kernels::Int4 dims = DimsOf(*shape);
    for (int k = 0; k < 4; ++k) {
      if (k != axis4 && dims[k] != out[k]) {
        return Status::Error("input " + std::to_string(i) + " shape " +
                             shape->ToString() + " does not fit output " +
                             ShapeOf(node.output(0)).ToString());
      }
    }
    total += dims[axis4];
  }
  if (total != out[axis4]) {
    return Status::Error("inputs add up to " + std::to_string(total) +
                         " along the axis, the output has " +
                         std::to_string(out[axis4]));
  }
  return Status::Ok();
}

Status Build(const NodeView& node, GraphBuilder& builder) {
  const auto* params = node.params<abi::ConcatenationParams>();
  TFG_ASSIGN_OR_RETURN(int axis4,
                       Shape4Axis(node.output(0).dims->size, params->axis));
  std::vector<ValueId> inputs;
  for (int i = 0; i < node.num_inputs(); ++i) {
    TFG_ASSIGN_OR_RETURN(ValueId input, builder.Input(node, i));
    inputs.push_back(input);
  }
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  kernels::EmitConcat(builder, inputs, axis4, out, /*activation=*/"",
                      node.Describe());
  return Status::Ok();
}

}  // namespace

void RegisterConcatKernels(KernelRegistry& registry) {
  registry.AddBuiltin(
      abi::kTfLiteBuiltinConcatenation,
      {"concat", Check, Build,
       "Any axis (batch, height, width, channels) after the rank mapping, 1..N "
       "inputs (8 per dispatch, longer lists split over disjoint output "
       "ranges), constant inputs, channel counts not multiples of 4 (each "
       "lane gathers its own input).",
       "Fused activations (TFLite's own kernel refuses them); inputs of "
       "another rank or of shapes that do not fit the output.",
       4});
}

}  // namespace tflite_gles
