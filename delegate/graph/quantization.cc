#include "delegate/graph/quantization.h"

#include <cstdio>

#include "delegate/abi/node_view.h"
#include "delegate/abi/tflite_builtin.h"

namespace tflite_gles {
namespace {

struct Range {
  int lo;
  int hi;
};

bool TypeRange(abi::Type type, Range* range) {
  switch (type) {
    case abi::kUInt8: *range = {0, 255}; return true;
    case abi::kInt8: *range = {-128, 127}; return true;
    default: return false;
  }
}

Status CheckScale(float scale, const char* what) {
  if (!std::isfinite(scale) || scale <= 0.0f) {
    char text[64];
    std::snprintf(text, sizeof(text), "%g", static_cast<double>(scale));
    return Status::Error(std::string(what) + " has scale " + text +
                         " (must be finite and > 0)");
  }
  return Status::Ok();
}

const abi::AffineQuantization* Affine(const abi::Tensor& tensor) {
  if (tensor.quantization.type != abi::kAffineQuantization) return nullptr;
  return static_cast<const abi::AffineQuantization*>(tensor.quantization.params);
}

}  // namespace

bool IsQuantizedType(abi::Type type) {
  return type == abi::kUInt8 || type == abi::kInt8;
}

bool HasAffineQuantization(const abi::Tensor& tensor) {
  const abi::AffineQuantization* affine = Affine(tensor);
  return affine != nullptr && affine->scale != nullptr && affine->scale->size > 0;
}

StatusOr<QuantParams> ActivationQuantization(const abi::Tensor& tensor) {
  Range range{};
  if (!TypeRange(tensor.type, &range)) {
    return Status::Error(std::string(TypeName(tensor.type)) +
                         " activations are not run in the float view (only "
                         "uint8 and int8)");
  }
  if (tensor.quantization.type != abi::kAffineQuantization) {
    return Status::Error(
        tensor.quantization.type == abi::kNoQuantization
            ? std::string("a ") + TypeName(tensor.type) +
                  " tensor without quantization params"
            : "a non-affine quantization (type " +
                  std::to_string(static_cast<int>(tensor.quantization.type)) + ")");
  }
  const abi::AffineQuantization* affine = Affine(tensor);
  if (affine == nullptr || affine->scale == nullptr || affine->scale->size < 1) {
    return Status::Error("affine quantization without a scale");
  }
  if (affine->scale->size != 1) {
    return Status::Error("per-channel params (" +
                         std::to_string(affine->scale->size) +
                         " scales) on an activation tensor");
  }
  if (affine->zero_point != nullptr && affine->zero_point->size > 1) {
    return Status::Error("per-channel zero points on an activation tensor");
  }
  QuantParams q;
  q.scale = affine->scale->data[0];
  q.zero_point = (affine->zero_point != nullptr && affine->zero_point->size == 1)
                     ? affine->zero_point->data[0]
                     : 0;
  q.qmin = range.lo;
  q.qmax = range.hi;
  TFG_RETURN_IF_ERROR(CheckScale(q.scale, "the tensor"));
  if (q.zero_point < range.lo || q.zero_point > range.hi) {
    return Status::Error("zero point " + std::to_string(q.zero_point) +
                         " is outside " + TypeName(tensor.type) + "'s range");
  }
  // The legacy per-tensor copy must agree: kernels and tools read either.
  if (tensor.params.scale != q.scale || tensor.params.zero_point != q.zero_point) {
    return Status::Error("the tensor's scale/zero point disagree with its "
                         "affine quantization params");
  }
  return q;
}

Status CheckConstantQuantization(const abi::Tensor& tensor) {
  if (tensor.quantization.type == abi::kNoQuantization) return Status::Ok();
  if (tensor.quantization.type != abi::kAffineQuantization) {
    return Status::Error("a constant with non-affine quantization (type " +
                         std::to_string(static_cast<int>(tensor.quantization.type)) +
                         ")");
  }
  const abi::AffineQuantization* affine = Affine(tensor);
  if (affine == nullptr || affine->scale == nullptr || affine->scale->size < 1) {
    return Status::Error("a quantized constant without a scale");
  }
  Range range{0, 0};  // int32 biases: zero point 0
  if (tensor.type != abi::kInt32 && !TypeRange(tensor.type, &range) &&
      tensor.type != abi::kInt16) {
    return Status::Error(std::string("a quantized constant of type ") +
                         TypeName(tensor.type));
  }
  if (tensor.type == abi::kInt16) range = {-32768, 32767};
  const int channels = affine->scale->size;
  if (channels > 1 && tensor.type == abi::kUInt8) {
    // TFLite's kernels refuse them too (per-channel weights are int8).
    return Status::Error("a per-channel uint8 constant (per-channel "
                         "quantization is for int8 weights)");
  }
  for (int c = 0; c < channels; ++c) {
    TFG_RETURN_IF_ERROR(CheckScale(affine->scale->data[c], "a quantized constant"));
  }
  if (affine->zero_point != nullptr && affine->zero_point->size > 0) {
    if (affine->zero_point->size != channels) {
      return Status::Error("a quantized constant has " +
                           std::to_string(affine->zero_point->size) +
                           " zero points for " + std::to_string(channels) +
                           " scales");
    }
    for (int c = 0; c < channels; ++c) {
      const int z = affine->zero_point->data[c];
      if (z < range.lo || z > range.hi) {
        return Status::Error("a quantized constant's zero point " +
                             std::to_string(z) + " is outside " +
                             TypeName(tensor.type) + "'s range");
      }
    }
  }
  if (channels > 1) {
    const int axis = affine->quantized_dimension;
    if (tensor.dims == nullptr || axis < 0 || axis >= tensor.dims->size) {
      return Status::Error("quantized_dimension " + std::to_string(axis) +
                           " is outside the constant's rank");
    }
    if (tensor.dims->data[axis] != channels) {
      return Status::Error("per-channel params: " + std::to_string(channels) +
                           " scales for dimension " + std::to_string(axis) +
                           " of size " + std::to_string(tensor.dims->data[axis]));
    }
  }
  return Status::Ok();
}

namespace {
StatusOr<QuantParams> TransferParams(const abi::Tensor& tensor) {
  Range range{};
  if (!TypeRange(tensor.type, &range)) {
    return Status::Error(std::string(TypeName(tensor.type)) + " is not quantized");
  }
  TFG_RETURN_IF_ERROR(CheckScale(tensor.params.scale, "the partition tensor"));
  return QuantParams{tensor.params.scale, tensor.params.zero_point, range.lo, range.hi};
}
}  // namespace

Status DequantizeTensor(const abi::Tensor& tensor, size_t elements, float* out) {
  TFG_ASSIGN_OR_RETURN(QuantParams q, TransferParams(tensor));
  // A table of the 256 values: one load per element instead of a convert
  // and a multiply (an image input is 150k elements per invoke).
  float table[256];
  const int offset = tensor.type == abi::kUInt8 ? 0 : -128;
  for (int i = 0; i < 256; ++i) table[i] = DequantizeValue(i + offset, q);
  const auto* data = static_cast<const uint8_t*>(tensor.data);
  // int8 bytes index the table shifted by 128 (the bit pattern's flip).
  const uint8_t flip = tensor.type == abi::kUInt8 ? 0 : 0x80;
  for (size_t i = 0; i < elements; ++i) out[i] = table[data[i] ^ flip];
  return Status::Ok();
}

Status QuantizeTensor(const float* values, size_t elements, abi::Tensor& tensor) {
  TFG_ASSIGN_OR_RETURN(QuantParams q, TransferParams(tensor));
  if (tensor.type == abi::kUInt8) {
    auto* data = static_cast<uint8_t*>(tensor.data);
    for (size_t i = 0; i < elements; ++i) {
      data[i] = static_cast<uint8_t>(QuantizeElementLikeTflite(values[i], i, elements, q));
    }
  } else {
    auto* data = static_cast<int8_t*>(tensor.data);
    for (size_t i = 0; i < elements; ++i) {
      data[i] = static_cast<int8_t>(QuantizeElementLikeTflite(values[i], i, elements, q));
    }
  }
  return Status::Ok();
}

int QuantizedMaxVersion(int op) {
  switch (op) {
    case abi::kTfLiteBuiltinConv2d: return 5;            // int8 3, hybrid 2/5
    case abi::kTfLiteBuiltinDepthwiseConv2d: return 6;   // int8 3, hybrid 4/6
    case abi::kTfLiteBuiltinFullyConnected: return 12;   // int8 4, hybrid 3/9/12
    case abi::kTfLiteBuiltinMul: return 3;               // int8 2, rescale >= 1: 3
    case abi::kTfLiteBuiltinResizeBilinear:              // half-pixel centers: 3
    case abi::kTfLiteBuiltinResizeNearestNeighbor: return 3;
    case abi::kTfLiteBuiltinTransposeConv: return 4;     // int8 2, bias 3, act 4
    case abi::kTfLiteBuiltinDequantize: return 5;        // int8 per-channel: 5
    case abi::kTfLiteBuiltinAdd:
    case abi::kTfLiteBuiltinSub:
    case abi::kTfLiteBuiltinAveragePool2d:
    case abi::kTfLiteBuiltinMaxPool2d:
    case abi::kTfLiteBuiltinConcatenation:
    case abi::kTfLiteBuiltinPad:
    case abi::kTfLiteBuiltinPadv2:
    case abi::kTfLiteBuiltinSoftmax:
    case abi::kTfLiteBuiltinLogistic:
    case abi::kTfLiteBuiltinTanh:
    case abi::kTfLiteBuiltinRelu:
    case abi::kTfLiteBuiltinRelu6:
    case abi::kTfLiteBuiltinMaximum:
    case abi::kTfLiteBuiltinMinimum:
    case abi::kTfLiteBuiltinStridedSlice:
    case abi::kTfLiteBuiltinMean:
    case abi::kTfLiteBuiltinTranspose:
    case abi::kTfLiteBuiltinSpaceToDepth:
    case abi::kTfLiteBuiltinDepthToSpace:
    case abi::kTfLiteBuiltinSlice:
    case abi::kTfLiteBuiltinQuantize:  // float -> uint8/int8 and requantize
      return 2;
    case abi::kTfLiteBuiltinReshape:
    case abi::kTfLiteBuiltinSqueeze:
    case abi::kTfLiteBuiltinPrelu:
    case abi::kTfLiteBuiltinHardSwish:
      return 1;
    default:
      return 0;
  }
}

bool KeepsInputGrid(int op) {
  switch (op) {
    case abi::kTfLiteBuiltinMaxPool2d:
    case abi::kTfLiteBuiltinReshape:
    case abi::kTfLiteBuiltinSqueeze:
    case abi::kTfLiteBuiltinPad:  // pads with real 0 = the zero point
    case abi::kTfLiteBuiltinStridedSlice:
    case abi::kTfLiteBuiltinSlice:
    case abi::kTfLiteBuiltinConcatenation:
    case abi::kTfLiteBuiltinTranspose:
    case abi::kTfLiteBuiltinSpaceToDepth:
    case abi::kTfLiteBuiltinDepthToSpace:
    case abi::kTfLiteBuiltinResizeNearestNeighbor:  // selects input values
    case abi::kTfLiteBuiltinMaximum:
    case abi::kTfLiteBuiltinMinimum:
    case abi::kTfLiteBuiltinRelu:  // max(x, 0): 0 is on every grid (RELU6's
      return true;                   // 6 is not)
    default:
      return false;
  }
}

}  // namespace tflite_gles
