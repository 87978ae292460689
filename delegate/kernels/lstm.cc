// LSTM with the basic kernel (kernel_type BASIC): one fused 4-gate cell.
// Inputs: input [B, I], prev_activation [B, D], weights [4D, I + D]
// (constant), biases [4D] (constant), prev_state [B, D]. Outputs:
// activation [B, D], state [B, D], concat_temp [B, I + D], activation_temp
// [B, 4D]. Three dispatches: concat.comp (concat_temp), then lstm.comp
// MODE_GATES (the fully-connected product) and MODE_CELL (gates, state).
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/layout_common.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

enum Inputs { kInput, kPrevActivation, kWeights, kBiases, kPrevState };
enum Outputs { kActivation, kState, kConcatTemp, kActivationTemp };

Status CheckDims(const abi::Tensor& tensor, std::vector<int> expected,
                 const char* what) {
  if (DimsVector(tensor.dims) != expected) {
    return Status::Error(std::string(what) + " has unexpected dims");
  }
  return Status::Ok();
}

Status Check(const NodeView& node, const GraphContext& graph,
             const DeviceProfile&) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, 4));
  const auto* params = node.params<abi::LstmParams>();
  if (params == nullptr) return Status::Error("missing builtin parameters");
  if (node.version() < 2 || params->kernel_type != abi::kLstmBasicKernel) {
    return Status::Error("only the basic LSTM kernel (kernel_type BASIC, "
                         "version >= 2) runs on the GPU; the full kernel "
                         "does not");
  }
  if (params->activation != abi::kActTanh) {
    return Status::Error("the basic LSTM cell is defined with tanh only");
  }
  if (params->cell_clip != 0.0f || params->proj_clip != 0.0f) {
    return Status::Error("cell/projection clipping is not supported");
  }
  TFG_RETURN_IF_ERROR(CheckArity(node, 5, 5, 4));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  TFG_RETURN_IF_ERROR(
      kernels::CheckConstantInput(node, graph, kWeights, "weights"));
  TFG_RETURN_IF_ERROR(
      kernels::CheckConstantInput(node, graph, kBiases, "biases"));
  TFG_ASSIGN_OR_RETURN(std::vector<float> weights,
                       graph.ConstantFloats(node.input_index(kWeights)));
  TFG_ASSIGN_OR_RETURN(std::vector<float> biases,
                       graph.ConstantFloats(node.input_index(kBiases)));
  const std::vector<int> input = DimsVector(node.input(kInput).dims);
  const std::vector<int> prev = DimsVector(node.input(kPrevActivation).dims);
  if (input.size() != 2 || prev.size() != 2 || prev[0] != input[0]) {
    return Status::Error("input and prev_activation must be [batch, depth]");
  }
  const int batch = input[0], depth = prev[1], total = input[1] + prev[1];
  // MODE_GATES loops over the input slices in one invocation.
  if ((total + 3) / 4 > kernels::kMaxLoopIterationsPerInvocation) {
    return Status::Error("input + activation depth " + std::to_string(total) +
                         " exceeds the per-invocation loop limit");
  }
  TFG_RETURN_IF_ERROR(CheckDims(node.input(kWeights), {4 * depth, total}, "weights"));
  TFG_RETURN_IF_ERROR(CheckDims(node.input(kBiases), {4 * depth}, "biases"));
  // The packing reads exactly these many values: a truncated buffer in a
  // malformed model must not be read past its end.
  if (weights.size() != static_cast<size_t>(4 * depth) * total ||
      biases.size() != static_cast<size_t>(4 * depth)) {
    return Status::Error("weights or biases hold fewer values than their dims");
  }
  TFG_RETURN_IF_ERROR(CheckDims(node.input(kPrevState), {batch, depth}, "prev_state"));
  TFG_RETURN_IF_ERROR(CheckDims(node.output(kActivation), {batch, depth}, "activation"));
  TFG_RETURN_IF_ERROR(CheckDims(node.output(kState), {batch, depth}, "state"));
  TFG_RETURN_IF_ERROR(CheckDims(node.output(kConcatTemp), {batch, total}, "concat_temp"));
  TFG_RETURN_IF_ERROR(
      CheckDims(node.output(kActivationTemp), {batch, 4 * depth}, "activation_temp"));
  return Status::Ok();
}

