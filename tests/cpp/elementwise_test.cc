// ADD, SUB, MUL, RELU, RELU6, LOGISTIC on the GPU against a naive float64
// reference, over channel counts that are and are not multiples of 4.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <tuple>

#include "delegate/tflite_builtin.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

double Activate(double x, abi::FusedActivation act) {
  switch (act) {
    case abi::kActRelu: return std::max(0.0, x);
    case abi::kActRelu6: return std::min(6.0, std::max(0.0, x));
    case abi::kActReluN1To1: return std::min(1.0, std::max(-1.0, x));
    default: return x;
  }
}

double Binary(int op, double a, double b) {
  switch (op) {
    case abi::kTfLiteBuiltinAdd: return a + b;
    case abi::kTfLiteBuiltinSub: return a - b;
    default: return a * b;
  }
}

// dims of `b` broadcast against `out` (4-D, each 1 or equal).
std::vector<float> BroadcastReference(int op, abi::FusedActivation act,
                                      const std::vector<int>& out,
                                      const std::vector<float>& a,
                                      const std::vector<int>& a_dims,
                                      const std::vector<float>& b,
                                      const std::vector<int>& b_dims) {
  std::vector<float> result;
  auto index = [](const std::vector<int>& dims, int n, int h, int w, int c) {
    n = dims[0] == 1 ? 0 : n;
    h = dims[1] == 1 ? 0 : h;
    w = dims[2] == 1 ? 0 : w;
    c = dims[3] == 1 ? 0 : c;
    return ((n * dims[1] + h) * dims[2] + w) * dims[3] + c;
  };
  for (int n = 0; n < out[0]; ++n)
    for (int h = 0; h < out[1]; ++h)
      for (int w = 0; w < out[2]; ++w)
        for (int c = 0; c < out[3]; ++c) {
          double x = Binary(op, a[index(a_dims, n, h, w, c)],
                            b[index(b_dims, n, h, w, c)]);
          result.push_back(static_cast<float>(Activate(x, act)));
        }
  return result;
}

size_t Count(const std::vector<int>& dims) {
  size_t n = 1;
  for (int d : dims) n *= static_cast<size_t>(d);
  return n;
}

using BinaryCase = std::tuple<int /*op*/, int /*channels*/, bool /*fp16*/>;

class BinaryOpTest : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(BinaryOpTest, TwoTensorsOfTheSameShapeWithEachActivation) {
  const auto [op, channels, fp16] = GetParam();
  for (abi::FusedActivation act : {abi::kActNone, abi::kActRelu,
                                   abi::kActRelu6, abi::kActReluN1To1}) {
    const std::vector<int> dims = {2, 3, 5, channels};
    auto a = RandomData(Count(dims), 1 + channels, -8, 8);
    auto b = RandomData(Count(dims), 100 + channels, -8, 8);
    OpTester tester(op);
    tester.AddInput(dims, a);
    tester.AddInput(dims, b);
    tester.AddOutput(dims);
    abi::AddParams params{};
    params.activation = act;
    tester.SetParams(params);
    Status status = tester.Run(fp16);
    ASSERT_TRUE(status.ok()) << status.message();
    auto expected = BroadcastReference(op, act, dims, a, dims, b, dims);
    EXPECT_LE(MaxRelativeError(tester.output(), expected),
              fp16 ? kFp16Tolerance : kFp32Tolerance)
        << abi::BuiltinOperatorName(op) << " act=" << act << " c=" << channels;
  }
}

TEST_P(BinaryOpTest, PerChannelConstantBroadcastOverSpace) {
  const auto [op, channels, fp16] = GetParam();
  const std::vector<int> dims = {1, 4, 3, channels};
  const std::vector<int> b_dims = {1, 1, 1, channels};
  auto a = RandomData(Count(dims), 7, -4, 4);
  auto b = RandomData(channels, 8, -4, 4);
  OpTester tester(op);
  tester.AddInput(dims, a);
  tester.AddConstInput({channels}, b);
  tester.AddOutput(dims);
  tester.SetParams(abi::AddParams{});
  Status status = tester.Run(fp16);
  ASSERT_TRUE(status.ok()) << status.message();
  auto expected = BroadcastReference(op, abi::kActNone, dims, a, dims, b, b_dims);
  EXPECT_LE(MaxRelativeError(tester.output(), expected),
            fp16 ? kFp16Tolerance : kFp32Tolerance);
}

