// Quantized models in the float view (issue 15).
//
// The GPU never computes in integers. A quantized model runs as the float
// model it stands for: constants (uint8/int8 weights, int32 biases) are
// dequantized once at init (GraphContext::ConstantFloats); quantized
// partition inputs are dequantized and quantized outputs quantized on every
// invoke (TFLite's QUANTIZE rounding, see QuantizeValue); and, with the
// quantization simulator on, every activation tensor with quantization
// params is rounded to its grid and clamped to its range after the op that
// writes it (FakeQuantExpression, an epilogue of the producing dispatch), so
// the float values follow the ranges the model was trained with.
//
// This header holds what the checks, the simulator and the transfers share:
// the params of an activation tensor, their validation (bad params are a
// per-node decline with a reason, never a crash or a silently wrong
// answer), the op versions quantized models use, and the rounding.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "delegate/abi/tflite_abi.h"
#include "egl/status.h"

namespace tflite_gles {

// Per-tensor affine params of a uint8/int8 activation tensor:
// real = scale * (q - zero_point), q in [qmin, qmax].
struct QuantParams {
  float scale = 0.0f;
  int zero_point = 0;
  int qmin = 0;
  int qmax = 0;
  bool operator==(const QuantParams& o) const {
    return scale == o.scale && zero_point == o.zero_point && qmin == o.qmin &&
           qmax == o.qmax;
  }
  bool operator!=(const QuantParams& o) const { return !(*this == o); }
};

// uint8 or int8: the types that run in the float view.
bool IsQuantizedType(abi::Type type);

// The params of a uint8/int8 activation (non-constant) tensor, or why they
// cannot be used: no or non-affine quantization, a scale that is zero,
// negative, NaN or infinite, a zero point outside the type's range, or
// per-channel params (activations are per tensor in TFLite).
StatusOr<QuantParams> ActivationQuantization(const abi::Tensor& tensor);

// Checks the affine params of a quantized constant (uint8/int8 weights,
// int32 biases): every scale finite and > 0, zero points in the type's range
// (0 for int32), per-channel arrays of the quantized dimension's length,
// quantized_dimension within the rank. OK for tensors without quantization.
Status CheckConstantQuantization(const abi::Tensor& tensor);

// Whether the tensor carries affine params (type int32 included: a bias).
bool HasAffineQuantization(const abi::Tensor& tensor);

// The highest op version whose quantized (uint8/int8) form the GPU runs in
// the float view, for the ops of docs/ops.md that TFLite defines for
// quantized tensors; 0 for an op without one. Versions from TFLite's
// op_version.cc (int8 forms are version 2 for most ops, 3 for CONV_2D and
// DEPTHWISE_CONV_2D, 4 for FULLY_CONNECTED; hybrid CONV_2D 2/5, hybrid
// DEPTHWISE_CONV_2D 4/6).
int QuantizedMaxVersion(int builtin_op);

// Ops whose output values are a subset of their input values (moves, max,
// zero padding): with the output's params equal to every input's, the
// simulator step is the identity and is left out.
bool KeepsInputGrid(int builtin_op);

// TFLite's QUANTIZE of one float: clamp(round(x / scale) + zero_point, qmin,
// qmax), rounding half away from zero (std::round), the division in double
// as TFLite's reference kernel does it (its op params hold the scale as a
// double): 0.5372549f at scale 1/127.5 is 68.5 in float but 68.49999995 in
// double, and ai-edge-litert 2.3.0 writes 68 (test_quantized_models.py,
// test_image_quantized_on_the_gpu_equals_tflite). NaN maps to the zero point.
inline int QuantizeValue(float x, const QuantParams& q) {
  const double scaled = std::round(static_cast<double>(x) / static_cast<double>(q.scale));
  if (std::isnan(scaled)) return q.zero_point;
  // Bounded before the conversion: an out-of-range float -> int is UB.
  const double lo = q.qmin - q.zero_point;
  const double hi = q.qmax - q.zero_point;
  const double bounded = scaled < lo ? lo : (scaled > hi ? hi : scaled);
  return static_cast<int>(bounded) + q.zero_point;
}

// As TFLite's vectorized QUANTIZE: x * (1 / scale), ties to even
// (std::nearbyint in the default rounding mode).
inline int QuantizeValueTiesToEven(float x, const QuantParams& q) {
  const float scaled = std::nearbyint(x * (1.0f / q.scale));
  if (std::isnan(scaled)) return q.zero_point;
  const float lo = static_cast<float>(q.qmin - q.zero_point);
  const float hi = static_cast<float>(q.qmax - q.zero_point);
  const float bounded = scaled < lo ? lo : (scaled > hi ? hi : scaled);
  return static_cast<int>(bounded) + q.zero_point;
}

// Element i of `count` floats quantized as TFLite's QUANTIZE kernel does it
// in the runtime here (ai-edge-litert 2.3.0 on x86-64, measured with
// single-op models, test_quantized_models.py): the elements of whole groups
// of 8 take its vector path, which multiplies by 1 / scale and rounds ties
// to even; the tail after them divides (in double, QuantizeValue) and
// rounds ties away from zero (TfLiteRound, as its reference kernel does for
// every element). Only exact ties differ, but an image scaled to [-1, 1] at
// scale 1/127.5 is made of them.
inline int QuantizeElementLikeTflite(float x, size_t i, size_t count,
                                     const QuantParams& q) {
  return i < count / 8 * 8 ? QuantizeValueTiesToEven(x, q) : QuantizeValue(x, q);
}

inline float DequantizeValue(int q, const QuantParams& p) {
  return p.scale * static_cast<float>(q - p.zero_point);
}

// Partition boundaries, with the tensor's per-tensor params (tensor.params,
// which ActivationQuantization checked at build time): `elements` values of a
// uint8/int8 tensor as floats; floats into the tensor as TFLite's QUANTIZE
// writes them (QuantizeElementLikeTflite). An error for a tensor whose params are no longer usable.
Status DequantizeTensor(const abi::Tensor& tensor, size_t elements, float* out);
Status QuantizeTensor(const float* values, size_t elements, abi::Tensor& tensor);


}  // namespace tflite_gles
