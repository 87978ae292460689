// ADD, SUB, MUL (two tensors, broadcast constants, fused activations) and
// RELU, RELU6, LOGISTIC: shaders/elementwise.comp.
#include <string>

#include "delegate/kernel_registry.h"
#include "delegate/kernels/common.h"

namespace tflite_gles {
namespace {

using kernels::ActivationDefine;
using kernels::AddShapeDefines;
using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

struct OpInfo {
  int op;
  const char* define;
  int max_version;
  bool binary;
};

constexpr OpInfo kOps[] = {
    {abi::kTfLiteBuiltinAdd, "OP_ADD", 5, true},
    {abi::kTfLiteBuiltinSub, "OP_SUB", 5, true},
    {abi::kTfLiteBuiltinMul, "OP_MUL", 7, true},
    {abi::kTfLiteBuiltinRelu, "OP_RELU", 3, false},
    {abi::kTfLiteBuiltinRelu6, "OP_RELU6", 3, false},
    {abi::kTfLiteBuiltinLogistic, "OP_LOGISTIC", 3, false},
};

const OpInfo& InfoFor(int op) {
  for (const OpInfo& info : kOps) {
    if (info.op == op) return info;
  }
  return kOps[0];  // unreachable: only registered ops get here
}

// The fused activation of a binary op (all three params structs start with
// it, but each is read through its own type).
abi::FusedActivation ActivationOf(const NodeView& node) {
  switch (node.op()) {
    case abi::kTfLiteBuiltinAdd:
      return node.params<abi::AddParams>()->activation;
    case abi::kTfLiteBuiltinSub:
      return node.params<abi::SubParams>()->activation;
    case abi::kTfLiteBuiltinMul:
      return node.params<abi::MulParams>()->activation;
    default:
      return abi::kActNone;
  }
}

// `dims` right-aligned to `rank` (TFLite broadcasting), as a Shape4.
StatusOr<Shape4> AlignedShape(const abi::IntArray* dims, int rank) {
  if (dims->size > rank) return Status::Error("input rank exceeds output rank");
  std::vector<int> aligned(static_cast<size_t>(rank - dims->size), 1);
  for (int i = 0; i < dims->size; ++i) aligned.push_back(dims->data[i]);
  std::vector<int> storage(1 + aligned.size());
  storage[0] = static_cast<int>(aligned.size());
  for (size_t i = 0; i < aligned.size(); ++i) storage[i + 1] = aligned[i];
  return ShapeFromDims(reinterpret_cast<const abi::IntArray*>(storage.data()));
}

Status CheckBroadcast(const Shape4& in, const Shape4& out) {
  auto fits = [](int a, int o) { return a == o || a == 1; };
  if (!fits(in.b, out.b) || !fits(in.h, out.h) || !fits(in.w, out.w) ||
      !fits(in.c, out.c)) {
    return Status::Error("input shape " + in.ToString() +
                         " does not broadcast to " + out.ToString());
  }
  return Status::Ok();
}

Status Check(const NodeView& node, const GraphContext& graph,
             const DeviceProfile& device) {
  const OpInfo& info = InfoFor(node.op());
  if (node.version() > info.max_version) {
    return Status::Error("version " + std::to_string(node.version()) +
                         " is newer than this kernel knows (<= " +
                         std::to_string(info.max_version) + ")");
  }
  TFG_RETURN_IF_ERROR(CheckArity(node, info.binary ? 2 : 1,
                                 info.binary ? 2 : 1, 1));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) return Status::Error("an input is missing");
    if (graph.IsConstant(node.input_index(i))) {
      auto values = graph.ConstantFloats(node.input_index(i));
      if (!values.ok()) return values.status();
    }
  }
  const Shape4 out = ShapeOf(node.output(0));
  if (!info.binary) {
    if (graph.IsConstant(node.input_index(0))) {
      return Status::Error("constant input (fold it offline)");
    }
    if (ShapeOf(node.input(0)) != out) {
      return Status::Error("input and output shapes differ");
    }
    return Status::Ok();
  }
  if (node.params<abi::AddParams>() == nullptr) {
    return Status::Error("missing builtin parameters");
  }
  TFG_RETURN_IF_ERROR(ActivationDefine(ActivationOf(node)).status());
  const int rank = node.output(0).dims->size;
  int splats = 0;
  for (int i = 0; i < 2; ++i) {
    TFG_ASSIGN_OR_RETURN(Shape4 aligned, AlignedShape(node.input(i).dims, rank));
    TFG_RETURN_IF_ERROR(CheckBroadcast(aligned, out));
    if (!graph.IsConstant(node.input_index(i)) &&
        aligned != ShapeOf(node.input(i))) {
      return Status::Error("input " + std::to_string(i) + " of lower rank (" +
                           ShapeOf(node.input(i)).ToString() +
                           ") would need a relayout to broadcast");
    }
    if (aligned.c == 1 && out.c > 1) ++splats;
  }
  if (splats > 1) return Status::Error("both inputs broadcast over channels");
  return Status::Ok();
}

