// The elementwise ops on the GPU against a naive float64 reference, over
// channel counts that are and are not multiples of 4, fp32 and fp16 storage:
// binary ops with broadcasting, unary ops on valid domains, large
// magnitudes, fp16 saturation, DEQUANTIZE folding, and declined cases.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

#include "delegate/abi/tflite_builtin.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

double Binary(int op, double a, double b) {
  switch (op) {
    case abi::kTfLiteBuiltinAdd: return a + b;
    case abi::kTfLiteBuiltinSub: return a - b;
    case abi::kTfLiteBuiltinMul: return a * b;
    case abi::kTfLiteBuiltinDiv: return a / b;
    case abi::kTfLiteBuiltinMaximum: return std::max(a, b);
    case abi::kTfLiteBuiltinMinimum: return std::min(a, b);
    case abi::kTfLiteBuiltinSquaredDifference: return (a - b) * (a - b);
    case abi::kTfLiteBuiltinPow: return std::pow(a, b);
    case abi::kTfLiteBuiltinPrelu: return a >= 0 ? a : a * b;
    default: return NAN;
  }
}

bool HasFusedActivation(int op) {
  return op == abi::kTfLiteBuiltinAdd || op == abi::kTfLiteBuiltinSub ||
         op == abi::kTfLiteBuiltinMul || op == abi::kTfLiteBuiltinDiv;
}

