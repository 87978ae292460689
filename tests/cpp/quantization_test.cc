// The quantized-model helpers of delegate/quantization.h against
// independent references: QUANTIZE's rounding (TFLite: round half away from
// zero, then clamp) computed in double, and the validation of bad params
// (each rejected with a reason, never accepted).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "delegate/abi/tflite_builtin.h"
#include "delegate/graph/quantization.h"

namespace tflite_gles {
namespace {

// An abi::Tensor with affine quantization, owning its arrays.
struct QuantizedTensor {
  abi::Tensor tensor{};
  abi::AffineQuantization affine{};
  std::vector<int> dims_storage;
  std::vector<int> zero_storage;
  std::vector<int> scale_storage;  // FloatArray: size + floats, as ints

  QuantizedTensor(abi::Type type, std::vector<int> dims, std::vector<float> scales,
                  std::vector<int> zero_points, int axis = 0) {
    dims_storage.push_back(static_cast<int>(dims.size()));
    dims_storage.insert(dims_storage.end(), dims.begin(), dims.end());
    scale_storage.push_back(static_cast<int>(scales.size()));
    for (float s : scales) {
      int bits;
      std::memcpy(&bits, &s, sizeof(bits));
      scale_storage.push_back(bits);
    }
    zero_storage.push_back(static_cast<int>(zero_points.size()));
    zero_storage.insert(zero_storage.end(), zero_points.begin(), zero_points.end());
    affine.quantized_dimension = axis;
    tensor.type = type;
    tensor.quantization.type = abi::kAffineQuantization;
    tensor.params.scale = scales.empty() ? 0.0f : scales[0];
    tensor.params.zero_point = zero_points.empty() ? 0 : zero_points[0];
  }

  // The tensor with its pointers into this object (set here, not in the
  // constructor: the object may have moved since).
  const abi::Tensor& get() {
    affine.scale = reinterpret_cast<abi::FloatArray*>(scale_storage.data());
    affine.zero_point = reinterpret_cast<abi::IntArray*>(zero_storage.data());
    tensor.dims = reinterpret_cast<abi::IntArray*>(dims_storage.data());
    tensor.quantization.params = &affine;
    return tensor;
  }
};

// TFLite's QUANTIZE in double: round half away from zero, add the zero
// point, clamp.
int ReferenceQuantize(float x, float scale, int zero_point, int qmin, int qmax) {
  // TFLite's reference kernel divides in double (its op params hold the
  // scale as a double): ai-edge-litert 2.3.0 quantizes 0.5372549f at scale
  // 1/127.5 (68.5 in float, 68.49999995 in double) to 68
  // (test_quantized_models.py, test_image_quantized_on_the_gpu_equals_tflite).
  const double v = static_cast<double>(x) / static_cast<double>(scale);
  const double rounded = v < 0 ? -std::floor(-v + 0.5) : std::floor(v + 0.5);
  const double q = rounded + zero_point;
  return static_cast<int>(std::min<double>(qmax, std::max<double>(qmin, q)));
}

TEST(Quantization, QuantizeValueRoundsHalfAwayFromZeroAndClamps) {
  const QuantParams uint8{0.5f, 10, 0, 255};
  // Exact ties: x / s = k + 0.5.
  EXPECT_EQ(QuantizeValue(1.25f, uint8), 13);    // 2.5 -> 3
  EXPECT_EQ(QuantizeValue(-1.25f, uint8), 7);    // -2.5 -> -3
  EXPECT_EQ(QuantizeValue(-100.0f, uint8), 0);   // clamped low
  EXPECT_EQ(QuantizeValue(1000.0f, uint8), 255); // clamped high
  EXPECT_EQ(QuantizeValue(std::numeric_limits<float>::infinity(), uint8), 255);
  EXPECT_EQ(QuantizeValue(std::nanf(""), uint8), 10);
  const QuantParams int8{1.0f / 256.0f, -128, -128, 127};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.5f, 1.5f);
  for (int i = 0; i < 100000; ++i) {
    const float x = dist(rng);
    ASSERT_EQ(QuantizeValue(x, int8), ReferenceQuantize(x, int8.scale, -128, -128, 127))
        << "x = " << x;
    ASSERT_EQ(QuantizeValue(x, uint8), ReferenceQuantize(x, uint8.scale, 10, 0, 255))
        << "x = " << x;
  }
  for (int q = -128; q <= 127; ++q) {
    EXPECT_EQ(QuantizeValue(DequantizeValue(q, int8), int8), q);
  }
}

// What ai-edge-litert 2.3.0's QUANTIZE was measured to do with exact ties
// (tests/python/test_quantized_models.py checks it against the runtime):
// ties to even in whole groups of 8 elements, away from zero in the tail.
TEST(Quantization, TensorsQuantizeTiesAsTfliteKernelDoes) {
  const QuantParams q{0.5f, 0, -128, 127};
  const size_t count = 11;  // one group of 8, a tail of 3
  const float ties[] = {0.25f, 0.75f, -0.25f, -0.75f, 1.25f, 1.75f, -1.25f, -1.75f,
                        0.25f, 0.75f, -0.25f};  // x / s = +-0.5, +-1.5, +-2.5, +-3.5
  const int expected[] = {0, 2, 0, -2, 2, 4, -2, -4, 1, 2, -1};
  for (size_t i = 0; i < count; ++i) {
    EXPECT_EQ(QuantizeElementLikeTflite(ties[i], i, count, q), expected[i]) << i;
  }
  // Away from ties every rule agrees.
  EXPECT_EQ(QuantizeElementLikeTflite(0.3f, 0, count, q), 1);
  EXPECT_EQ(QuantizeElementLikeTflite(-0.3f, 9, count, q), -1);
}

TEST(Quantization, ActivationParamsAreReadAndChecked) {
  QuantizedTensor good(abi::kUInt8, {1, 4}, {0.02f}, {128});
  auto q = ActivationQuantization(good.get());
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->scale, 0.02f);
  EXPECT_EQ(q->zero_point, 128);
  EXPECT_EQ(q->qmin, 0);
  EXPECT_EQ(q->qmax, 255);
  QuantizedTensor int8(abi::kInt8, {1, 4}, {0.1f}, {-3});
  ASSERT_TRUE(ActivationQuantization(int8.get()).ok());
  EXPECT_EQ(ActivationQuantization(int8.get())->qmin, -128);
}