// The Value for a binary op's input: constants are laid out in the
// broadcast-aligned shape.
StatusOr<ValueId> BroadcastInput(const NodeView& node, int i, int rank,
                                 GraphBuilder& builder) {
  if (!builder.graph().IsConstant(node.input_index(i))) {
    return builder.Input(node, i);
  }
  TFG_ASSIGN_OR_RETURN(Shape4 aligned, AlignedShape(node.input(i).dims, rank));
  TFG_ASSIGN_OR_RETURN(std::vector<float> data,
                       builder.graph().ConstantFloats(node.input_index(i)));
  return builder.NewConstantTensor(aligned, data);
}

Status Build(const NodeView& node, GraphBuilder& builder) {
  const OpInfo& info = InfoFor(node.op());
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  const Shape4 out_shape = builder.shape(out);
  Dispatch dispatch =
      kernels::ElementwiseDispatch("elementwise", out_shape, builder.device());
  dispatch.label = node.Describe();
  dispatch.defines[info.define] = "";
  dispatch.defines["TOTAL"] = std::to_string(out_shape.vec4_count());
  AddShapeDefines("OUT", out_shape, dispatch.defines);
  dispatch.outputs = {out};
  dispatch.flops = out_shape.elements();

  const int rank = node.output(0).dims->size;
  TFG_ASSIGN_OR_RETURN(ValueId a, info.binary
                                      ? BroadcastInput(node, 0, rank, builder)
                                      : builder.Input(node, 0));
  AddShapeDefines("A", builder.shape(a), dispatch.defines);
  dispatch.inputs = {a};
  if (builder.shape(a).c == 1 && out_shape.c > 1) dispatch.defines["A_SPLAT"] = "";
  if (info.binary) {
    TFG_ASSIGN_OR_RETURN(std::string act, ActivationDefine(ActivationOf(node)));
    if (!act.empty()) dispatch.defines[act] = "";
    const bool b_scalar_constant =
        builder.graph().IsConstant(node.input_index(1)) &&
        ShapeOf(node.input(1)).elements() == 1;
    if (b_scalar_constant && builder.shape(a) == out_shape) {
      // A scalar constant becomes a literal in the shader: no buffer, no load.
      TFG_ASSIGN_OR_RETURN(std::vector<float> value,
                           builder.graph().ConstantFloats(node.input_index(1)));
      dispatch.defines["B_LITERAL"] = "";
      dispatch.defines["B_VALUE"] = kernels::FloatLiteral(value[0]);
    } else {
      TFG_ASSIGN_OR_RETURN(ValueId b, BroadcastInput(node, 1, rank, builder));
      AddShapeDefines("B", builder.shape(b), dispatch.defines);
      dispatch.inputs.push_back(b);
      if (builder.shape(b).c == 1 && out_shape.c > 1) {
        dispatch.defines["B_SPLAT"] = "";
      }
    }
  }
  // Shape constants the chosen variant does not read are dropped, so that
  // programs differing only in unused constants are shared.
  if (dispatch.inputs.size() < 2) {
    for (const char* unused : {"B_B", "B_H", "B_W", "B_C", "B_S"}) {
      dispatch.defines.erase(unused);
    }
  }
  dispatch.defines.erase("A_C");
  dispatch.defines.erase("B_C");
  builder.AddDispatch(std::move(dispatch));
  return Status::Ok();
}

}  // namespace

void RegisterElementwiseKernels(KernelRegistry& registry) {
  for (const OpInfo& info : kOps) {
    registry.AddBuiltin(info.op, {"elementwise", Check, Build});
  }
}

}  // namespace tflite_gles