// weights [rows, cols] row-major -> per (output slice, input slice) four
// vec4s, one per output lane, each holding 4 consecutive input channels.
std::vector<float> PackWeights(const std::vector<float>& weights, int rows,
                               int cols) {
  const int out_slices = (rows + 3) / 4, in_slices = (cols + 3) / 4;
  std::vector<float> packed(static_cast<size_t>(out_slices) * in_slices * 16, 0.0f);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const size_t at =
          ((static_cast<size_t>(r / 4) * in_slices + c / 4) * 4 + r % 4) * 4 + c % 4;
      packed[at] = weights[static_cast<size_t>(r) * cols + c];
    }
  }
  return packed;
}

Status Build(const NodeView& node, GraphBuilder& builder) {
  const GraphContext& graph = builder.graph();
  TFG_ASSIGN_OR_RETURN(ValueId input, builder.Input(node, kInput));
  TFG_ASSIGN_OR_RETURN(ValueId prev_activation, builder.Input(node, kPrevActivation));
  TFG_ASSIGN_OR_RETURN(ValueId prev_state, builder.Input(node, kPrevState));
  TFG_ASSIGN_OR_RETURN(ValueId activation, builder.Output(node, kActivation));
  TFG_ASSIGN_OR_RETURN(ValueId state, builder.Output(node, kState));
  TFG_ASSIGN_OR_RETURN(ValueId concat_temp, builder.Output(node, kConcatTemp));
  TFG_ASSIGN_OR_RETURN(ValueId activation_temp,
                       builder.Output(node, kActivationTemp));
  const Shape4 concat_shape = builder.shape(concat_temp);
  const Shape4 temp_shape = builder.shape(activation_temp);
  const Shape4 state_shape = builder.shape(state);
  const int depth = state_shape.c;

  kernels::EmitConcat(builder, {input, prev_activation}, /*axis4=*/3,
                      concat_temp, "", node.Describe() + " concat");

  TFG_ASSIGN_OR_RETURN(std::vector<float> weights,
                       graph.ConstantFloats(node.input_index(kWeights)));
  TFG_ASSIGN_OR_RETURN(std::vector<float> biases,
                       graph.ConstantFloats(node.input_index(kBiases)));
  const ValueId packed_weights =
      builder.NewConstant(PackWeights(weights, 4 * depth, concat_shape.c));
  const ValueId packed_biases = builder.NewConstant(biases);

  Dispatch gates = kernels::ElementwiseDispatch("lstm", temp_shape, builder.device());
  gates.label = node.Describe() + " gates";
  gates.defines["MODE_GATES"] = "";
  gates.defines["TOTAL"] = std::to_string(temp_shape.vec4_count());
  gates.defines["IN_S"] = std::to_string(concat_shape.slices());
  gates.defines["OUT_S"] = std::to_string(temp_shape.slices());
  gates.defines["DEPTH"] = std::to_string(depth);
  gates.outputs = {activation_temp};
  gates.inputs = {concat_temp, packed_weights, packed_biases};
  gates.flops = 2LL * temp_shape.elements() * concat_shape.c;
  builder.AddDispatch(std::move(gates));

  Dispatch cell = kernels::ElementwiseDispatch("lstm", state_shape, builder.device());
  cell.label = node.Describe() + " cell";
  cell.defines["MODE_CELL"] = "";
  cell.defines["TOTAL"] = std::to_string(state_shape.vec4_count());
  cell.defines["OUT_S"] = std::to_string(state_shape.slices());
  cell.defines["TEMP_S"] = std::to_string(temp_shape.slices());
  cell.defines["DEPTH"] = std::to_string(depth);
  cell.outputs = {activation, state};
  cell.inputs = {activation_temp, prev_state};
  cell.flops = 20LL * state_shape.elements();
  builder.AddDispatch(std::move(cell));
  // The CPU kernel copies the new activation and state into its
  // prev_activation / prev_state inputs after each run (they are its
  // recurrent state); do the same.
  builder.AddWriteBack(activation, node.input_index(kPrevActivation));
  builder.AddWriteBack(state, node.input_index(kPrevState));
  return Status::Ok();
}

}  // namespace

void RegisterLstmKernels(KernelRegistry& registry) {
  registry.AddBuiltin(
      abi::kTfLiteBuiltinLstm,
      {"lstm_basic", Check, Build,
       "kernel_type BASIC (version >= 2): concat, fully-connected gates, cell "
       "update; constant weights and biases; writes the new activation and "
       "state back into its state inputs as the CPU kernel does.",
       "The full kernel; clipping; activations other than tanh.", 4});
}

}  // namespace tflite_gles
