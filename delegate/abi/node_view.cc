#include "delegate/abi/node_view.h"

#include "delegate/abi/tflite_builtin.h"

namespace tflite_gles {

std::string Shape4::ToString() const {
  return std::to_string(b) + "x" + std::to_string(h) + "x" +
         std::to_string(w) + "x" + std::to_string(c);
}

std::vector<int> DimsVector(const abi::IntArray* dims) {
  if (dims == nullptr) return {};
  return std::vector<int>(dims->data, dims->data + dims->size);
}

StatusOr<Shape4> ShapeFromDims(const abi::IntArray* dims) {
  if (dims == nullptr) return Status::Error("tensor has no shape");
  if (dims->size > 4) {
    return Status::Error("rank " + std::to_string(dims->size) +
                         " > 4 is not supported");
  }
  for (int i = 0; i < dims->size; ++i) {
    if (dims->data[i] <= 0) {
      return Status::Error("dimension " + std::to_string(i) + " is " +
                           std::to_string(dims->data[i]) +
                           " (zero-sized and dynamic dims are not supported)");
    }
  }
  const int* d = dims->data;
  Shape4 shape;
  switch (dims->size) {
    case 0: break;
    case 1: shape.c = d[0]; break;
    case 2: shape.b = d[0]; shape.c = d[1]; break;
    case 3: shape.b = d[0]; shape.w = d[1]; shape.c = d[2]; break;
    case 4: shape.b = d[0]; shape.h = d[1]; shape.w = d[2]; shape.c = d[3]; break;
  }
  // Index arithmetic in shaders is 32-bit.
  if (shape.vec4_count() * 4 >= (1LL << 31)) {
    return Status::Error("tensor of " + std::to_string(shape.elements()) +
                         " elements exceeds 32-bit indexing");
  }
  return shape;
}

const char* TypeName(abi::Type type) {
  switch (type) {
    case abi::kFloat32: return "float32";
    case abi::kFloat16: return "float16";
    case abi::kInt32: return "int32";
    case abi::kUInt8: return "uint8";
    case abi::kInt8: return "int8";
    case abi::kInt16: return "int16";
    case abi::kInt64: return "int64";
    case abi::kBool: return "bool";
    case abi::kString: return "string";
    default: return "non-numeric";
  }
}

std::string NodeView::custom_name() const {
  if (op() != abi::kTfLiteBuiltinCustom || registration_->custom_name == nullptr) {
    return "";
  }
  return registration_->custom_name;
}

std::string NodeView::Describe() const {
  std::string name = op() == abi::kTfLiteBuiltinCustom
                         ? "CUSTOM " + custom_name()
                         : abi::BuiltinOperatorName(op());
  return name + " v" + std::to_string(version());
}

bool IsConstantTensor(const abi::Tensor& tensor) {
  return (tensor.allocation_type == abi::kMmapRo ||
          tensor.allocation_type == abi::kPersistentRo) &&
         tensor.data != nullptr;
}

}  // namespace tflite_gles
