// RESHAPE and SQUEEZE. Both keep the elements in BHWC order, so the output
// is either a view of the input (when every element sits at the same PHWC4
// address under both shapes: no dispatch at all) or one relayout.comp
// dispatch in MODE_FLAT.
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/layout_common.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

// `requested` (TFLite's new-shape operand, one entry may be -1) agrees with
// the output tensor's dims.
Status CheckRequestedShape(const std::vector<int64_t>& requested,
                           const abi::Tensor& input, const abi::Tensor& output) {
  const std::vector<int> out = DimsVector(output.dims);
  if (requested.size() != out.size()) {
    return Status::Error("new shape has " + std::to_string(requested.size()) +
                         " dims, the output tensor " +
                         std::to_string(out.size()));
  }
  const long long elements = ShapeOf(input).elements();
  long long known = 1;
  for (int64_t d : requested) {
    if (d < -1 || d > (1LL << 31)) {
      return Status::Error("new shape holds dim " + std::to_string(d));
    }
    if (d != -1 && known <= (1LL << 31)) known *= d;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t expected =
        requested[i] == -1 && known > 0 ? elements / known : requested[i];
    if (expected != out[i]) {
      return Status::Error("new shape does not match the output tensor's dims");
    }
  }
  return Status::Ok();
}

Status CheckReshape(const NodeView& node, const GraphContext& graph,
                    const DeviceProfile&) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, 3));
  TFG_RETURN_IF_ERROR(CheckArity(node, 1, 2, 1));
  if (node.has_input(1)) {
    TFG_ASSIGN_OR_RETURN(
        std::vector<int64_t> shape,
        kernels::ConstantIntsOf(node, graph, 1, "the new shape"));
    // TFLite's kernel takes an int32 vector operand as the new shape even
    // when it is empty (a [0]-shaped operand asks for a scalar), and only
    // falls back to the parameters for other operands.
    if (node.input(1).type != abi::kInt32 || node.input(1).dims->size != 1) {
      return Status::Error("the new shape is not an int32 vector (TFLite would "
                           "read the parameters instead)");
    }
    TFG_RETURN_IF_ERROR(CheckRequestedShape(shape, node.input(0), node.output(0)));
  } else if (const auto* params = node.params<abi::ReshapeParams>();
             params != nullptr && params->num_dimensions > 0) {
    if (params->num_dimensions > abi::kReshapeParamsMaxDimensionCount) {
      return Status::Error("reshape parameters hold too many dims");
    }
    std::vector<int64_t> shape(params->shape,
                               params->shape + params->num_dimensions);
    TFG_RETURN_IF_ERROR(
        CheckRequestedShape(shape, node.input(0), node.output(0)));
  }
  // After the shape operand, so that a computed shape is named as such.
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  if (ShapeOf(node.input(0)).elements() != ShapeOf(node.output(0)).elements()) {
    return Status::Error("input and output hold different element counts");
  }
  return Status::Ok();
}

Status CheckSqueeze(const NodeView& node, const GraphContext& graph,
                    const DeviceProfile&) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, 2));
  TFG_RETURN_IF_ERROR(CheckArity(node, 1, 1, 1));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  const auto* params = node.params<abi::SqueezeParams>();
  if (params == nullptr) return Status::Error("missing builtin parameters");
  const std::vector<int> in = DimsVector(node.input(0).dims);
  std::vector<bool> squeezed(in.size(), params->num_squeeze_dims == 0);
  if (params->num_squeeze_dims > abi::kSqueezeParamsMaxDimensionCount) {
    return Status::Error("squeeze parameters hold too many dims");
  }
  for (int i = 0; i < params->num_squeeze_dims; ++i) {
    int axis = params->squeeze_dims[i];
    if (axis < 0) axis += static_cast<int>(in.size());
    if (axis < 0 || axis >= static_cast<int>(in.size())) {
      return Status::Error("squeeze axis out of range");
    }
    squeezed[static_cast<size_t>(axis)] = true;
  }
  std::vector<int> expected;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!squeezed[i] || in[i] != 1) expected.push_back(in[i]);
  }
  if (expected != DimsVector(node.output(0).dims)) {
    return Status::Error("output dims are not the input's with the squeezed "
                         "dims removed");
  }
  return Status::Ok();
}

// True if every element has the same PHWC4 address (vec4 index * 4 + lane)
// under both shapes, which hold the same elements in BHWC order.
bool SamePhwc4Layout(const Shape4& a, const Shape4& b) {
  if (a == b) return true;
  if (a.vec4_count() != b.vec4_count()) return false;
  auto address = [](const Shape4& s, long long flat) {
    const long long c = flat % s.c;
    long long t = flat / s.c;
    const long long w = t % s.w;
    t /= s.w;
    const long long h = t % s.h;
    const long long batch = t / s.h;
    return (((batch * s.slices() + c / 4) * s.h + h) * s.w + w) * 4 + c % 4;
  };
  for (long long flat = 0; flat < a.elements(); ++flat) {
    if (address(a, flat) != address(b, flat)) return false;
  }
  return true;
}

Status Build(const NodeView& node, GraphBuilder& builder) {
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  const Shape4 out_shape = ShapeOf(node.output(0));
  if (SamePhwc4Layout(builder.shape(in), out_shape)) {
    return builder.Alias(node.output_index(0),
                         builder.NewView(in, out_shape));
  }
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  kernels::RelayoutSpec spec;
  spec.mode = kernels::RelayoutSpec::Mode::kFlat;
  kernels::EmitRelayout(builder, in, out, spec, node.Describe());
  return Status::Ok();
}

}  // namespace

void RegisterReshapeKernels(KernelRegistry& registry) {
  static constexpr char kSummary[] =
      "A view of the input (no dispatch) when every element keeps its PHWC4 "
      "address, else one relayout in BHWC element order.";
  registry.AddBuiltin(
      abi::kTfLiteBuiltinReshape,
      {"reshape", CheckReshape, Build,
       "New shape from the params or a constant int32/int64 input (-1 "
       "resolved). A view of the input (no dispatch) when every element "
       "keeps its PHWC4 address, else one relayout in BHWC element order.",
       "A computed (non-constant) shape input; a shape that disagrees with "
       "the output tensor.",
       3});
  registry.AddBuiltin(abi::kTfLiteBuiltinSqueeze,
                      {"squeeze", CheckSqueeze, Build, kSummary,
                       "Output dims that are not the input's without the "
                       "squeezed dims.",
                       2});
}

}  // namespace tflite_gles
