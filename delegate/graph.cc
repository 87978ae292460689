#include "delegate/graph.h"

#include "delegate/half.h"
#include "delegate/tflite_builtin.h"

namespace tflite_gles {

GraphContext::GraphContext(abi::Context* context) : context_(context) {
  abi::IntArray* plan = nullptr;
  if (context->GetExecutionPlan(context, &plan) != abi::kOk) return;
  for (int i = 0; i < plan->size; ++i) {
    abi::Node* node = nullptr;
    abi::Registration* registration = nullptr;
    if (context->GetNodeAndRegistration(context, plan->data[i], &node,
                                        &registration) != abi::kOk) {
      continue;
    }
    if (registration->builtin_code == abi::kTfLiteBuiltinDequantize &&
        node->inputs->size == 1 && node->outputs->size == 1) {
      const abi::Tensor& input = context->tensors[node->inputs->data[0]];
      if (IsConstantTensor(input) && (input.type == abi::kFloat16 ||
                                      input.type == abi::kFloat32)) {
        dequantize_producer_[node->outputs->data[0]] = node->inputs->data[0];
      }
    }
  }
}

bool GraphContext::IsConstant(int tensor_index) const {
  if (tensor_index < 0 ||
      static_cast<size_t>(tensor_index) >= context_->tensors_size) {
    return false;
  }
  return IsConstantTensor(context_->tensors[tensor_index]) ||
         dequantize_producer_.count(tensor_index) > 0;
}

StatusOr<std::vector<float>> GraphContext::ConstantFloats(
    int tensor_index) const {
  if (!IsConstant(tensor_index)) {
    return Status::Error("tensor " + std::to_string(tensor_index) +
                         " is not constant");
  }
  auto folded = dequantize_producer_.find(tensor_index);
  const abi::Tensor& tensor =
      context_->tensors[folded != dequantize_producer_.end() ? folded->second
                                                             : tensor_index];
  std::vector<float> values;
  switch (tensor.type) {
    case abi::kFloat32: {
      const auto* data = static_cast<const float*>(tensor.data);
      values.assign(data, data + tensor.bytes / sizeof(float));
      break;
    }
    case abi::kFloat16: {
      const auto* data = static_cast<const uint16_t*>(tensor.data);
      values.resize(tensor.bytes / sizeof(uint16_t));
      for (size_t i = 0; i < values.size(); ++i) values[i] = HalfToFloat(data[i]);
      break;
    }
    default:
      return Status::Error(std::string("constant of type ") +
                           TypeName(tensor.type) + " has no float view");
  }
  return values;
}

StatusOr<std::vector<int64_t>> GraphContext::ConstantInts(
    int tensor_index) const {
  if (!IsConstant(tensor_index) || dequantize_producer_.count(tensor_index)) {
    return Status::Error("tensor " + std::to_string(tensor_index) +
                         " is not an integer constant");
  }
  const abi::Tensor& tensor = context_->tensors[tensor_index];
  std::vector<int64_t> values;
  if (tensor.type == abi::kInt32) {
    const auto* data = static_cast<const int32_t*>(tensor.data);
    values.assign(data, data + tensor.bytes / sizeof(int32_t));
  } else if (tensor.type == abi::kInt64) {
    const auto* data = static_cast<const int64_t*>(tensor.data);
    values.assign(data, data + tensor.bytes / sizeof(int64_t));
  } else {
    return Status::Error(std::string("constant of type ") +
                         TypeName(tensor.type) + " is not int32/int64");
  }
  return values;
}

std::vector<float> PackPhwc4(const Shape4& shape,
                             const std::vector<float>& bhwc) {
  const int slices = shape.slices();
  std::vector<float> packed(static_cast<size_t>(shape.vec4_count()) * 4, 0.0f);
  for (int b = 0; b < shape.b; ++b) {
    for (int h = 0; h < shape.h; ++h) {
      for (int w = 0; w < shape.w; ++w) {
        for (int c = 0; c < shape.c; ++c) {
          const size_t source =
              ((static_cast<size_t>(b) * shape.h + h) * shape.w + w) * shape.c + c;
          const size_t target =
              (((static_cast<size_t>(b) * slices + c / 4) * shape.h + h) *
                   shape.w + w) * 4 + c % 4;
          packed[target] = bhwc[source];
        }
      }
    }
  }
  return packed;
}

StatusOr<ValueId> GraphBuilder::TensorValue(int tflite_index) {
  auto it = tensor_values_.find(tflite_index);
  if (it != tensor_values_.end()) return it->second;
  abi::Context* context = graph_.context();
  if (tflite_index < 0 ||
      static_cast<size_t>(tflite_index) >= context->tensors_size) {
    return Status::Error("tensor index " + std::to_string(tflite_index) +
                         " out of range");
  }
  const abi::Tensor& tensor = context->tensors[tflite_index];
  TFG_ASSIGN_OR_RETURN(Shape4 shape, ShapeFromDims(tensor.dims));
  Value value;
  value.shape = shape;
  value.tflite_index = tflite_index;
  if (graph_.IsConstant(tflite_index)) {
    TFG_ASSIGN_OR_RETURN(std::vector<float> data,
                         graph_.ConstantFloats(tflite_index));
    if (static_cast<long long>(data.size()) != shape.elements()) {
      return Status::Error("constant tensor " + std::to_string(tflite_index) +
                           " holds " + std::to_string(data.size()) +
                           " values for shape " + shape.ToString());
    }
    value.kind = Value::Kind::kConstant;
    value.constant_data = PackPhwc4(shape, data);
  }
  values_.push_back(std::move(value));
  tensor_values_[tflite_index] = static_cast<ValueId>(values_.size() - 1);
  return static_cast<ValueId>(values_.size() - 1);
}

StatusOr<ValueId> GraphBuilder::Input(const NodeView& node, int i) {
  if (!node.has_input(i)) {
    return Status::Error(node.Describe() + ": input " + std::to_string(i) +
                         " is absent");
  }
  return TensorValue(node.input_index(i));
}

StatusOr<ValueId> GraphBuilder::Output(const NodeView& node, int i) {
  if (i >= node.num_outputs()) {
    return Status::Error(node.Describe() + ": no output " + std::to_string(i));
  }
  return TensorValue(node.output_index(i));
}

ValueId GraphBuilder::NewTemporary(const Shape4& shape) {
  Value value;
  value.shape = shape;
  values_.push_back(std::move(value));
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId GraphBuilder::NewConstant(std::vector<float> data) {
  data.resize((data.size() + 3) / 4 * 4, 0.0f);
  if (data.empty()) data.assign(4, 0.0f);
  Value value;
  value.kind = Value::Kind::kConstant;
  value.shape.c = static_cast<int>(data.size());
  value.constant_data = std::move(data);
  values_.push_back(std::move(value));
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId GraphBuilder::NewConstantTensor(const Shape4& shape,
                                        const std::vector<float>& bhwc) {
  Value value;
  value.kind = Value::Kind::kConstant;
  value.shape = shape;
  value.constant_data = PackPhwc4(shape, bhwc);
  values_.push_back(std::move(value));
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId GraphBuilder::NewView(ValueId base, const Shape4& shape) {
  const ValueId root =
      values_[base].storage_of >= 0 ? values_[base].storage_of : base;
  Value value;
  value.shape = shape;
  value.storage_of = root;
  values_.push_back(std::move(value));
  return static_cast<ValueId>(values_.size() - 1);
}

Status GraphBuilder::Alias(int tflite_index, ValueId value) {
  if (tensor_values_.count(tflite_index)) {
    return Status::Error("tensor " + std::to_string(tflite_index) +
                         " already has a GPU value; it cannot be aliased");
  }
  tensor_values_[tflite_index] = value;
  return Status::Ok();
}

Status GraphBuilder::MarkInput(int tflite_index) {
  TFG_ASSIGN_OR_RETURN(ValueId id, TensorValue(tflite_index));
  if (values_[id].kind == Value::Kind::kConstant) return Status::Ok();
  values_[id].kind = Value::Kind::kInput;
  return Status::Ok();
}

Status GraphBuilder::MarkOutput(int tflite_index) {
  TFG_ASSIGN_OR_RETURN(ValueId id, TensorValue(tflite_index));
  if (values_[id].kind == Value::Kind::kConstant) {
    return Status::Error("partition output " + std::to_string(tflite_index) +
                         " is a constant");
  }
  values_[id].kind = Value::Kind::kOutput;
  return Status::Ok();
}

}  // namespace tflite_gles
