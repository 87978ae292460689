// AVERAGE_POOL_2D, MAX_POOL_2D, MediaPipe's MaxPoolingWithArgmax2D and
// MaxUnpooling2D, MEAN, SOFTMAX, L2_NORMALIZATION, RESIZE_BILINEAR and
// RESIZE_NEAREST_NEIGHBOR on the GPU against naive float64 references written
// from the ops' definitions, over channel counts that are and are not
// multiples of 4, odd spatial sizes, batch 1 and 2, fp32 and fp16 storage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>

#include "delegate/abi/half.h"
#include "delegate/abi/tflite_builtin.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

// ---------------------------------------------------------------- pooling

struct PoolSpec {
  int filter_h, filter_w, stride_h, stride_w;
  bool same;
  abi::FusedActivation activation;
};

int PooledSize(int in, int filter, int stride, bool same) {
  return same ? (in + stride - 1) / stride : (in - filter) / stride + 1;
}

int PadBefore(int in, int out, int filter, int stride) {
  return std::max((out - 1) * stride + filter - in, 0) / 2;
}

double Clamp(double x, abi::FusedActivation act) {
  if (act == abi::kActRelu) return std::max(0.0, x);
  if (act == abi::kActRelu6) return std::min(6.0, std::max(0.0, x));
  if (act == abi::kActReluN1To1) return std::min(1.0, std::max(-1.0, x));
  return x;
}

struct Pooled {
  std::vector<int> dims;
  std::vector<float> values;
  std::vector<float> argmax;  // ky * filter_w + kx + 0.1 of the first maximum
};

// Visits every position of the unclipped window and skips those outside
// the input (the shaders instead clip the loop bounds).
Pooled PoolReference(bool average, const std::vector<int>& dims,
                     const std::vector<float>& in, const PoolSpec& p) {
  const int batch = dims[0], h = dims[1], w = dims[2], c = dims[3];
  const int oh = PooledSize(h, p.filter_h, p.stride_h, p.same);
  const int ow = PooledSize(w, p.filter_w, p.stride_w, p.same);
  const int pad_h = PadBefore(h, oh, p.filter_h, p.stride_h);
  const int pad_w = PadBefore(w, ow, p.filter_w, p.stride_w);
  Pooled result;
  result.dims = {batch, oh, ow, c};
  for (int b = 0; b < batch; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          double sum = 0, best = -INFINITY;
          int count = 0, where = 0;
          for (int ky = 0; ky < p.filter_h; ++ky)
            for (int kx = 0; kx < p.filter_w; ++kx) {
              const int y = oy * p.stride_h - pad_h + ky;
              const int x = ox * p.stride_w - pad_w + kx;
              if (y < 0 || y >= h || x < 0 || x >= w) continue;
              const double v = in[((b * h + y) * w + x) * c + ch];
              sum += v;
              ++count;
              if (v > best) {
                best = v;
                where = ky * p.filter_w + kx;
              }
            }
          const double pooled = average ? sum / count : best;
          result.values.push_back(static_cast<float>(Clamp(pooled, p.activation)));
          result.argmax.push_back(static_cast<float>(where + 0.1));
        }
  return result;
}

abi::PoolParams ToParams(const PoolSpec& spec) {
  abi::PoolParams params{};
  params.padding = spec.same ? abi::kPaddingSame : abi::kPaddingValid;
  params.filter_height = spec.filter_h;
  params.filter_width = spec.filter_w;
  params.stride_height = spec.stride_h;
  params.stride_width = spec.stride_w;
  params.activation = spec.activation;
  return params;
}

// The raw TfLitePoolParams bytes MediaPipe keeps as custom options.
std::vector<uint8_t> CustomPoolOptions(const PoolSpec& spec) {
  const abi::PoolParams params = ToParams(spec);
  std::vector<uint8_t> bytes(sizeof(params));
  std::memcpy(bytes.data(), &params, sizeof(params));
  return bytes;
}

const PoolSpec kPoolSpecs[] = {
    {3, 3, 2, 2, true, abi::kActNone},   // overlapping SAME windows
    {2, 3, 1, 2, false, abi::kActRelu6},  // VALID, unequal strides
    {5, 7, 1, 1, false, abi::kActNone},   // global pooling of the 5x7 map
    {4, 2, 3, 4, true, abi::kActReluN1To1},  // strides past the filter: gaps
};