// Random operands in each op's domain: POW bases positive (negative bases
// are tested with integral exponents separately), DIV divisors as small as
// 1e-3 in magnitude (RandomData never returns smaller).
std::vector<float> Operand(int op, int which, size_t count, uint32_t seed) {
  if (op == abi::kTfLiteBuiltinPow) {
    return which == 0 ? RandomData(count, seed, 0.1f, 3.0f)
                      : RandomData(count, seed, -3.0f, 3.0f);
  }
  if (op == abi::kTfLiteBuiltinDiv && which == 1) {
    return RandomData(count, seed, -2.0f, 2.0f);
  }
  return RandomData(count, seed, -8.0f, 8.0f);
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

using BinaryCase = std::tuple<int /*op*/, int /*channels*/, bool /*fp16*/>;

class BinaryOpTest : public ::testing::TestWithParam<BinaryCase> {};

// dims right-aligned to rank 4 with ones (TFLite broadcasting).
std::vector<int> Aligned4(const std::vector<int>& dims) {
  std::vector<int> aligned(4 - dims.size(), 1);
  aligned.insert(aligned.end(), dims.begin(), dims.end());
  return aligned;
}

// Runs `op` on inputs of `a_dims` and `b_dims` (either may be a constant of
// lower rank) and compares with the float64 reference.
void ExpectBinaryMatches(int op, const std::vector<int>& a_dims, bool a_const,
                         const std::vector<int>& b_dims, bool b_const,
                         abi::FusedActivation act, bool fp16, uint32_t seed) {
  const std::vector<int> a4 = Aligned4(a_dims), b4 = Aligned4(b_dims);
  std::vector<int> out(4);
  for (int d = 0; d < 4; ++d) out[d] = std::max(a4[d], b4[d]);
  auto a = Operand(op, 0, Count(a_dims), seed);
  auto b = Operand(op, 1, Count(b_dims), seed + 1000);
  OpTester tester(op);
  if (a_const) tester.AddConstInput(a_dims, a); else tester.AddInput(a_dims, a);
  if (b_const) tester.AddConstInput(b_dims, b); else tester.AddInput(b_dims, b);
  tester.AddOutput(out);
  abi::AddParams params{};  // DivParams, MulParams, SubParams: same layout
  params.activation = act;
  tester.SetParams(params);
  Status status = tester.Run(fp16);
  ASSERT_TRUE(status.ok()) << status.message();
  auto expected = BroadcastReference(op, act, out, a, a4, b, b4);
  EXPECT_LE(MaxRelativeError(tester.output(), expected),
            fp16 ? kFp16Tolerance : kFp32Tolerance)
      << abi::BuiltinOperatorName(op) << " act=" << act;
}

// One test per (op, channels, precision) covering the same-shape case with
// each fused activation and every broadcast form: fewer test processes
// (each creates its EGL context), same coverage.
TEST_P(BinaryOpTest, SameShapeAndEveryBroadcastForm) {
  const auto [op, channels, fp16] = GetParam();
  const int c = channels;
  for (abi::FusedActivation act : {abi::kActNone, abi::kActRelu,
                                   abi::kActRelu6, abi::kActReluN1To1}) {
    if (act != abi::kActNone && !HasFusedActivation(op)) continue;
    SCOPED_TRACE("two tensors of the same shape");
    ExpectBinaryMatches(op, {2, 3, 5, c}, false, {2, 3, 5, c}, false, act,
                        fp16, 1 + c);
  }
  {
    SCOPED_TRACE("per-channel constant broadcast over space");
    ExpectBinaryMatches(op, {1, 4, 3, c}, false, {c}, true, abi::kActNone,
                        fp16, 7);
  }
  {
    SCOPED_TRACE("scalar constant becomes a literal");
    ExpectBinaryMatches(op, {1, 3, 3, c}, false, {}, true, abi::kActNone,
                        fp16, 9);
  }
  {
    SCOPED_TRACE("single-channel tensor splats across channels");
    ExpectBinaryMatches(op, {1, 2, 5, c}, false, {1, 2, 5, 1}, false,
                        abi::kActNone, fp16, 11);
  }
  // The remaining forms share the indexing above; three channel counts
  // (one, padded, several slices) keep the shader compiles down.
  if (c != 1 && c != 5 && c != 13) return;
  {
    SCOPED_TRACE("constant of lower rank broadcast over width");
    ExpectBinaryMatches(op, {2, 4, 3, c}, false, {4, 1, c}, true,
                        abi::kActNone, fp16, 13);
  }
  {
    SCOPED_TRACE("constant first input (scalar numerator)");
    ExpectBinaryMatches(op, {}, true, {1, 3, 2, c}, false, abi::kActNone,
                        fp16, 15);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Elementwise, BinaryOpTest,
    ::testing::Combine(::testing::Values(abi::kTfLiteBuiltinAdd,
                                         abi::kTfLiteBuiltinSub,
                                         abi::kTfLiteBuiltinMul,
                                         abi::kTfLiteBuiltinDiv,
                                         abi::kTfLiteBuiltinMaximum,
                                         abi::kTfLiteBuiltinMinimum,
                                         abi::kTfLiteBuiltinSquaredDifference,
                                         abi::kTfLiteBuiltinPow,
                                         abi::kTfLiteBuiltinPrelu),
                       ::testing::Values(1, 3, 4, 5, 8, 13),
                       ::testing::Bool()));

using UnaryCase = std::tuple<int /*op*/, int /*channels*/, bool /*fp16*/>;
class UnaryOpTest : public ::testing::TestWithParam<UnaryCase> {};

constexpr float kLeakyAlpha = 0.3f;

double Unary(int op, double x) {
  switch (op) {
    case abi::kTfLiteBuiltinRelu: return std::max(0.0, x);
    case abi::kTfLiteBuiltinRelu6: return std::min(6.0, std::max(0.0, x));
    case abi::kTfLiteBuiltinReluN1To1: return std::min(1.0, std::max(-1.0, x));
    case abi::kTfLiteBuiltinRelu0To1: return std::min(1.0, std::max(0.0, x));
    case abi::kTfLiteBuiltinLogistic: return 1.0 / (1.0 + std::exp(-x));
    case abi::kTfLiteBuiltinTanh: return std::tanh(x);
    case abi::kTfLiteBuiltinExp: return std::exp(x);
    case abi::kTfLiteBuiltinSqrt: return std::sqrt(x);
    case abi::kTfLiteBuiltinRsqrt: return 1.0 / std::sqrt(x);
    case abi::kTfLiteBuiltinAbs: return std::fabs(x);
    case abi::kTfLiteBuiltinNeg: return -x;
    case abi::kTfLiteBuiltinSquare: return x * x;
    case abi::kTfLiteBuiltinLeakyRelu: return x >= 0 ? x : kLeakyAlpha * x;
    case abi::kTfLiteBuiltinElu: return x > 0 ? x : std::expm1(x);
    case abi::kTfLiteBuiltinHardSwish:
      return x * std::min(6.0, std::max(0.0, x + 3.0)) / 6.0;
    default: return NAN;
  }
}

// Inputs in the op's domain: SQRT/RSQRT positive (down to 1e-3), EXP within
// [-10, 10] (exp(10) = 22026 fits fp16's 65504).
std::vector<float> UnaryInput(int op, size_t count, uint32_t seed) {
  if (op == abi::kTfLiteBuiltinSqrt || op == abi::kTfLiteBuiltinRsqrt) {
    return RandomData(count, seed, 1e-3f, 100.0f);
  }
  return RandomData(count, seed, -10.0f, 10.0f);
}

// Runs unary `op` on `input` (dims {1, 1, n, 1}-like shapes given by `dims`).
Status RunUnary(int op, const std::vector<int>& dims,
                const std::vector<float>& input, bool fp16,
                std::vector<float>* output) {
  OpTester tester(op);
  tester.AddInput(dims, input);
  tester.AddOutput(dims);
  if (op == abi::kTfLiteBuiltinLeakyRelu) {
    tester.SetParams(abi::LeakyReluParams{kLeakyAlpha});
  }
  TFG_RETURN_IF_ERROR(tester.Run(fp16));
  *output = tester.output();
  return Status::Ok();
}

std::vector<float> UnaryReference(int op, const std::vector<float>& input) {
  std::vector<float> expected;
  for (float x : input) expected.push_back(static_cast<float>(Unary(op, x)));
  return expected;
}

TEST_P(UnaryOpTest, MatchesReferenceOnRandomData) {
  const auto [op, channels, fp16] = GetParam();
  const std::vector<int> dims = {2, 3, 7, channels};
  auto a = UnaryInput(op, Count(dims), 21 + channels);
  std::vector<float> output;
  Status status = RunUnary(op, dims, a, fp16, &output);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_LE(MaxRelativeError(output, UnaryReference(op, a)),
            fp16 ? kFp16Tolerance : kFp32Tolerance)
      << abi::BuiltinOperatorName(op);
}

INSTANTIATE_TEST_SUITE_P(
    Elementwise, UnaryOpTest,
    ::testing::Combine(
        ::testing::Values(
            abi::kTfLiteBuiltinRelu, abi::kTfLiteBuiltinRelu6,
            abi::kTfLiteBuiltinReluN1To1, abi::kTfLiteBuiltinRelu0To1,
            abi::kTfLiteBuiltinLogistic, abi::kTfLiteBuiltinTanh,
            abi::kTfLiteBuiltinExp, abi::kTfLiteBuiltinSqrt,
            abi::kTfLiteBuiltinRsqrt, abi::kTfLiteBuiltinAbs,
            abi::kTfLiteBuiltinNeg, abi::kTfLiteBuiltinSquare,
            abi::kTfLiteBuiltinLeakyRelu, abi::kTfLiteBuiltinElu,
            abi::kTfLiteBuiltinHardSwish),
        ::testing::Values(1, 3, 4, 5, 8, 13), ::testing::Bool()));

// Saturating ops at magnitudes where a naive formula overflows exp():
// tanh and logistic must give +-1 / 0..1 and ELU -1, never NaN.
TEST(ElementwiseNumerics, SaturatingOpsStayFiniteForLargeMagnitudes) {
  for (bool fp16 : {false, true}) {
    for (int op : {abi::kTfLiteBuiltinTanh, abi::kTfLiteBuiltinLogistic,
                   abi::kTfLiteBuiltinElu}) {
      const std::vector<int> dims = {1, 4, 4, 5};
      auto a = RandomData(Count(dims), 5, -200.0f, 200.0f);
      // ELU's positive branch is x itself; keep it within fp16's range.
      std::vector<float> output;
      Status status = RunUnary(op, dims, a, fp16, &output);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_LE(MaxRelativeError(output, UnaryReference(op, a)),
                fp16 ? kFp16Tolerance : kFp32Tolerance)
          << abi::BuiltinOperatorName(op) << " fp16=" << fp16;
    }
  }
}

TEST(ElementwiseNumerics, ExpOfLargeInputsInFp32) {
  const std::vector<int> dims = {1, 3, 5, 6};
  auto a = RandomData(Count(dims), 6, -85.0f, 85.0f);
  std::vector<float> output;
  Status status = RunUnary(abi::kTfLiteBuiltinExp, dims, a, false, &output);
  ASSERT_TRUE(status.ok()) << status.message();
  // Relative to the value itself: exp(85) ~ 8e36.
  auto expected = UnaryReference(abi::kTfLiteBuiltinExp, a);
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(std::isfinite(output[i])) << "exp(" << a[i] << ")";
    EXPECT_NEAR(output[i] / expected[i], 1.0, 1e-5) << "exp(" << a[i] << ")";
  }
}

// fp16 storage saturates at the largest half instead of storing +Inf.
TEST(ElementwiseNumerics, Fp16StorageSaturatesInsteadOfOverflowing) {
  const std::vector<int> dims = {1, 2, 3, 5};
  auto a = RandomData(Count(dims), 8, 12.0f, 20.0f);  // exp(12) > 65504
  std::vector<float> output;
  Status status = RunUnary(abi::kTfLiteBuiltinExp, dims, a, true, &output);
  ASSERT_TRUE(status.ok()) << status.message();
  for (float v : output) EXPECT_EQ(v, 65504.0f);
}

// POW of negative bases: integral exponents keep std::pow's sign, others
// give NaN like the CPU.
TEST(ElementwiseNumerics, PowOfNegativeBases) {
  const std::vector<int> dims = {1, 2, 2, 4};
  const std::vector<float> base = {-2.0f, -1.5f, -0.5f, 3.0f, -2.0f, -1.5f, 2.0f, -3.0f,
                                   -2.0f, -1.25f, -4.0f, 0.5f, -2.0f, -1.5f, 1.5f, -0.75f};
  const std::vector<float> exponent = {3.0f, 2.0f, -1.0f, 0.5f, -2.0f, 0.5f, 2.5f, 1.0f,
                                       4.0f, -3.0f, 0.0f, -2.0f, 1.5f, 5.0f, 2.0f, 2.0f};
  for (bool fp16 : {false, true}) {
    OpTester tester(abi::kTfLiteBuiltinPow);
    tester.AddInput(dims, base);
    tester.AddInput(dims, exponent);
    tester.AddOutput(dims);
    Status status = tester.Run(fp16);
    ASSERT_TRUE(status.ok()) << status.message();
    std::vector<float> expected;
    for (size_t i = 0; i < base.size(); ++i) {
      expected.push_back(static_cast<float>(std::pow(double{base[i]}, double{exponent[i]})));
    }
    EXPECT_LE(MaxRelativeError(tester.output(), expected),
              fp16 ? kFp16Tolerance : kFp32Tolerance) << "fp16=" << fp16;
  }
}

// Like TFLite's CPU kernels, ADD/SUB/MUL/DIV clamp to [-FLT_MAX, FLT_MAX]:
// x/0 and overflows give +-FLT_MAX, not Inf; 0/0 stays NaN.
TEST(ElementwiseNumerics, DivisionByZeroAndOverflowClampToFloatMax) {
  const float kMax = std::numeric_limits<float>::max();
  OpTester tester(abi::kTfLiteBuiltinDiv);
  tester.AddInput({1, 1, 1, 4}, {1.0f, -2.0f, 0.0f, 3e38f});
  tester.AddInput({1, 1, 1, 4}, {0.0f, 0.0f, 0.0f, 1e-30f});
  tester.AddOutput({1, 1, 1, 4});
  tester.SetParams(abi::DivParams{});
  Status status = tester.Run();
  ASSERT_TRUE(status.ok()) << status.message();
  const std::vector<float>& out = tester.output();
  EXPECT_EQ(out[0], kMax);
  EXPECT_EQ(out[1], -kMax);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], kMax);
}

