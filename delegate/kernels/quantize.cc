// QUANTIZE, DEQUANTIZE of activations, and the quantization simulator.
//
// In the float view (delegate/graph/quantization.h) a quantized tensor holds
// its real values, so DEQUANTIZE of an activation is the identity (a view of
// its input, no dispatch) and QUANTIZE (float -> uint8/int8, or a requantize
// int8 -> int8) is the identity followed by the simulator step that the
// partition builder appends to every quantized output: rounding to the
// output's grid and clamping to its range. With the simulator off the step
// only clamps to the output's range: TFLite's integer kernels always
// saturate there, and models rely on it (a TF1 MobileNet's convolutions have
// no fused activation; their output range [0, 6] is their ReLU6).
#include "delegate/kernels/quantize.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "delegate/graph/quantization.h"
#include "delegate/kernels/common.h"
#include "delegate/kernels/registry.h"

namespace tflite_gles {
namespace {

constexpr int kQuantizeMaxVersion = 2;    // 3: per-channel outputs
constexpr int kDequantizeMaxVersion = 5;  // 6: int4

Status CheckQuantize(const NodeView& node, const GraphContext& graph,
                     const DeviceProfile&) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, kQuantizeMaxVersion));
  TFG_RETURN_IF_ERROR(kernels::CheckArity(node, 1, 1, 1));
  if (!node.has_input(0)) return Status::Error("the input is missing");
  if (!IsQuantizedType(node.output(0).type)) {
    return Status::Error(std::string("output is ") + TypeName(node.output(0).type) +
                         " (only uint8/int8 outputs run in the float view)");
  }
  const abi::Type in = node.input(0).type;
  if (in != abi::kFloat32 && !IsQuantizedType(in)) {
    return Status::Error(std::string("input is ") + TypeName(in) +
                         " (float32, uint8 or int8 run in the float view)");
  }
  TFG_RETURN_IF_ERROR(kernels::CheckNotConstantInput(node, graph, 0));
  TFG_RETURN_IF_ERROR(kernels::CheckFloatTensors(node, graph));
  if (kernels::ShapeOf(node.input(0)) != kernels::ShapeOf(node.output(0))) {
    return Status::Error("input and output shapes differ");
  }
  return Status::Ok();
}

Status CheckDequantizeActivation(const NodeView& node, const GraphContext& graph,
                                 const DeviceProfile&) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, kDequantizeMaxVersion));
  TFG_RETURN_IF_ERROR(kernels::CheckArity(node, 1, 1, 1));
  if (!node.has_input(0)) return Status::Error("the input is missing");
  if (!IsQuantizedType(node.input(0).type)) {
    return Status::Error(std::string("input is ") + TypeName(node.input(0).type) +
                         " (activations of uint8/int8 only)");
  }
  if (node.output(0).type != abi::kFloat32) {
    return Status::Error(std::string("output is ") + TypeName(node.output(0).type) +
                         ", expected float32");
  }
  TFG_RETURN_IF_ERROR(kernels::CheckNotConstantInput(node, graph, 0));
  TFG_RETURN_IF_ERROR(kernels::CheckFloatTensors(node, graph));
  if (kernels::ShapeOf(node.input(0)) != kernels::ShapeOf(node.output(0))) {
    return Status::Error("input and output shapes differ");
  }
  return Status::Ok();
}

// Both ops are the identity on real values: the output is a view of the
// input (the simulator step, if any, follows as its own dispatch or fused).
Status BuildIdentity(const NodeView& node, GraphBuilder& builder) {
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  return builder.Alias(node.output_index(0),
                       builder.NewView(in, builder.shape(in)));
}

// Whether the simulator step after `node` would change nothing: an op that
// only moves or selects values (KeepsInputGrid) whose data inputs all have
// the output's params.
bool OutputStaysOnGrid(const NodeView& node, const QuantParams& out) {
  if (!KeepsInputGrid(node.op())) return false;
  int data_inputs = 0;
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    const abi::Tensor& input = node.input(i);
    if (input.type == abi::kInt32 || input.type == abi::kInt64) continue;  // shapes
    auto params = ActivationQuantization(input);
    if (!params.ok() || *params != out) return false;
    ++data_inputs;
  }
  return data_inputs > 0;
}

}  // namespace

void AddQuantizationSimulatorDefines(const QuantParams& q, bool round,
                                     bool round_stored_integers,
                                     std::map<std::string, std::string>& defines) {
  if (!round) {
    defines["OP_QUANT_CLAMP"] = "";
    defines["CLAMP_LO"] = kernels::FloatLiteral(DequantizeValue(q.qmin, q));
    defines["CLAMP_HI"] = kernels::FloatLiteral(DequantizeValue(q.qmax, q));
    return;
  }
  defines["OP_FAKE_QUANT"] = "";
  defines["Q_SCALE"] = kernels::FloatLiteral(q.scale);
  defines["Q_ROUND_ZERO"] = kernels::FloatLiteral(
      round_stored_integers ? static_cast<float>(q.zero_point) : 0.0f);
  defines["Q_LO"] = kernels::FloatLiteral(static_cast<float>(q.qmin - q.zero_point));
  defines["Q_HI"] = kernels::FloatLiteral(static_cast<float>(q.qmax - q.zero_point));
}

std::string QuantizeInputExpression(const QuantParams& q) {
  // 1 / scale in float, as TFLite's kernel computes it (QuantizeValueTiesToEven).
  return "ew_quantize_input(x, " + kernels::FloatLiteral(1.0f / q.scale) + ", " +
         kernels::FloatLiteral(q.scale) + ", " +
         kernels::FloatLiteral(static_cast<float>(q.qmin - q.zero_point)) + ", " +
         kernels::FloatLiteral(static_cast<float>(q.qmax - q.zero_point)) + ")";
}

