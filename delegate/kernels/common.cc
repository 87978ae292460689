#include "delegate/kernels/common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tflite_gles::kernels {

namespace {
// Whether the node has uint8/int8 tensors (activations, or the int8 weights
// of a hybrid op): then the versions its quantized forms use are allowed.
bool HasQuantizedTensors(const NodeView& node) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (node.has_input(i) && IsQuantizedType(node.input(i).type)) return true;
  }
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (IsQuantizedType(node.output(i).type)) return true;
  }
  return false;
}
}  // namespace

Status CheckVersion(const NodeView& node, int max_version) {
  if (HasQuantizedTensors(node)) {
    max_version = std::max(max_version, QuantizedMaxVersion(node.op()));
  }
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
// uint8/int8 tensors run in the float view (delegate/graph/quantization.h) where
// the options allow it, the op has a quantized form here and the params are
// sound; everything else but float32 stays on the CPU.
Status CheckQuantizedTensor(const NodeView& node, const GraphContext& graph,
                            const abi::Tensor& tensor, const std::string& what) {
  if (!graph.quantization().allowed) {
    return Status::Error(what + " is " + TypeName(tensor.type) +
                         " (quantized tensors are declined: "
                         "quantized_models_allowed=false)");
  }
  if (QuantizedMaxVersion(node.op()) == 0) {
    return Status::Error(what + " is " + TypeName(tensor.type) +
                         ": this op has no quantized form on the GPU");
  }
  return ActivationQuantization(tensor).status().WithContext(what);
}

Status CheckGpuTensor(const NodeView& node, const GraphContext& graph,
                      const abi::Tensor& tensor, const char* role, int i) {
  const std::string what = std::string(role) + " " + std::to_string(i);
  if (IsQuantizedType(tensor.type)) {
    TFG_RETURN_IF_ERROR(CheckQuantizedTensor(node, graph, tensor, what));
  } else if (tensor.type != abi::kFloat32) {
    return Status::Error(what + " is " + TypeName(tensor.type) +
                         (tensor.type == abi::kInt16
                              ? " (int16 activations are not run on the GPU)"
                              : ", only float32, uint8 and int8 tensors run on "
                                "the GPU"));
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

namespace {
// The quantized-model rules TFLite's integer kernels impose beyond each
// tensor's own params, where the float view would otherwise answer
// differently (tests/python/hostile_quant.py):
//  * ops that copy or select the stored integers (MAX_POOL_2D, RESHAPE,
//    slices, TRANSPOSE ...) never rescale: their output params must equal
//    their input's;
//  * SOFTMAX and LOGISTIC outputs have the fixed scale 1/256 (zero point 0
//    for uint8, -128 for int8);
//  * a convolution's int32 bias is read at input scale x weight scale,
//    whatever scale its tensor claims: a different one is declined.
Status CheckQuantizedNode(const NodeView& node, const GraphContext& graph) {
  if (node.num_outputs() < 1 || !IsQuantizedType(node.output(0).type)) {
    return Status::Ok();
  }
  auto out = ActivationQuantization(node.output(0));
  if (!out.ok()) return Status::Ok();  // CheckGpuTensor says why
  const int op = node.op();
  if (KeepsInputGrid(op) && op != abi::kTfLiteBuiltinConcatenation &&
      op != abi::kTfLiteBuiltinRelu) {
    for (int i = 0; i < node.num_inputs(); ++i) {
      if (!node.has_input(i) || !IsQuantizedType(node.input(i).type)) continue;
      auto in = ActivationQuantization(node.input(i));
      if (in.ok() && *in != *out) {
        return Status::Error("output quantization params differ from input " +
                             std::to_string(i) + "'s; TFLite's integer kernel copies "
                             "the stored integers without rescaling");
      }
    }
  }
  // TFLite's integer AVERAGE_POOL_2D and RESIZE_BILINEAR average or
  // interpolate the stored integers and write the result as it is: the
  // output's params are never applied (its Prepare only DCHECKs them). The
  // float view rescales to the output's grid, which answers differently
  // (many steps apart) whenever the params differ.
  if (op == abi::kTfLiteBuiltinAveragePool2d || op == abi::kTfLiteBuiltinResizeBilinear) {
    if (node.num_inputs() > 0 && node.has_input(0) && IsQuantizedType(node.input(0).type)) {
      auto in = ActivationQuantization(node.input(0));
      if (in.ok() && *in != *out) {
        return Status::Error("output quantization params differ from the input's; "
                             "TFLite's integer kernel averages the stored integers "
                             "without rescaling");
      }
    }
  }
  // TFLite's CONCATENATION refuses int8 inputs whose scale or zero point is
  // not exactly the output's (its int8 kernel never rescales; uint8 inputs
  // are rescaled, as the float view does).
  if (op == abi::kTfLiteBuiltinConcatenation && node.output(0).type == abi::kInt8) {
    for (int i = 0; i < node.num_inputs(); ++i) {
      if (!node.has_input(i)) continue;
      const abi::Tensor& input = node.input(i);
      if (input.params.scale != node.output(0).params.scale ||
          input.params.zero_point != node.output(0).params.zero_point) {
        return Status::Error("int8 input " + std::to_string(i) +
                             " has another scale or zero point than the output "
                             "(TFLite's int8 CONCATENATION refuses to rescale)");
      }
    }
  }
  if (op == abi::kTfLiteBuiltinSoftmax || op == abi::kTfLiteBuiltinLogistic) {
    const int zero = node.output(0).type == abi::kUInt8 ? 0 : -128;
    if (out->scale != 1.0f / 256.0f || out->zero_point != zero) {
      return Status::Error("a quantized output must have scale 1/256 and zero point " +
                           std::to_string(zero) + " (TFLite's kernels refuse others)");
    }
  }
  int data = -1, weights = -1, bias = -1;
  if (op == abi::kTfLiteBuiltinConv2d || op == abi::kTfLiteBuiltinDepthwiseConv2d ||
      op == abi::kTfLiteBuiltinFullyConnected) {
    data = 0, weights = 1, bias = 2;
  } else if (op == abi::kTfLiteBuiltinTransposeConv) {
    data = 2, weights = 1, bias = 3;
  }
  if (bias >= 0 && node.num_inputs() > bias && node.has_input(bias) &&
      node.input(bias).type == abi::kInt32 && HasAffineQuantization(node.input(bias)) &&
      HasAffineQuantization(node.input(weights)) && IsQuantizedType(node.input(data).type)) {
    const auto* b = static_cast<const abi::AffineQuantization*>(
        node.input(bias).quantization.params);
    const auto* w = static_cast<const abi::AffineQuantization*>(
        node.input(weights).quantization.params);
    const double in_scale = node.input(data).params.scale;
    for (int c = 0; c < b->scale->size; ++c) {
      const double expected = in_scale * w->scale->data[w->scale->size > 1 ? c % w->scale->size : 0];
      if (std::abs(b->scale->data[c] - expected) > 1e-4 * expected) {
        return Status::Error("the bias scale is not input scale x weight scale "
                             "(TFLite's integer kernels use the product)");
      }
    }
  }
  return Status::Ok();
}
}  // namespace

Status CheckFloatTensors(const NodeView& node, const GraphContext& graph) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    if (graph.IsQuantizedConstant(node.input_index(i))) {
      if (!graph.quantization().allowed) {
        return Status::Error("input " + std::to_string(i) + " is a quantized " +
                             TypeName(node.input(i).type) +
                             " constant (quantized tensors are declined: "
                             "quantized_models_allowed=false)");
      }
      TFG_RETURN_IF_ERROR(CheckConstantQuantization(node.input(i))
                              .WithContext("input " + std::to_string(i)));
      continue;
    }
    if (graph.IsConstant(node.input_index(i))) continue;
    TFG_RETURN_IF_ERROR(CheckGpuTensor(node, graph, node.input(i), "input", i));
  }
  for (int i = 0; i < node.num_outputs(); ++i) {
    TFG_RETURN_IF_ERROR(CheckGpuTensor(node, graph, node.output(i), "output", i));
  }
  TFG_RETURN_IF_ERROR(CheckQuantizedNode(node, graph));
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
