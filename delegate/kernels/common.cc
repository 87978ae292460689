#include "delegate/kernels/common.h"

#include <cmath>
#include <cstdio>

namespace tflite_gles::kernels {

Status CheckVersion(const NodeView& node, int max_version) {
  if (node.version() > max_version) {
    return Status::Error("version " + std::to_string(node.version()) +
                         " is newer than this kernel knows (<= " +
                         std::to_string(max_version) + ")");
  }
  return Status::Ok();
}

Status CheckArity(const NodeView& node, int min_inputs, int max_inputs,
                  int outputs) {
  if (node.num_inputs() < min_inputs || node.num_inputs() > max_inputs) {
    return Status::Error("expected " + std::to_string(min_inputs) +
                         (min_inputs == max_inputs
                              ? ""
                              : ".." + std::to_string(max_inputs)) +
                         " inputs, got " + std::to_string(node.num_inputs()));
  }
  if (node.num_outputs() != outputs) {
    return Status::Error("expected " + std::to_string(outputs) +
                         " outputs, got " + std::to_string(node.num_outputs()));
  }
  return Status::Ok();
}

namespace {
Status CheckGpuTensor(const abi::Tensor& tensor, const char* role, int i) {
  if (tensor.type != abi::kFloat32) {
    return Status::Error(std::string(role) + " " + std::to_string(i) +
                         " is " + TypeName(tensor.type) +
                         ", only float32 tensors run on the GPU");
  }
  auto shape = ShapeFromDims(tensor.dims);
  if (!shape.ok()) {
    return shape.status().WithContext(std::string(role) + " " +
                                      std::to_string(i));
  }
  if (tensor.dims_signature != nullptr) {
    for (int d = 0; d < tensor.dims_signature->size; ++d) {
      if (tensor.dims_signature->data[d] < 0) {
        return Status::Error(std::string(role) + " " + std::to_string(i) +
                             " has a dynamic dimension");
      }
    }
  }
  return Status::Ok();
}
}  // namespace

Status CheckFloatTensors(const NodeView& node, const GraphContext& graph) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    if (graph.IsConstant(node.input_index(i))) continue;
    TFG_RETURN_IF_ERROR(CheckGpuTensor(node.input(i), "input", i));
  }
  for (int i = 0; i < node.num_outputs(); ++i) {
    TFG_RETURN_IF_ERROR(CheckGpuTensor(node.output(i), "output", i));
  }
  return Status::Ok();
}

Status CheckConstantInput(const NodeView& node, const GraphContext& graph,
                          int i, const char* what) {
  if (!node.has_input(i) || !graph.IsConstant(node.input_index(i))) {
    return Status::Error(std::string(what) + " (input " + std::to_string(i) +
                         ") must be a constant tensor");
  }
  return Status::Ok();
}

Status CheckNotConstantInput(const NodeView& node, const GraphContext& graph,
                             int i) {
  // A TFLite constant the GPU would re-read on every invoke (GraphContext:
  // read as data) is declined here all the same: these ops of a constant
  // belong folded into the model.
  if (graph.IsConstant(node.input_index(i)) || IsConstantTensor(node.input(i))) {
    return Status::Error("constant input (fold it offline)");
  }
  return Status::Ok();
}

Shape4 ShapeOf(const abi::Tensor& tensor) {
  auto shape = ShapeFromDims(tensor.dims);
  return shape.ok() ? *shape : Shape4{};
}

StatusOr<std::string> ActivationDefine(abi::FusedActivation activation) {
  switch (activation) {
    case abi::kActNone: return std::string();
    case abi::kActRelu: return std::string("ACT_RELU");
    case abi::kActRelu6: return std::string("ACT_RELU6");
    case abi::kActReluN1To1: return std::string("ACT_RELU_N1_TO_1");
    case abi::kActTanh: return std::string("ACT_TANH");
    case abi::kActSigmoid: return std::string("ACT_SIGMOID");
    default:
      return Status::Error("fused activation " +
                           std::to_string(static_cast<int>(activation)) +
                           " is not supported");
  }
}

void AddShapeDefines(const std::string& prefix, const Shape4& shape,
                     std::map<std::string, std::string>& defines) {
  defines[prefix + "_B"] = std::to_string(shape.b);
  defines[prefix + "_H"] = std::to_string(shape.h);
  defines[prefix + "_W"] = std::to_string(shape.w);
  defines[prefix + "_C"] = std::to_string(shape.c);
  defines[prefix + "_S"] = std::to_string(shape.slices());
}

Dispatch ElementwiseDispatch(const std::string& shader, const Shape4& shape,
                             const DeviceProfile& device) {
  Dispatch dispatch;
  dispatch.shader = shader;
  dispatch.grid = {static_cast<uint32_t>(shape.vec4_count()), 1, 1};
  dispatch.local = {device.preferred_local_x, 1, 1};
  return dispatch;
}

std::string FloatLiteral(float value) {
  if (std::isinf(value)) return value > 0 ? "(1.0/0.0)" : "(-1.0/0.0)";
  char text[64];
  std::snprintf(text, sizeof(text), "%.9e", static_cast<double>(value));
  return std::string("float(") + text + ")";
}

}  // namespace tflite_gles::kernels
