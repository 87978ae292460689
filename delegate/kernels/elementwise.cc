// Elementwise ops, all in shaders/elementwise.comp: one optional binary step
// (ADD SUB MUL DIV MAXIMUM MINIMUM POW PRELU LOGICAL_AND) followed by one
// optional unary step (fused activations and the unary ops). Binary ops
// broadcast constants of lower rank, per-channel vectors, scalars (a shader
// literal) and single-channel tensors (a splat across the vec4).
#include <deque>
#include <algorithm>
#include <string>
#include <vector>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/common.h"

namespace tflite_gles {
namespace {

using kernels::ActivationDefine;
using kernels::AddShapeDefines;
using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

enum class Params { kNone, kFusedActivation, kLeakyReluAlpha };
enum class Types { kFloat, kBool };

struct OpInfo {
  int op;
  const char* binary;  // define of the binary step, or nullptr (unary op)
  const char* unary;   // define of the unary step, or nullptr
  int max_version;
  Params params;
  Types types;
  const char* summary;
};

constexpr char kBroadcasting[] =
    "Either input may be a constant of lower rank broadcast over the other "
    "(per-channel vector; a scalar second input becomes a shader literal) or "
    "a tensor of the same rank with dimensions of size 1 (a single channel "
    "is splatted over the channels).";

constexpr OpInfo kOps[] = {
    {abi::kTfLiteBuiltinAdd, "OP_ADD", nullptr, 5, Params::kFusedActivation,
     Types::kFloat, "a + b with fused NONE/RELU/RELU6/RELU_N1_TO_1"},
    {abi::kTfLiteBuiltinSub, "OP_SUB", nullptr, 5, Params::kFusedActivation,
     Types::kFloat, "a - b with fused NONE/RELU/RELU6/RELU_N1_TO_1"},
    {abi::kTfLiteBuiltinMul, "OP_MUL", nullptr, 7, Params::kFusedActivation,
     Types::kFloat, "a * b with fused NONE/RELU/RELU6/RELU_N1_TO_1"},
    {abi::kTfLiteBuiltinDiv, "OP_DIV", nullptr, 2, Params::kFusedActivation,
     Types::kFloat,
     "a / b with fused NONE/RELU/RELU6/RELU_N1_TO_1 (x/0 and overflows "
     "give +-FLT_MAX and 0/0 NaN, like the CPU)"},
    {abi::kTfLiteBuiltinMaximum, "OP_MAXIMUM", nullptr, 4, Params::kNone,
     Types::kFloat, "max(a, b)"},
    {abi::kTfLiteBuiltinMinimum, "OP_MINIMUM", nullptr, 4, Params::kNone,
     Types::kFloat, "min(a, b)"},
    {abi::kTfLiteBuiltinSquaredDifference, "OP_SUB", "OP_SQUARE", 2,
     Params::kNone, Types::kFloat, "(a - b)^2"},
    {abi::kTfLiteBuiltinPow, "OP_POW", nullptr, 1, Params::kNone, Types::kFloat,
     "a^b as std::pow: negative bases with integral exponents keep their "
     "sign, other negative bases give NaN"},
    {abi::kTfLiteBuiltinPrelu, "OP_PRELU", nullptr, 1, Params::kNone,
     Types::kFloat,
     "x >= 0 ? x : alpha * x; alpha a constant broadcast over H/W/C (any "
     "dimension of size 1) or a tensor of the same shape"},
    {abi::kTfLiteBuiltinLogicalAnd, "OP_LOGICAL_AND", nullptr, 1, Params::kNone,
     Types::kBool,
     "bool tensors (0.0/1.0 on the GPU; converted at partition boundaries)"},
    {abi::kTfLiteBuiltinRelu, nullptr, "ACT_RELU", 3, Params::kNone,
     Types::kFloat, "max(x, 0)"},
    {abi::kTfLiteBuiltinRelu6, nullptr, "ACT_RELU6", 3, Params::kNone,
     Types::kFloat, "clamp(x, 0, 6)"},
    {abi::kTfLiteBuiltinReluN1To1, nullptr, "ACT_RELU_N1_TO_1", 1,
     Params::kNone, Types::kFloat, "clamp(x, -1, 1)"},
    {abi::kTfLiteBuiltinRelu0To1, nullptr, "OP_RELU_0_TO_1", 1, Params::kNone,
     Types::kFloat, "clamp(x, 0, 1)"},
    {abi::kTfLiteBuiltinLogistic, nullptr, "ACT_SIGMOID", 3, Params::kNone,
     Types::kFloat, "1 / (1 + exp(-x)), saturating to 0/1 for large |x|"},
    {abi::kTfLiteBuiltinTanh, nullptr, "ACT_TANH", 3, Params::kNone,
     Types::kFloat, "tanh(x), saturating to +-1 for large |x|"},
    {abi::kTfLiteBuiltinExp, nullptr, "OP_EXP", 2, Params::kNone, Types::kFloat,
     "exp(x); overflows to +Inf above ~88.7 like the CPU (fp16 storage "
     "saturates at 65504)"},
    {abi::kTfLiteBuiltinSqrt, nullptr, "OP_SQRT", 1, Params::kNone,
     Types::kFloat, "sqrt(x)"},
    {abi::kTfLiteBuiltinRsqrt, nullptr, "OP_RSQRT", 2, Params::kNone,
     Types::kFloat, "1 / sqrt(x)"},
    {abi::kTfLiteBuiltinAbs, nullptr, "OP_ABS", 5, Params::kNone, Types::kFloat,
     "|x|"},
    {abi::kTfLiteBuiltinNeg, nullptr, "OP_NEG", 1, Params::kNone, Types::kFloat,
     "-x"},
    {abi::kTfLiteBuiltinSquare, nullptr, "OP_SQUARE", 1, Params::kNone,
     Types::kFloat, "x * x"},
    {abi::kTfLiteBuiltinLeakyRelu, nullptr, "OP_LEAKY_RELU", 2,
     Params::kLeakyReluAlpha, Types::kFloat,
     "x >= 0 ? x : alpha * x (alpha a shader literal)"},
    {abi::kTfLiteBuiltinElu, nullptr, "OP_ELU", 1, Params::kNone, Types::kFloat,
     "x > 0 ? x : exp(x) - 1"},
    {abi::kTfLiteBuiltinHardSwish, nullptr, "OP_HARD_SWISH", 1, Params::kNone,
     Types::kFloat, "x * relu6(x + 3) / 6"},
};

constexpr char kUnaryDeclines[] =
    "tensors other than float32 (or uint8/int8 where the op has a quantized "
    "form); input shape != output shape; a constant input "
    "(fold it offline); rank > 4 or dynamic shapes; newer op versions";
constexpr char kBinaryDeclines[] =
    "tensors other than float32 (or uint8/int8 where the op has a quantized "
    "form); fused TANH/SIGMOID/SIGN_BIT (TFLite's CPU kernels "
    "ignore TANH/SIGMOID there, so results would disagree); inputs that do "
    "not broadcast to the output, or an output that is not their broadcast; "
    "a non-constant input of lower rank (would need a relayout); both inputs "
    "broadcast over channels; rank > 4 or dynamic shapes; newer op versions";
constexpr char kBoolDeclines[] =
    "non-bool tensors; inputs that do not broadcast to the output, or an "
    "output that is not their broadcast; a non-constant input of lower rank; "
    "rank > 4; newer op versions";

const OpInfo& InfoFor(int op) {
  for (const OpInfo& info : kOps) {
    if (info.op == op) return info;
  }
  return kOps[0];  // unreachable: only registered ops get here
}

// The fused activation of ADD/SUB/MUL/DIV, each read through its own type.
abi::FusedActivation ActivationOf(const NodeView& node) {
  switch (node.op()) {
    case abi::kTfLiteBuiltinAdd:
      return node.params<abi::AddParams>()->activation;
    case abi::kTfLiteBuiltinSub:
      return node.params<abi::SubParams>()->activation;
    case abi::kTfLiteBuiltinMul:
      return node.params<abi::MulParams>()->activation;
    case abi::kTfLiteBuiltinDiv:
      return node.params<abi::DivParams>()->activation;
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

// A declared output that is not what TFLite's Prepare makes of a binary
// op's inputs (their broadcast, right-aligned). Checked before anything
// else the node may be declined for: partition_plan.cc keeps the readers
// of a node declined over its "output" on the CPU (TFLite corrects the
// declaration only after delegation), and seed 4's case 1560 (a MUL of two
// channel splats, declared [1,4,1,2]) slipped through on another reason.
// Inputs that do not broadcast at all are left to the checks below (TFLite
// refuses them).
Status CheckDeclaredBroadcast(const NodeView& node) {
  const abi::IntArray* a = node.input(0).dims;
  const abi::IntArray* b = node.input(1).dims;
  const abi::IntArray* out = node.output(0).dims;
  if (a == nullptr || b == nullptr || out == nullptr) return Status::Ok();
  const int rank = std::max(a->size, b->size);
  std::vector<int> broadcast(static_cast<size_t>(rank));
  for (int k = 0; k < rank; ++k) {
    const int da = k < rank - a->size ? 1 : a->data[k - (rank - a->size)];
    const int db = k < rank - b->size ? 1 : b->data[k - (rank - b->size)];
    if (da != db && da != 1 && db != 1) return Status::Ok();
    broadcast[static_cast<size_t>(k)] = da == 1 ? db : da;
  }
  const std::vector<int> declared(out->data, out->data + std::max(out->size, 0));
  if (declared == broadcast) return Status::Ok();
  auto text = [](const std::vector<int>& dims) {
    std::string shape;
    for (size_t k = 0; k < dims.size(); ++k) shape += (k ? "x" : "") + std::to_string(dims[k]);
    return shape.empty() ? std::string("scalar") : shape;
  };
  return Status::Error("declared output shape " + text(declared) +
                       " is not the broadcast of the inputs (" + text(broadcast) + ")");
}

Status CheckBroadcast(const Shape4& in, const Shape4& out) {
  auto fits = [](int a, int o) { return a == o || a == 1; };
  if (!fits(in.b, out.b) || !fits(in.h, out.h) || !fits(in.w, out.w) ||
      !fits(in.c, out.c)) {
    return Status::Error("input shape " + in.ToString() +
                         " does not broadcast to the output shape " + out.ToString());
  }
  return Status::Ok();
}

// LOGICAL_AND: every tensor is bool (constants included) with a GPU shape.
Status CheckBoolTensors(const NodeView& node) {
  auto check = [](const abi::Tensor& tensor, const char* role,
                  int i) -> Status {
    if (tensor.type != abi::kBool) {
      return Status::Error(std::string(role) + " " + std::to_string(i) +
                           " is " + TypeName(tensor.type) + ", expected bool");
    }
    return ShapeFromDims(tensor.dims).status();
  };
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) return Status::Error("an input is missing");
    TFG_RETURN_IF_ERROR(check(node.input(i), "input", i));
  }
  return check(node.output(0), "output", 0);
}

Status Check(const NodeView& node, const GraphContext& graph,
             const DeviceProfile& device) {
  const OpInfo& info = InfoFor(node.op());
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, info.max_version));
  const bool binary = info.binary != nullptr;
  TFG_RETURN_IF_ERROR(CheckArity(node, binary ? 2 : 1, binary ? 2 : 1, 1));
  if (binary && node.has_input(0) && node.has_input(1)) {
    TFG_RETURN_IF_ERROR(CheckDeclaredBroadcast(node));
  }
  if (info.types == Types::kBool) {
    TFG_RETURN_IF_ERROR(CheckBoolTensors(node));
  } else {
    TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  }
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) return Status::Error("an input is missing");
    if (graph.IsConstant(node.input_index(i))) {
      auto values = graph.ConstantFloats(node.input_index(i));
      if (!values.ok()) return values.status();
    }
  }
  if (info.params != Params::kNone && node.node()->builtin_data == nullptr) {
    return Status::Error("missing builtin parameters");
  }
  const Shape4 out = ShapeOf(node.output(0));
  if (!binary) {
    TFG_RETURN_IF_ERROR(kernels::CheckNotConstantInput(node, graph, 0));
    if (ShapeOf(node.input(0)) != out) {
      return Status::Error("input and output shapes differ");
    }
    return Status::Ok();
  }
  if (info.params == Params::kFusedActivation) {
    const abi::FusedActivation activation = ActivationOf(node);
    if (activation == abi::kActTanh || activation == abi::kActSigmoid) {
      // Measured with the real runtime: its float ADD/SUB/MUL/DIV only clamp
      // for the ReLU family and return a + b unchanged for these.
      return Status::Error("fused TANH/SIGMOID: TFLite's CPU kernels ignore "
                           "it, so GPU results would disagree");
    }
    TFG_RETURN_IF_ERROR(ActivationDefine(activation).status());
  }
  const int rank = node.output(0).dims->size;
  int splats = 0;
  // The output must be exactly the broadcast of the inputs: a declared
  // output larger than both (which the runtime does not always correct
  // before delegating) would be filled with values the CPU never computes.
  Shape4 broadcast{1, 1, 1, 1};
  for (int i = 0; i < 2; ++i) {
    TFG_ASSIGN_OR_RETURN(Shape4 aligned, AlignedShape(node.input(i).dims, rank));
    TFG_RETURN_IF_ERROR(CheckBroadcast(aligned, out));
    broadcast = {std::max(broadcast.b, aligned.b), std::max(broadcast.h, aligned.h),
                 std::max(broadcast.w, aligned.w), std::max(broadcast.c, aligned.c)};
    if (!graph.IsConstant(node.input_index(i)) &&
        aligned != ShapeOf(node.input(i))) {
      return Status::Error("input " + std::to_string(i) + " of lower rank (" +
                           ShapeOf(node.input(i)).ToString() +
                           ") would need a relayout to broadcast");
    }
    if (aligned.c == 1 && out.c > 1) ++splats;
  }
  if (splats > 1) return Status::Error("both inputs broadcast over channels");
  if (broadcast != out) {
    return Status::Error("output shape " + out.ToString() +
                         " is not the broadcast of the inputs (" +
                         broadcast.ToString() + ")");
  }
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
  const bool binary = info.binary != nullptr;
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  const Shape4 out_shape = builder.shape(out);
  Dispatch dispatch =
      kernels::ElementwiseDispatch("elementwise", out_shape, builder.device());
  dispatch.label = node.Describe();
  if (binary) dispatch.defines[info.binary] = "";
  if (info.unary != nullptr) dispatch.defines[info.unary] = "";
  if (info.params == Params::kFusedActivation) {
    TFG_ASSIGN_OR_RETURN(std::string act, ActivationDefine(ActivationOf(node)));
    if (!act.empty()) dispatch.defines[act] = "";
  }
  if (info.params == Params::kLeakyReluAlpha) {
    dispatch.defines["ALPHA"] =
        kernels::FloatLiteral(node.params<abi::LeakyReluParams>()->alpha);
  }
  dispatch.defines["TOTAL"] = std::to_string(out_shape.vec4_count());
  AddShapeDefines("OUT", out_shape, dispatch.defines);
  dispatch.outputs = {out};
  dispatch.flops = out_shape.elements();

  const int rank = node.output(0).dims->size;
  TFG_ASSIGN_OR_RETURN(ValueId a, binary ? BroadcastInput(node, 0, rank, builder)
                                         : builder.Input(node, 0));
  AddShapeDefines("A", builder.shape(a), dispatch.defines);
  dispatch.inputs = {a};
  if (builder.shape(a).c == 1 && out_shape.c > 1) dispatch.defines["A_SPLAT"] = "";
  if (binary) {
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
  // Binary ops' summaries add the broadcasting rules; the registry keeps
  // pointers, so the texts live as long as the process.
  static auto* summaries = new std::deque<std::string>();
  for (const OpInfo& info : kOps) {
    KernelCandidate candidate{"elementwise", Check, Build};
    summaries->push_back(info.binary == nullptr
                             ? std::string(info.summary) + "."
                             : std::string(info.summary) + ". " + kBroadcasting);
    candidate.summary = summaries->back().c_str();
    candidate.declines = info.types == Types::kBool ? kBoolDeclines
                         : info.binary != nullptr   ? kBinaryDeclines
                                                    : kUnaryDeclines;
    candidate.max_version = info.max_version;
    registry.AddBuiltin(info.op, candidate);
  }
}

}  // namespace tflite_gles
