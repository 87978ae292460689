// MEAN over any of the height, width and channel axes (constant int32 axis
// tensor, negative axes allowed, keep_dims either way): shaders/mean.comp.
// A reduction over batch is declined unless the batch is 1 (then it changes
// nothing but the output's rank).
#include <set>
#include <string>
#include <vector>

#include "delegate/kernel_registry.h"
#include "delegate/kernels/common.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckConstantInput;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

enum Dim { kBatch, kHeight, kWidth, kChannels };

// Which BHWC dimension each TFLite axis of a rank-`rank` tensor is (see the
// rank mapping of Shape4).
std::vector<Dim> DimsOfRank(int rank) {
  switch (rank) {
    case 1: return {kChannels};
    case 2: return {kBatch, kChannels};
    case 3: return {kBatch, kWidth, kChannels};
    case 4: return {kBatch, kHeight, kWidth, kChannels};
    default: return {};
  }
}

struct Reduction {
  std::set<Dim> dims;                // reduced BHWC dimensions
  std::vector<int> expected_output;  // TFLite dims of the result
};

StatusOr<Reduction> ReductionOf(const NodeView& node, const GraphContext& graph) {
  TFG_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       graph.ConstantInts(node.input_index(1)));
  const std::vector<int> in_dims = DimsVector(node.input(0).dims);
  const int rank = static_cast<int>(in_dims.size());
  const std::vector<Dim> dim_of = DimsOfRank(rank);
  const auto* params = node.params<abi::ReducerParams>();
  const bool keep_dims = params != nullptr && params->keep_dims;
  Reduction reduction;
  std::set<int> reduced_axes;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return Status::Error("axis " + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(rank));
    }
    const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
    reduced_axes.insert(a);
    reduction.dims.insert(dim_of[a]);
  }
  for (int a = 0; a < rank; ++a) {
    if (reduced_axes.count(a) == 0) {
      reduction.expected_output.push_back(in_dims[a]);
    } else if (keep_dims) {
      reduction.expected_output.push_back(1);
    }
  }
  return reduction;
}

Status Check(const NodeView& node, const GraphContext& graph,
             const DeviceProfile& device) {
  if (node.version() > 3) {
    return Status::Error("version " + std::to_string(node.version()) +
                         " is newer than this kernel knows (<= 3)");
  }
  TFG_RETURN_IF_ERROR(CheckArity(node, 2, 2, 1));
  TFG_RETURN_IF_ERROR(CheckConstantInput(node, graph, 1, "the axis"));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  if (graph.IsConstant(node.input_index(0))) {
    return Status::Error("constant input (fold it offline)");
  }
  if (node.input(1).type != abi::kInt32) {
    return Status::Error(std::string("the axis is ") +
                         TypeName(node.input(1).type) + ", expected int32");
  }
  TFG_ASSIGN_OR_RETURN(Reduction reduction, ReductionOf(node, graph));
  if (reduction.dims.count(kBatch) && ShapeOf(node.input(0)).b != 1) {
    return Status::Error("reduction over the batch axis (batch " +
                         std::to_string(ShapeOf(node.input(0)).b) +
                         ") is not supported: batches are separate planes");
  }
  if (DimsVector(node.output(0).dims) != reduction.expected_output) {
    return Status::Error("output shape " + ShapeOf(node.output(0)).ToString() +
                         " does not match the reduced input");
  }
  return Status::Ok();
}

Status Build(const NodeView& node, GraphBuilder& builder) {
  TFG_ASSIGN_OR_RETURN(Reduction reduction, ReductionOf(node, builder.graph()));
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  const Shape4 out_shape = builder.shape(out);
  const Shape4 in_shape = builder.shape(in);
  const bool reduce_h = reduction.dims.count(kHeight) > 0;
  const bool reduce_w = reduction.dims.count(kWidth) > 0;
  const bool reduce_c = reduction.dims.count(kChannels) > 0;
  long long count = 1;
  if (reduce_h) count *= in_shape.h;
  if (reduce_w) count *= in_shape.w;
  if (reduce_c) count *= in_shape.c;

  Dispatch dispatch =
      kernels::ElementwiseDispatch("mean", out_shape, builder.device());
  dispatch.label = node.Describe();
  auto& defines = dispatch.defines;
  defines[reduce_c ? "REDUCE_C" : "KEEP_C"] = "";
  if (reduce_h) defines["REDUCE_H"] = "";
  if (reduce_w) defines["REDUCE_W"] = "";
  defines["TOTAL"] = std::to_string(out_shape.vec4_count());
  defines["IN_H"] = std::to_string(in_shape.h);
  defines["IN_W"] = std::to_string(in_shape.w);
  defines["IN_S"] = std::to_string(in_shape.slices());
  defines["OUT_H"] = std::to_string(out_shape.h);
  defines["OUT_W"] = std::to_string(out_shape.w);
  defines["OUT_S"] = std::to_string(out_shape.slices());
  defines["OUT_C"] = std::to_string(out_shape.c);
  defines["KEPT_H"] = std::to_string(reduce_h ? 1 : in_shape.h);
  defines["KEPT_W"] = std::to_string(reduce_w ? 1 : in_shape.w);
  defines["COUNT"] = std::to_string(count);
  dispatch.outputs = {out};
  dispatch.inputs = {in};
  dispatch.flops = in_shape.elements();
  builder.AddDispatch(std::move(dispatch));
  return Status::Ok();
}

}  // namespace

void RegisterMeanKernels(KernelRegistry& registry) {
  registry.AddBuiltin(abi::kTfLiteBuiltinMean, {"mean", Check, Build});
}

}  // namespace tflite_gles