using PoolCase = std::tuple<int /*channels*/, bool /*fp16*/>;
class PoolTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolTest, AverageAndMaxPoolMatchReference) {
  const auto [channels, fp16] = GetParam();
  const std::vector<int> dims = {2, 5, 7, channels};
  const auto input = RandomData(Count(dims), 3 + channels, -3, 3);
  for (int op : {abi::kTfLiteBuiltinAveragePool2d, abi::kTfLiteBuiltinMaxPool2d}) {
    for (const PoolSpec& spec : kPoolSpecs) {
      const bool average = op == abi::kTfLiteBuiltinAveragePool2d;
      const Pooled expected = PoolReference(average, dims, AsStored(input, fp16), spec);
      OpTester tester(op);
      tester.AddInput(dims, input);
      tester.AddOutput(expected.dims);
      tester.SetParams(ToParams(spec));
      Status status = tester.Run(fp16);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_LE(MaxRelativeError(tester.output(), expected.values), Tolerance(fp16))
          << abi::BuiltinOperatorName(op) << " filter " << spec.filter_h << "x"
          << spec.filter_w;
    }
  }
}

TEST_P(PoolTest, MaxPoolingWithArgmaxWritesValuesAndIndices) {
  const auto [channels, fp16] = GetParam();
  const std::vector<int> dims = {2, 5, 7, channels};
  const auto input = RandomData(Count(dims), 30 + channels, -3, 3);
  for (const PoolSpec& spec : {PoolSpec{2, 2, 2, 2, true, abi::kActNone},
                               PoolSpec{3, 3, 2, 2, true, abi::kActRelu}}) {
    const Pooled expected = PoolReference(false, dims, AsStored(input, fp16), spec);
    OpTester tester(abi::kTfLiteBuiltinCustom);
    tester.SetCustom("MaxPoolingWithArgmax2D", CustomPoolOptions(spec));
    tester.AddInput(dims, input);
    tester.AddOutput(expected.dims);
    tester.AddOutput(expected.dims);
    Status status = tester.Run(fp16);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_LE(MaxRelativeError(tester.output(0), expected.values), Tolerance(fp16));
    EXPECT_LE(MaxRelativeError(tester.output(1), expected.argmax), Tolerance(fp16))
        << "argmax indices, filter " << spec.filter_h << "x" << spec.filter_w;
  }
}

// Scatters each value to its window position named by the index; later
// windows overwrite earlier ones, everything else is zero.
std::vector<float> UnpoolReference(const std::vector<int>& dims,
                                   const std::vector<float>& values,
                                   const std::vector<float>& indices,
                                   const PoolSpec& p, std::vector<int>* out_dims) {
  const int batch = dims[0], h = dims[1], w = dims[2], c = dims[3];
  const int oh = h * p.filter_h, ow = w * p.filter_w;
  const int pad_h = std::max((h - 1) * p.stride_h + p.filter_h - oh, 0) / 2;
  const int pad_w = std::max((w - 1) * p.stride_w + p.filter_w - ow, 0) / 2;
  *out_dims = {batch, oh, ow, c};
  std::vector<float> out(Count(*out_dims), 0.0f);
  for (int b = 0; b < batch; ++b)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int ch = 0; ch < c; ++ch) {
          const size_t i = ((b * h + y) * w + x) * c + ch;
          const int index = static_cast<int>(indices[i]);
          const int oy = y * p.stride_h - pad_h + index / p.filter_w;
          const int ox = x * p.stride_w - pad_w + index % p.filter_w;
          if (oy >= 0 && oy < oh && ox >= 0 && ox < ow) {
            out[((b * oh + oy) * ow + ox) * c + ch] = values[i];
          }
        }
  return out;
}

TEST_P(PoolTest, MaxUnpoolingPutsValuesBackAtTheirArgmax) {
  const auto [channels, fp16] = GetParam();
  // The indices come from an argmax pooling of random data, as in a model;
  // the 3x3 stride-2 case has overlapping windows (last one wins).
  for (const PoolSpec& spec : {PoolSpec{2, 2, 2, 2, true, abi::kActNone},
                               PoolSpec{3, 3, 2, 2, true, abi::kActNone}}) {
    const std::vector<int> source_dims = {2, 7, 5, channels};
    const Pooled pooled = PoolReference(
        false, source_dims, RandomData(Count(source_dims), 50 + channels), spec);
    const auto values = RandomData(Count(pooled.dims), 60 + channels, -3, 3);
    std::vector<int> out_dims;
    const auto expected = UnpoolReference(pooled.dims, AsStored(values, fp16),
                                          pooled.argmax, spec, &out_dims);
    OpTester tester(abi::kTfLiteBuiltinCustom);
    tester.SetCustom("MaxUnpooling2D", CustomPoolOptions(spec));
    tester.AddInput(pooled.dims, values);
    tester.AddInput(pooled.dims, pooled.argmax);
    tester.AddOutput(out_dims);
    Status status = tester.Run(fp16);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_LE(MaxRelativeError(tester.output(), expected), Tolerance(fp16))
        << "filter " << spec.filter_h << "x" << spec.filter_w;
  }
}