StatusOr<int> SimulateQuantizedOutputs(const NodeView& node, GraphBuilder& builder) {
  const bool round = builder.graph().quantization().simulator;
  int steps = 0;
  for (int i = 0; i < node.num_outputs(); ++i) {
    const abi::Tensor& output = node.output(i);
    if (!IsQuantizedType(output.type)) continue;
    TFG_ASSIGN_OR_RETURN(QuantParams q, ActivationQuantization(output));
    if (OutputStaysOnGrid(node, q)) continue;
    // A QUANTIZE of a float partition input that is rounded to this grid at
    // upload (FindQuantizedUploads ran first): its output is on the grid
    // already, with TFLite's rounding, which the step would redo differently
    // on exact ties.
    if (node.op() == abi::kTfLiteBuiltinQuantize && node.input(0).type == abi::kFloat32) {
      auto upload = builder.quantized_uploads().find(node.input_index(0));
      if (upload != builder.quantized_uploads().end() && upload->second == q) continue;
    }
    const int index = node.output_index(i);
    TFG_ASSIGN_OR_RETURN(ValueId raw, builder.TensorValue(index));
    const Shape4 shape = builder.shape(raw);
    const ValueId simulated = builder.NewTemporary(shape);
    TFG_RETURN_IF_ERROR(builder.Rebind(index, simulated));
    Dispatch dispatch = kernels::ElementwiseDispatch("elementwise", shape, builder.device());
    dispatch.label = node.Describe() + (round ? " quantization simulator"
                                              : " quantized range clamp");
    // TFLite's integer AVERAGE_POOL_2D rounds the average of the stored
    // integers (half away from zero in q, not in q - zero_point): measured
    // one step apart on 14 % of a 2x2 pool's outputs when rounded in q - z.
    const bool stored_integers = node.op() == abi::kTfLiteBuiltinAveragePool2d;
    AddQuantizationSimulatorDefines(q, round, stored_integers, dispatch.defines);
    dispatch.defines["TOTAL"] = std::to_string(shape.vec4_count());
    kernels::AddShapeDefines("OUT", shape, dispatch.defines);
    kernels::AddShapeDefines("A", shape, dispatch.defines);
    dispatch.defines.erase("A_C");
    dispatch.outputs = {simulated};
    dispatch.inputs = {raw};
    dispatch.flops = shape.elements();
    builder.AddDispatch(std::move(dispatch));
    ++steps;
  }
  return steps;
}

// Float partition inputs that only QUANTIZE nodes of the partition read,
// all to the same params, and that are no partition output: rounded on the
// CPU at upload (GraphBuilder::QuantizeOnUpload).
Status FindQuantizedUploads(abi::Context* context, const std::vector<int>& nodes,
                            const std::vector<int>& inputs,
                            const std::vector<int>& outputs, GraphBuilder& builder) {
  std::map<int, std::vector<std::pair<int, int>>> readers;  // tensor -> (op, output)
  for (int node_index : nodes) {
    abi::Node* node = nullptr;
    abi::Registration* registration = nullptr;
    if (context->GetNodeAndRegistration(context, node_index, &node, &registration) !=
        abi::kOk) {
      return Status::Error("cannot read node " + std::to_string(node_index));
    }
    for (int i = 0; i < node->inputs->size; ++i) {
      const int output = node->outputs->size > 0 ? node->outputs->data[0] : -1;
      readers[node->inputs->data[i]].emplace_back(registration->builtin_code, output);
    }
  }
  for (int index : inputs) {
    if (index < 0 || context->tensors[index].type != abi::kFloat32) continue;
    if (std::find(outputs.begin(), outputs.end(), index) != outputs.end()) continue;
    auto it = readers.find(index);
    if (it == readers.end()) continue;
    std::optional<QuantParams> grid;
    bool only_quantize = true;
    for (const auto& [op, output] : it->second) {
      auto q = output >= 0 ? ActivationQuantization(context->tensors[output])
                           : StatusOr<QuantParams>(Status::Error("no output"));
      if (op != abi::kTfLiteBuiltinQuantize || !q.ok() || (grid && *grid != *q)) {
        only_quantize = false;
        break;
      }
      grid = *q;
    }
    if (only_quantize && grid) builder.QuantizeOnUpload(index, *grid);
  }
  return Status::Ok();
}

void RegisterQuantizeKernels(KernelRegistry& registry) {
  KernelCandidate quantize{"quantize", CheckQuantize, BuildIdentity};
  quantize.summary =
      "float32 -> uint8/int8, or a requantize between uint8/int8 params: in "
      "the float view the identity, then the quantization simulator rounds "
      "to the output's grid and clamps to its range (an epilogue of the "
      "producing dispatch where it fuses).";
  quantize.declines =
      "per-channel outputs (version 3), int16/int4 outputs, constant inputs, "
      "bad quantization params; every quantized tensor with the option "
      "quantized_models_allowed=false";
  quantize.max_version = kQuantizeMaxVersion;
  registry.AddBuiltin(abi::kTfLiteBuiltinQuantize, quantize);

  KernelCandidate dequantize{"dequantize_activation", CheckDequantizeActivation,
                             BuildIdentity};
  dequantize.summary =
      "A uint8/int8 activation (per-tensor params): in the float view the "
      "identity, a view of its input with no dispatch.";
  dequantize.declines =
      "int16 and float16 activations; bad quantization params; "
      "quantized_models_allowed=false";
  dequantize.max_version = kDequantizeMaxVersion;
  registry.AddBuiltin(abi::kTfLiteBuiltinDequantize, dequantize);
}

}  // namespace tflite_gles
