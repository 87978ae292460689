// TRANSPOSE (constant permutation, rank <= 4), DEPTH_TO_SPACE and
// SPACE_TO_DEPTH: shaders/relayout.comp, each output element gathered from
// its input element.
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/layout_common.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::RelayoutSpec;
using kernels::Shape4Axis;

Status CheckCommon(const NodeView& node, const GraphContext& graph,
                   int max_version, int inputs) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, max_version));
  TFG_RETURN_IF_ERROR(CheckArity(node, inputs, inputs, 1));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  TFG_RETURN_IF_ERROR(kernels::CheckNotConstantInput(node, graph, 0));
  return Status::Ok();
}

// output[i] = input[perm[i]] along TFLite axes; in Shape4 terms input axis
// map(perm[i]) reads output axis map(i).
StatusOr<RelayoutSpec> TransposeSpec(const NodeView& node,
                                     const GraphContext& graph) {
  const std::vector<int> in = DimsVector(node.input(0).dims);
  const std::vector<int> out = DimsVector(node.output(0).dims);
  const int rank = static_cast<int>(in.size());
  TFG_ASSIGN_OR_RETURN(auto perm, kernels::ConstantIntsOf(node, graph, 1,
                                                          "the permutation"));
  if (static_cast<int>(perm.size()) != rank ||
      static_cast<int>(out.size()) != rank) {
    return Status::Error("permutation length differs from the input's rank");
  }
  RelayoutSpec spec;
  spec.begin = {0, 0, 0, 0};
  spec.stride = {0, 0, 0, 0};  // axes the tensor lacks are size 1
  std::vector<bool> used(rank, false);
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || used[perm[i]]) {
      return Status::Error("the permutation is not a permutation of 0.." +
                           std::to_string(rank - 1));
    }
    used[perm[i]] = true;
    if (out[i] != in[perm[i]]) {
      return Status::Error("output dims are not the permuted input dims");
    }
    TFG_ASSIGN_OR_RETURN(int from, Shape4Axis(rank, static_cast<int>(perm[i])));
    TFG_ASSIGN_OR_RETURN(int to, Shape4Axis(rank, i));
    spec.src_axis[from] = to;
    spec.stride[from] = 1;
  }
  return spec;
}

Status CheckTranspose(const NodeView& node, const GraphContext& graph,
                      const DeviceProfile&) {
  TFG_RETURN_IF_ERROR(CheckCommon(node, graph, 6, 2));
  return TransposeSpec(node, graph).status();
}

Status BuildTranspose(const NodeView& node, GraphBuilder& builder) {
  TFG_ASSIGN_OR_RETURN(RelayoutSpec spec, TransposeSpec(node, builder.graph()));
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  kernels::EmitRelayout(builder, in, out, spec, node.Describe());
  return Status::Ok();
}

// Both ops carry {int block_size}.
int BlockSize(const NodeView& node) {
  return node.op() == abi::kTfLiteBuiltinDepthToSpace
             ? node.params<abi::DepthToSpaceParams>()->block_size
             : node.params<abi::SpaceToDepthParams>()->block_size;
}

Status CheckBlockOp(const NodeView& node, const GraphContext& graph,
                    const DeviceProfile&) {
  TFG_RETURN_IF_ERROR(CheckCommon(node, graph, 2, 1));
  if (node.params<abi::DepthToSpaceParams>() == nullptr) {
    return Status::Error("missing builtin parameters");
  }
  if (node.input(0).dims->size != 4 || node.output(0).dims->size != 4) {
    return Status::Error("input and output must be 4-D");
  }
  const int block = BlockSize(node);
  // Larger blocks cannot fit a GPU tensor dimension (and would overflow).
  if (block < 1 || block > 4096) {
    return Status::Error("block size " + std::to_string(block));
  }
  const Shape4 in = kernels::ShapeOf(node.input(0));
  const Shape4 out = kernels::ShapeOf(node.output(0));
  const bool to_space = node.op() == abi::kTfLiteBuiltinDepthToSpace;
  const Shape4& deep = to_space ? in : out;
  const Shape4& wide = to_space ? out : in;
  if (deep.b != wide.b || deep.h * block != wide.h ||
      deep.w * block != wide.w || deep.c != wide.c * block * block) {
    return Status::Error("shapes do not match block size " +
                         std::to_string(block));
  }
  return Status::Ok();
}

Status BuildBlockOp(const NodeView& node, GraphBuilder& builder) {
  RelayoutSpec spec;
  spec.mode = node.op() == abi::kTfLiteBuiltinDepthToSpace
                  ? RelayoutSpec::Mode::kDepthToSpace
                  : RelayoutSpec::Mode::kSpaceToDepth;
  spec.block = BlockSize(node);
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  kernels::EmitRelayout(builder, in, out, spec, node.Describe());
  return Status::Ok();
}

}  // namespace

void RegisterTransposeKernels(KernelRegistry& registry) {
  registry.AddBuiltin(abi::kTfLiteBuiltinTranspose,
                      {"transpose", CheckTranspose, BuildTranspose,
                       "Constant permutation of rank <= 4.",
                       "Rank 5 and more; a computed permutation.", 6});
  registry.AddBuiltin(abi::kTfLiteBuiltinDepthToSpace,
                      {"depth_to_space", CheckBlockOp, BuildBlockOp,
                       "4-D, any block size up to 4096.",
                       "Shapes that do not match the block size.", 2});
  registry.AddBuiltin(abi::kTfLiteBuiltinSpaceToDepth,
                      {"space_to_depth", CheckBlockOp, BuildBlockOp,
                       "4-D, any block size up to 4096.",
                       "Shapes that do not match the block size.", 2});
}

}  // namespace tflite_gles