TEST_P(BinaryOpTest, ScalarConstantBecomesALiteral) {
  const auto [op, channels, fp16] = GetParam();
  const std::vector<int> dims = {1, 3, 3, channels};
  auto a = RandomData(Count(dims), 9, -4, 4);
  const std::vector<float> b = {1.75f};
  OpTester tester(op);
  tester.AddInput(dims, a);
  tester.AddConstInput({}, b);
  tester.AddOutput(dims);
  tester.SetParams(abi::AddParams{});
  Status status = tester.Run(fp16);
  ASSERT_TRUE(status.ok()) << status.message();
  auto expected =
      BroadcastReference(op, abi::kActNone, dims, a, dims, b, {1, 1, 1, 1});
  EXPECT_LE(MaxRelativeError(tester.output(), expected),
            fp16 ? kFp16Tolerance : kFp32Tolerance);
}

TEST_P(BinaryOpTest, SingleChannelTensorSplatsAcrossChannels) {
  const auto [op, channels, fp16] = GetParam();
  const std::vector<int> dims = {1, 2, 5, channels};
  const std::vector<int> b_dims = {1, 2, 5, 1};
  auto a = RandomData(Count(dims), 11, -4, 4);
  auto b = RandomData(Count(b_dims), 12, -4, 4);
  OpTester tester(op);
  tester.AddInput(dims, a);
  tester.AddInput(b_dims, b);
  tester.AddOutput(dims);
  tester.SetParams(abi::AddParams{});
  Status status = tester.Run(fp16);
  ASSERT_TRUE(status.ok()) << status.message();
  auto expected = BroadcastReference(op, abi::kActNone, dims, a, dims, b, b_dims);
  EXPECT_LE(MaxRelativeError(tester.output(), expected),
            fp16 ? kFp16Tolerance : kFp32Tolerance);
}

INSTANTIATE_TEST_SUITE_P(
    Elementwise, BinaryOpTest,
    ::testing::Combine(::testing::Values(abi::kTfLiteBuiltinAdd,
                                         abi::kTfLiteBuiltinSub,
                                         abi::kTfLiteBuiltinMul),
                       ::testing::Values(1, 3, 4, 5, 8, 13),
                       ::testing::Bool()));

using UnaryCase = std::tuple<int /*op*/, int /*channels*/, bool /*fp16*/>;
class UnaryOpTest : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryOpTest, MatchesReferenceOnRandomData) {
  const auto [op, channels, fp16] = GetParam();
  const std::vector<int> dims = {2, 3, 7, channels};
  auto a = RandomData(Count(dims), 21 + channels, -10, 10);
  OpTester tester(op);
  tester.AddInput(dims, a);
  tester.AddOutput(dims);
  Status status = tester.Run(fp16);
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<float> expected;
  for (float x : a) {
    double v = x;
    if (op == abi::kTfLiteBuiltinRelu) v = std::max(0.0, v);
    if (op == abi::kTfLiteBuiltinRelu6) v = std::min(6.0, std::max(0.0, v));
    if (op == abi::kTfLiteBuiltinLogistic) v = 1.0 / (1.0 + std::exp(-v));
    expected.push_back(static_cast<float>(v));
  }
  EXPECT_LE(MaxRelativeError(tester.output(), expected),
            fp16 ? kFp16Tolerance : kFp32Tolerance);
}

INSTANTIATE_TEST_SUITE_P(
    Elementwise, UnaryOpTest,
    ::testing::Combine(::testing::Values(abi::kTfLiteBuiltinRelu,
                                         abi::kTfLiteBuiltinRelu6,
                                         abi::kTfLiteBuiltinLogistic),
                       ::testing::Values(1, 3, 4, 5, 8, 13),
                       ::testing::Bool()));

TEST(ElementwiseSupport, DeclinesShapesThatDoNotBroadcast) {
  OpTester tester(abi::kTfLiteBuiltinAdd);
  tester.AddInput({1, 2, 2, 3}, RandomData(12, 1));
  tester.AddInput({1, 2, 2, 2}, RandomData(8, 2));
  tester.AddOutput({1, 2, 2, 3});
  tester.SetParams(abi::AddParams{});
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("does not broadcast"), std::string::npos)
      << status.message();
}

TEST(ElementwiseSupport, DeclinesUnknownNewerVersions) {
  OpTester tester(abi::kTfLiteBuiltinAdd, /*version=*/99);
  tester.AddInput({1, 2}, RandomData(2, 1));
  tester.AddInput({1, 2}, RandomData(2, 2));
  tester.AddOutput({1, 2});
  tester.SetParams(abi::AddParams{});
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("version 99"), std::string::npos);
}

}  // namespace
}  // namespace tflite_gles::testing