TEST(Quantization, BadActivationParamsAreDeclinedWithAReason) {
  const float nan = std::nanf("");
  struct Case {
    const char* what;
    QuantizedTensor tensor;
  };
  std::vector<Case> cases;
  cases.push_back({"zero scale", QuantizedTensor(abi::kUInt8, {4}, {0.0f}, {0})});
  cases.push_back({"negative scale", QuantizedTensor(abi::kUInt8, {4}, {-1.0f}, {0})});
  cases.push_back({"NaN scale", QuantizedTensor(abi::kInt8, {4}, {nan}, {0})});
  cases.push_back({"uint8 zero point 256", QuantizedTensor(abi::kUInt8, {4}, {1.0f}, {256})});
  cases.push_back({"int8 zero point -129", QuantizedTensor(abi::kInt8, {4}, {1.0f}, {-129})});
  cases.push_back({"per-channel activation",
                   QuantizedTensor(abi::kInt8, {1, 2}, {1.0f, 2.0f}, {0, 0}, 1)});
  cases.push_back({"int16 activation", QuantizedTensor(abi::kInt16, {4}, {1.0f}, {0})});
  for (Case& c : cases) {
    auto q = ActivationQuantization(c.tensor.get());
    EXPECT_FALSE(q.ok()) << c.what;
    if (!q.ok()) {
      EXPECT_FALSE(q.status().message().empty()) << c.what;
    }
  }
  QuantizedTensor none(abi::kUInt8, {4}, {1.0f}, {0});
  none.tensor.quantization.type = abi::kNoQuantization;
  EXPECT_FALSE(ActivationQuantization(none.get()).ok());
  QuantizedTensor blockwise(abi::kInt8, {4}, {1.0f}, {0});
  blockwise.tensor.quantization.type = abi::kBlockwiseQuantization;
  EXPECT_FALSE(ActivationQuantization(blockwise.get()).ok());
  QuantizedTensor disagree(abi::kUInt8, {4}, {1.0f}, {3});
  disagree.tensor.params.zero_point = 4;
  EXPECT_FALSE(ActivationQuantization(disagree.get()).ok());
}

TEST(Quantization, ConstantParamsAreChecked) {
  QuantizedTensor per_channel(abi::kInt8, {3, 1, 1, 2}, {0.1f, 0.2f, 0.3f}, {0, 0, 0}, 0);
  EXPECT_TRUE(CheckConstantQuantization(per_channel.get()).ok());
  QuantizedTensor bias(abi::kInt32, {3}, {0.01f, 0.02f, 0.03f}, {0, 0, 0}, 0);
  EXPECT_TRUE(CheckConstantQuantization(bias.get()).ok());
  QuantizedTensor wrong_length(abi::kInt8, {3, 2}, {0.1f, 0.2f}, {0, 0}, 0);
  EXPECT_FALSE(CheckConstantQuantization(wrong_length.get()).ok());
  QuantizedTensor axis_out_of_range(abi::kInt8, {3, 2}, {0.1f, 0.2f}, {0, 0}, 2);
  EXPECT_FALSE(CheckConstantQuantization(axis_out_of_range.get()).ok());
  QuantizedTensor negative_axis(abi::kInt8, {3, 2}, {0.1f, 0.2f}, {0, 0}, -1);
  EXPECT_FALSE(CheckConstantQuantization(negative_axis.get()).ok());
  QuantizedTensor zero_scale(abi::kInt8, {3}, {0.1f, 0.0f, 0.1f}, {0, 0, 0}, 0);
  EXPECT_FALSE(CheckConstantQuantization(zero_scale.get()).ok());
  QuantizedTensor zero_points_mismatch(abi::kInt8, {3}, {0.1f, 0.1f, 0.1f}, {0, 0}, 0);
  EXPECT_FALSE(CheckConstantQuantization(zero_points_mismatch.get()).ok());
  QuantizedTensor bias_zero_point(abi::kInt32, {1}, {0.1f}, {5});
  EXPECT_FALSE(CheckConstantQuantization(bias_zero_point.get()).ok());
}

TEST(Quantization, QuantizedVersionsFollowTfliteOpVersioning) {
  EXPECT_GE(QuantizedMaxVersion(abi::kTfLiteBuiltinAdd), 2);
  EXPECT_GE(QuantizedMaxVersion(abi::kTfLiteBuiltinConv2d), 3);
  EXPECT_GE(QuantizedMaxVersion(abi::kTfLiteBuiltinDepthwiseConv2d), 3);
  EXPECT_GE(QuantizedMaxVersion(abi::kTfLiteBuiltinFullyConnected), 4);
  EXPECT_EQ(QuantizedMaxVersion(abi::kTfLiteBuiltinExp), 0);  // no int8 EXP kernel here
}

}  // namespace
}  // namespace tflite_gles