INSTANTIATE_TEST_SUITE_P(Pool, PoolTest,
                         ::testing::Combine(::testing::Values(1, 3, 4, 5, 8, 13),
                                            ::testing::Bool()));

TEST(PoolSupport, SpatialSizeOneAndBatchOne) {
  const std::vector<int> dims = {1, 1, 5, 3};
  const auto input = RandomData(Count(dims), 77);
  const PoolSpec spec{1, 3, 1, 1, true, abi::kActNone};
  const Pooled expected = PoolReference(true, dims, input, spec);
  OpTester tester(abi::kTfLiteBuiltinAveragePool2d);
  tester.AddInput(dims, input);
  tester.AddOutput(expected.dims);
  tester.SetParams(ToParams(spec));
  Status status = tester.Run();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_LE(MaxRelativeError(tester.output(), expected.values), kFp32Tolerance);
}

// A 300x257 window is past llvmpipe's 65535 loop iterations per
// invocation: global average pooling goes through the split mean kernel,
// a max pool that large is declined with the reason.
TEST(PoolSupport, GlobalPoolingOfAMapPastTheLoopLimit) {
  const std::vector<int> dims = {2, 300, 257, 5};
  const auto input = RandomData(Count(dims), 9, -1.0f, 1.0f);
  const PoolSpec spec{300, 257, 1, 1, false, abi::kActRelu};
  const Pooled expected = PoolReference(true, dims, input, spec);
  OpTester average(abi::kTfLiteBuiltinAveragePool2d);
  average.AddInput(dims, input);
  average.AddOutput(expected.dims);
  average.SetParams(ToParams(spec));
  Status status = average.Run();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_LE(MaxRelativeError(average.output(), expected.values), kFp32Tolerance);

  OpTester max(abi::kTfLiteBuiltinMaxPool2d);
  max.AddInput(dims, input);
  max.AddOutput(expected.dims);
  max.SetParams(ToParams(spec));
  status = max.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("loop iterations"), std::string::npos)
      << status.message();
}

TEST(PoolSupport, DeclinesActivationsTheCpuPoolDoesNotApply) {
  OpTester tester(abi::kTfLiteBuiltinMaxPool2d);
  tester.AddInput({1, 4, 4, 2}, RandomData(32, 1));
  tester.AddOutput({1, 2, 2, 2});
  tester.SetParams(ToParams({2, 2, 2, 2, true, abi::kActTanh}));
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("activation"), std::string::npos) << status.message();
}

TEST(PoolSupport, DeclinesAbsurdFilterSizesInsteadOfOverflowing) {
  for (int kind = 0; kind < 2; ++kind) {
    const PoolSpec spec{2, 2147483647, 1, 2147483647, true, abi::kActNone};
    OpTester tester(abi::kTfLiteBuiltinCustom);
    tester.SetCustom(kind == 0 ? "MaxPoolingWithArgmax2D" : "MaxUnpooling2D",
                     CustomPoolOptions(spec));
    tester.AddInput({1, 4, 4, 2}, RandomData(32, 1));
    if (kind == 1) tester.AddInput({1, 4, 4, 2}, RandomData(32, 2));
    tester.AddOutput({1, 4, 1, 2});
    if (kind == 0) tester.AddOutput({1, 4, 1, 2});
    Status status = tester.Check();
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find("filter or stride above"), std::string::npos)
        << status.message();
  }
}

TEST(PoolSupport, DeclinesTruncatedCustomOptions) {
  OpTester tester(abi::kTfLiteBuiltinCustom);
  tester.SetCustom("MaxPoolingWithArgmax2D", {1, 0, 0, 0});
  tester.AddInput({1, 4, 4, 2}, RandomData(32, 1));
  tester.AddOutput({1, 2, 2, 2});
  tester.AddOutput({1, 2, 2, 2});
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("custom options"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace tflite_gles::testing