// A DEQUANTIZE of a constant has no dispatch; as a partition output its
// folded values are written from the CPU.
TEST(Dequantize, ConstantInputIsFoldedAndWrittenAsAnOutput) {
  const std::vector<int> dims = {2, 3, 5};
  auto weights = RandomData(Count(dims), 17);
  OpTester tester(abi::kTfLiteBuiltinDequantize, /*version=*/3);
  tester.AddConstInput(dims, weights);
  tester.AddOutput(dims);
  Status status = tester.Run();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(tester.output(), weights);
}

TEST(Dequantize, DeclinesNonConstantInputs) {
  OpTester tester(abi::kTfLiteBuiltinDequantize);
  tester.AddInput({1, 4}, RandomData(4, 1));
  tester.AddOutput({1, 4});
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("not a constant"), std::string::npos)
      << status.message();
}

TEST(ElementwiseSupport, DeclinesUnaryOpsOfConstants) {
  OpTester tester(abi::kTfLiteBuiltinExp);
  tester.AddConstInput({1, 4}, RandomData(4, 1));
  tester.AddOutput({1, 4});
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("constant input"), std::string::npos)
      << status.message();
}

TEST(ElementwiseSupport, DeclinesFusedTanhAndSigmoidWhichTheCpuIgnores) {
  for (abi::FusedActivation act : {abi::kActTanh, abi::kActSigmoid}) {
    OpTester tester(abi::kTfLiteBuiltinAdd);
    tester.AddInput({1, 2, 2, 3}, RandomData(12, 1));
    tester.AddInput({1, 2, 2, 3}, RandomData(12, 2));
    tester.AddOutput({1, 2, 2, 3});
    abi::AddParams params{};
    params.activation = act;
    tester.SetParams(params);
    Status status = tester.Check();
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find("TANH/SIGMOID"), std::string::npos)
        << status.message();
  }
}

