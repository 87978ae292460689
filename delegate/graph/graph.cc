#include "delegate/graph/graph.h"

#include "delegate/graph/constant_transform.h"

#include <algorithm>

#include "delegate/graph/content_hash.h"
#include "delegate/graph/tensor_checks.h"

#include "delegate/abi/half.h"
#include "delegate/abi/tflite_builtin.h"
#include "delegate/graph/quantization.h"

namespace tflite_gles {
namespace {

// How many values of `element_bytes` TFLite's kernels read from a constant:
// as many as its shape holds (its buffer may be longer: TFLite only
// requires it to be at least that long), never more than the buffer has.
size_t ValueCount(const abi::Tensor& tensor, size_t element_bytes) {
  const size_t available = tensor.bytes / element_bytes;
  if (tensor.dims == nullptr) return available;
  size_t count = 1;
  for (int d = 0; d < tensor.dims->size; ++d) {
    if (tensor.dims->data[d] < 0) return 0;
    count *= static_cast<size_t>(tensor.dims->data[d]);
    if (count > available) return available;
  }
  return count;
}

bool SameDims(const abi::IntArray* a, const abi::IntArray* b) {
  if (a == nullptr || b == nullptr) return a == b;
  if (a->size != b->size) return false;
  for (int d = 0; d < a->size; ++d) {
    if (a->data[d] != b->data[d]) return false;
  }
  return true;
}

}  // namespace

GraphContext::GraphContext(abi::Context* context, QuantizationOptions quantization)
    : context_(context), quantization_(quantization),
      model_inputs_(FindModelInputs(context)) {
  abi::IntArray* plan = nullptr;
  if (context->GetExecutionPlan(context, &plan) != abi::kOk) return;
  for (int i = 0; i < plan->size; ++i) {
    abi::Node* node = nullptr;
    abi::Registration* registration = nullptr;
    if (context->GetNodeAndRegistration(context, plan->data[i], &node,
                                        &registration) != abi::kOk) {
      continue;
    }
    for (int k = 0; k < node->inputs->size; ++k) {
      if (ConstantReadAsData(context, *node, registration->builtin_code, k) ||
          (IsGraphInputWithData(node->inputs->data[k]) &&
           GraphInputReadAsData(registration->builtin_code, k))) {
        read_as_data_.insert(node->inputs->data[k]);
      }
    }
    if (registration->builtin_code == abi::kTfLiteBuiltinDequantize &&
        node->inputs->size == 1 && node->outputs->size == 1) {
      const int input_index = node->inputs->data[0];
      const int output_index = node->outputs->data[0];
      if (input_index < 0 || output_index < 0 ||
          static_cast<size_t>(input_index) >= context->tensors_size ||
          static_cast<size_t>(output_index) >= context->tensors_size) {
        continue;
      }
      const abi::Tensor& input = context->tensors[input_index];
      const abi::Tensor& output = context->tensors[output_index];
      // Folded only where the output is what TFLite's kernel makes of it:
      // float32 of the input's shape (a different declared shape is
      // replaced at Prepare, after the delegate saw it).
      if (IsConstantTensor(input) && !IsGraphInputWithData(input_index) &&
          output.type == abi::kFloat32 &&
          !IsConstantTensor(output) && SameDims(input.dims, output.dims) &&
          DequantizedFloats(input, nullptr).ok()) {
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
  return (IsConstantTensor(context_->tensors[tensor_index]) &&
          read_as_data_.count(tensor_index) == 0) ||
         dequantize_producer_.count(tensor_index) > 0;
}

std::string GraphContext::ConstantContentKey(int tensor_index) const {
  auto folded = dequantize_producer_.find(tensor_index);
  const int source = folded != dequantize_producer_.end() ? folded->second : tensor_index;
  const abi::Tensor& tensor = context_->tensors[source];
  ContentHash hash;
  const int type = static_cast<int>(tensor.type);
  hash.Add(&type, sizeof(type));
  if (tensor.dims != nullptr) {
    hash.Add(tensor.dims->data, sizeof(int) * static_cast<size_t>(tensor.dims->size));
  }
  if (tensor.data != nullptr) hash.Add(tensor.data, tensor.bytes);
  hash.Add(&tensor.params, sizeof(tensor.params));
  if (tensor.quantization.type == abi::kAffineQuantization &&
      tensor.quantization.params != nullptr) {
    const auto* affine = static_cast<const abi::AffineQuantization*>(tensor.quantization.params);
    if (affine->scale != nullptr) {
      hash.Add(affine->scale->data, sizeof(float) * static_cast<size_t>(affine->scale->size));
    }
    if (affine->zero_point != nullptr) {
      hash.Add(affine->zero_point->data,
               sizeof(int) * static_cast<size_t>(affine->zero_point->size));
    }
    hash.Add(&affine->quantized_dimension, sizeof(affine->quantized_dimension));
  }
  // Whether it is read dequantized is the reader's choice, in ConstantFloats.
  const bool quantized = IsQuantizedConstant(tensor_index);
  hash.Add(&quantized, sizeof(quantized));
  return hash.Hex();
}

StatusOr<std::vector<float>> GraphContext::ConstantFloats(
    int tensor_index) const {
  if (!IsConstant(tensor_index)) {
    return Status::Error("tensor " + std::to_string(tensor_index) +
                         " is not constant");
  }
  auto folded = dequantize_producer_.find(tensor_index);
  if (folded != dequantize_producer_.end()) {
    std::vector<float> values;
    TFG_RETURN_IF_ERROR(
        DequantizedFloats(context_->tensors[folded->second], &values));
    return values;
  }
  const abi::Tensor& tensor = context_->tensors[tensor_index];
  std::vector<float> values;
  if (IsQuantizedConstant(tensor_index)) {
    if (!quantization_.allowed) {
      return Status::Error(std::string("a quantized ") + TypeName(tensor.type) +
                           " constant (quantized tensors are declined: "
                           "quantized_models_allowed=false)");
    }
    TFG_RETURN_IF_ERROR(DequantizedFloats(tensor, &values));
    return values;
  }
  switch (tensor.type) {
    case abi::kFloat32: {
      const auto* data = static_cast<const float*>(tensor.data);
      values.assign(data, data + ValueCount(tensor, sizeof(float)));
      break;
    }
    case abi::kFloat16: {
      const auto* data = static_cast<const uint16_t*>(tensor.data);
      values.resize(ValueCount(tensor, sizeof(uint16_t)));
      for (size_t i = 0; i < values.size(); ++i) values[i] = HalfToFloat(data[i]);
      break;
    }
    case abi::kBool: {
      // Booleans live on the GPU as 0.0/1.0 (see LOGICAL_AND).
      const auto* data = static_cast<const uint8_t*>(tensor.data);
      values.resize(ValueCount(tensor, 1));
      for (size_t i = 0; i < values.size(); ++i) values[i] = data[i] ? 1.0f : 0.0f;
      break;
    }
    default:
      return Status::Error(std::string("constant of type ") +
                           TypeName(tensor.type) + " has no float view");
  }
  return values;
}

StatusOr<size_t> GraphContext::ConstantFloatCount(int tensor_index) const {
  if (IsConstant(tensor_index) && dequantize_producer_.count(tensor_index) == 0 &&
      !IsQuantizedConstant(tensor_index)) {
    const abi::Tensor& tensor = context_->tensors[tensor_index];
    switch (tensor.type) {
      case abi::kFloat32: return ValueCount(tensor, sizeof(float));
      case abi::kFloat16: return ValueCount(tensor, sizeof(uint16_t));
      case abi::kBool: return ValueCount(tensor, 1);
      default: break;
    }
  }
  TFG_ASSIGN_OR_RETURN(std::vector<float> values, ConstantFloats(tensor_index));
  return values.size();
}

bool GraphContext::IsQuantizedConstant(int tensor_index) const {
  if (!IsConstant(tensor_index) || dequantize_producer_.count(tensor_index)) {
    return false;
  }
  const abi::Tensor& tensor = context_->tensors[tensor_index];
  // int32 only with params: a bias (shape operands have none).
  return IsQuantizedType(tensor.type) ||
         (tensor.type == abi::kInt32 && HasAffineQuantization(tensor));
}

namespace {
// Affine dequantization of an int8/uint8/int16/int32 constant:
// real = scale * (q - zero_point), per tensor or per channel along
// quantized_dimension.
template <typename Q>
Status DequantizeAffine(const abi::Tensor& tensor, std::vector<float>* values) {
  const size_t count = ValueCount(tensor, sizeof(Q));
  std::vector<float> scales = {tensor.params.scale};
  std::vector<int> zero_points = {tensor.params.zero_point};
  int axis = 0;
  TFG_RETURN_IF_ERROR(CheckConstantQuantization(tensor));
  if (tensor.quantization.type == abi::kAffineQuantization &&
      tensor.quantization.params != nullptr) {
    const auto* affine =
        static_cast<const abi::AffineQuantization*>(tensor.quantization.params);
    if (affine->scale == nullptr || affine->scale->size < 1) {
      return Status::Error("quantized constant without a scale");
    }
    scales.assign(affine->scale->data, affine->scale->data + affine->scale->size);
    zero_points.assign(scales.size(), 0);
    if (affine->zero_point != nullptr && affine->zero_point->size > 0) {
      if (affine->zero_point->size != affine->scale->size) {
        return Status::Error("quantized constant has " +
                             std::to_string(affine->zero_point->size) +
                             " zero points for " +
                             std::to_string(affine->scale->size) + " scales");
      }
      zero_points.assign(affine->zero_point->data,
                         affine->zero_point->data + affine->zero_point->size);
    }
    axis = affine->quantized_dimension;
  } else if (tensor.quantization.type != abi::kNoQuantization) {
    return Status::Error("quantized constant with a non-affine quantization");
  }
  if (scales[0] == 0.0f && scales.size() == 1) {
    return Status::Error("quantized constant without quantization parameters");
  }
  // Elements per channel step: the product of the dims after `axis`.
  size_t inner = 1;
  if (scales.size() > 1) {
    if (tensor.dims == nullptr || axis < 0 || axis >= tensor.dims->size ||
        tensor.dims->data[axis] != static_cast<int>(scales.size())) {
      return Status::Error("per-channel scales do not match the quantized "
                           "dimension");
    }
    for (int d = axis + 1; d < tensor.dims->size; ++d) inner *= tensor.dims->data[d];
  }
  if (values == nullptr) return Status::Ok();  // only checking
  const Q* data = static_cast<const Q*>(tensor.data);
  values->resize(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t channel = scales.size() > 1 ? (i / inner) % scales.size() : 0;
    (*values)[i] = scales[channel] *
                   static_cast<float>(static_cast<int>(data[i]) - zero_points[channel]);
  }
  return Status::Ok();
}
}  // namespace

Status GraphContext::DequantizedFloats(const abi::Tensor& tensor,
                                       std::vector<float>* values) {
  switch (tensor.type) {
    case abi::kFloat32:
    case abi::kFloat16: {
      if (values == nullptr) return Status::Ok();
      const size_t count = ValueCount(tensor, tensor.type == abi::kFloat32 ? 4 : 2);
      values->resize(count);
      for (size_t i = 0; i < count; ++i) {
        (*values)[i] =
            tensor.type == abi::kFloat32
                ? static_cast<const float*>(tensor.data)[i]
                : HalfToFloat(static_cast<const uint16_t*>(tensor.data)[i]);
      }
      return Status::Ok();
    }
    case abi::kInt8: return DequantizeAffine<int8_t>(tensor, values);
    case abi::kUInt8: return DequantizeAffine<uint8_t>(tensor, values);
    case abi::kInt16: return DequantizeAffine<int16_t>(tensor, values);
    case abi::kInt32: return DequantizeAffine<int32_t>(tensor, values);
    default:
      return Status::Error(std::string("DEQUANTIZE of ") + TypeName(tensor.type) +
                           " is not folded");
  }
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
    values.assign(data, data + ValueCount(tensor, sizeof(int32_t)));
  } else if (tensor.type == abi::kInt64) {
    const auto* data = static_cast<const int64_t*>(tensor.data);
    values.assign(data, data + ValueCount(tensor, sizeof(int64_t)));
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

ValueId GraphBuilder::NewLazyConstant(size_t floats, const std::string& recipe,
                                      const std::vector<int>& sources,
                                      std::function<std::vector<float>()> make) {
  auto lazy = std::make_shared<Value::LazyConstant>();
  lazy->floats = std::max<size_t>(4, (floats + 3) / 4 * 4);
  lazy->key = recipe;
  for (int source : sources) lazy->key += " " + graph_.ConstantContentKey(source);
  const size_t padded = lazy->floats;
  lazy->make = [make = std::move(make), padded] {
    std::vector<float> data = make();
    data.resize(padded, 0.0f);
    return data;
  };
  Value value;
  value.kind = Value::Kind::kConstant;
  value.shape.c = static_cast<int>(padded);
  value.lazy = std::move(lazy);
  values_.push_back(std::move(value));
  return static_cast<ValueId>(values_.size() - 1);
}

void MaterializeConstant(Value& value) {
  if (!value.lazy) return;
  value.constant_data = value.lazy->make();
  value.lazy.reset();
}

void TransformConstant(Value& value, const std::string& step, size_t floats,
                       std::function<std::vector<float>(const std::vector<float>&)> transform) {
  if (!value.lazy) {
    value.constant_data = transform(value.constant_data);
    return;
  }
  auto lazy = std::make_shared<Value::LazyConstant>();
  lazy->floats = std::max<size_t>(4, (floats + 3) / 4 * 4);
  lazy->key = value.lazy->key + " then " + step;
  const size_t padded = lazy->floats;
  lazy->make = [source = value.lazy, transform = std::move(transform), padded] {
    std::vector<float> data = transform(source->make());
    data.resize(padded, 0.0f);
    return data;
  };
  value.lazy = std::move(lazy);
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
  const ValueId root = StorageRoot(values_, base);
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

Status GraphBuilder::Rebind(int tflite_index, ValueId value) {
  auto it = tensor_values_.find(tflite_index);
  if (it == tensor_values_.end()) {
    return Status::Error("tensor " + std::to_string(tflite_index) +
                         " has no GPU value to replace");
  }
  values_[static_cast<size_t>(value)].tflite_index = tflite_index;
  it->second = value;
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