TEST(ElementwiseSupport, DeclinesUnsupportedFusedActivation) {
  OpTester tester(abi::kTfLiteBuiltinDiv);
  tester.AddInput({1, 2, 2, 3}, RandomData(12, 1));
  tester.AddInput({1, 2, 2, 3}, RandomData(12, 2));
  tester.AddOutput({1, 2, 2, 3});
  abi::DivParams params{};
  params.activation = abi::kActSignBit;
  tester.SetParams(params);
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("fused activation"), std::string::npos)
      << status.message();
}

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

// The three read paths a device can get (delegate.cc AcquireEnvironment):
// texture-buffer reads everywhere; SSBO reads with the upload staging still
// read through a texture buffer (NVIDIA's default); SSBO reads throughout
// (GPUs without texture buffers). Each must upload, compute and read back
// the same answer: a SUB of two inputs with a ReLU, odd channel count so the
// BHWC<->PHWC4 conversions handle a partial slice; and with either form of
// the readback conversion (DeviceProfile::per_float_readback).
TEST(ReadPaths, UploadComputeReadbackAgreeOnEveryPath) {
  const std::vector<int> dims = {2, 3, 5, 7};
  const auto a = RandomData(Count(dims), 41, -3, 3);
  const auto b = RandomData(Count(dims), 42, -3, 3);
  std::vector<float> expected(a.size());
  for (size_t i = 0; i < a.size(); ++i) expected[i] = std::max(0.0f, a[i] - b[i]);
  struct Path { const char* name; bool texture_reads, staging_texture_reads; };
  for (const Path& path : {Path{"texture buffers", true, false},
                           Path{"SSBO + staging texture", false, true},
                           Path{"SSBO only", false, false}}) {
    for (int run = 0; run < 4; ++run) {
      // Readbacks one PHWC4 vec4 or one BHWC float per invocation.
      const bool fp16 = run & 1, per_float = run & 2;
      OpTester tester(abi::kTfLiteBuiltinSub);
      tester.AddInput(dims, a);
      tester.AddInput(dims, b);
      tester.AddOutput(dims);
      tester.SetParams(abi::SubParams{abi::kActRelu, false});
      tester.TuneDevice([&](DeviceProfile* device) {
        device->texture_buffer_reads = path.texture_reads;
        device->staging_texture_reads = path.staging_texture_reads;
        device->per_float_readback = per_float;
      });
      Status status = tester.Run(fp16);
      ASSERT_TRUE(status.ok()) << path.name << ": " << status.message();
      EXPECT_LE(MaxRelativeError(tester.output(), expected), fp16 ? 4e-3 : 1e-6)
          << path.name << (fp16 ? " fp16" : " fp32") << (per_float ? " per float" : "");
    }
  }
}

}  // namespace
}  // namespace tflite_gles::testing
