// The convolution family on the GPU against naive float64 references written
// here: CONV_2D (1x1 and general), DEPTHWISE_CONV_2D, FULLY_CONNECTED,
// TRANSPOSE_CONV and MediaPipe's Convolution2DTransposeBias (which the CPU
// interpreter does not have, so this reference is its only check).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "delegate/abi/tflite_builtin.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

// TFLite's output size and padding-before for one axis.
struct Axis {
  int out;
  int pad;
};
Axis ConvAxis(int in, int kernel, int stride, int dilation, bool same) {
  const int effective = (kernel - 1) * dilation + 1;
  const int out = same ? (in + stride - 1) / stride
                       : (in - effective + stride) / stride;
  const int total = std::max(0, (out - 1) * stride + effective - in);
  return {out, total / 2};
}

struct ConvCase {
  int batch, height, width, in_c, out_c, kernel_h, kernel_w;
  int stride_h, stride_w, dilation_h, dilation_w;
  bool same;
  abi::FusedActivation act;
  bool bias;
  std::string ToString() const {
    return std::to_string(batch) + "x" + std::to_string(height) + "x" +
           std::to_string(width) + "x" + std::to_string(in_c) + "->" +
           std::to_string(out_c) + " k" + std::to_string(kernel_h) + "x" +
           std::to_string(kernel_w) + " s" + std::to_string(stride_h) +
           std::to_string(stride_w) + " d" + std::to_string(dilation_h) +
           std::to_string(dilation_w) + (same ? " SAME" : " VALID") +
           " act" + std::to_string(act) + (bias ? " bias" : "");
  }
};

// Direct convolution; `depthwise` treats the filter as 1xHxWx(C*M).
std::vector<float> ConvReference(const ConvCase& c, const std::vector<float>& x,
                                 const std::vector<float>& w,
                                 const std::vector<float>& bias, bool depthwise,
                                 std::vector<int>* out_dims) {
  const Axis ay = ConvAxis(c.height, c.kernel_h, c.stride_h, c.dilation_h, c.same);
  const Axis ax = ConvAxis(c.width, c.kernel_w, c.stride_w, c.dilation_w, c.same);
  *out_dims = {c.batch, ay.out, ax.out, c.out_c};
  const int multiplier = c.out_c / c.in_c;
  std::vector<float> out;
  for (int b = 0; b < c.batch; ++b)
    for (int oy = 0; oy < ay.out; ++oy)
      for (int ox = 0; ox < ax.out; ++ox)
        for (int oc = 0; oc < c.out_c; ++oc) {
          double sum = bias.empty() ? 0.0 : bias[oc];
          for (int ky = 0; ky < c.kernel_h; ++ky)
            for (int kx = 0; kx < c.kernel_w; ++kx) {
              const int iy = oy * c.stride_h - ay.pad + ky * c.dilation_h;
              const int ix = ox * c.stride_w - ax.pad + kx * c.dilation_w;
              if (iy < 0 || iy >= c.height || ix < 0 || ix >= c.width) continue;
              const size_t pixel = ((static_cast<size_t>(b) * c.height + iy) * c.width + ix) * c.in_c;
              if (depthwise) {
                sum += static_cast<double>(x[pixel + oc / multiplier]) *
                       w[(ky * c.kernel_w + kx) * c.out_c + oc];
                continue;
              }
              for (int ic = 0; ic < c.in_c; ++ic) {
                sum += static_cast<double>(x[pixel + ic]) *
                       w[((static_cast<size_t>(oc) * c.kernel_h + ky) * c.kernel_w + kx) * c.in_c + ic];
              }
            }
          out.push_back(static_cast<float>(Activate(sum, c.act)));
        }
  return out;
}

// specialize: -1 the device's default, 1 shapes compiled in, 0 uniforms.
void RunConvCase(const ConvCase& c, bool depthwise, bool fp16, uint32_t seed,
                 int specialize = -1) {
  SCOPED_TRACE(c.ToString() + (fp16 ? " fp16" : " fp32") +
               (depthwise ? " depthwise" : "") +
               (specialize == 1 ? " shapes compiled in"
                                : specialize == 0 ? " shapes as uniforms" : ""));
  const std::vector<int> in_dims = {c.batch, c.height, c.width, c.in_c};
  const std::vector<int> w_dims =
      depthwise ? std::vector<int>{1, c.kernel_h, c.kernel_w, c.out_c}
                : std::vector<int>{c.out_c, c.kernel_h, c.kernel_w, c.in_c};
  auto x = RandomData(Count(in_dims), seed, -2, 2);
  auto w = RandomData(Count(w_dims), seed + 1, -0.5f, 0.5f);
  auto bias = c.bias ? RandomData(c.out_c, seed + 2, -1, 1) : std::vector<float>();
  std::vector<int> out_dims;
  auto expected = ConvReference(c, x, w, bias, depthwise, &out_dims);

  OpTester tester(depthwise ? abi::kTfLiteBuiltinDepthwiseConv2d
                            : abi::kTfLiteBuiltinConv2d,
                  c.dilation_h > 1 || c.dilation_w > 1 ? 2 : 1);
  tester.AddInput(in_dims, x);
  tester.AddConstInput(w_dims, w);
  if (c.bias) {
    tester.AddConstInput({c.out_c}, bias);
  } else {
    // TFLite's CONV_2D and DEPTHWISE_CONV_2D refuse an absent bias (-1),
    // and so does the delegate: "no bias" is a zero bias.
    tester.AddConstInput({c.out_c}, std::vector<float>(static_cast<size_t>(c.out_c), 0.0f));
  }
  tester.AddOutput(out_dims);
  const abi::Padding padding = c.same ? abi::kPaddingSame : abi::kPaddingValid;
  if (depthwise) {
    abi::DepthwiseConvParams params{padding, c.stride_w, c.stride_h,
                                    c.out_c / c.in_c, c.act, c.dilation_w,
                                    c.dilation_h};
    tester.SetParams(params);
  } else {
    abi::ConvParams params{padding, c.stride_w, c.stride_h, c.act,
                           c.dilation_w, c.dilation_h, abi::kNoType};
    tester.SetParams(params);
  }
  if (specialize >= 0) tester.SetSpecializeShapes(specialize == 1);
  Status status = tester.Run(fp16);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_LE(MaxRelativeError(tester.output(), expected),
            fp16 ? kFp16Tolerance : kFp32Tolerance);
}

constexpr abi::FusedActivation kNone = abi::kActNone;

TEST(Conv2d, PointwiseMatchesReferenceOverChannelCounts) {
  // 7x5 (35 pixels) puts output slices on x, 12x12 pixels on x; 2x10x13
  // with 40 outputs needs several slice groups.
  const ConvCase cases[] = {
      {1, 7, 5, 1, 4, 1, 1, 1, 1, 1, 1, true, kNone, true},
      {2, 7, 5, 3, 5, 1, 1, 1, 1, 1, 1, true, kNone, true},
      {1, 12, 12, 4, 8, 1, 1, 1, 1, 1, 1, false, abi::kActRelu6, true},
      {2, 12, 12, 5, 13, 1, 1, 1, 1, 1, 1, true, kNone, true},
      {1, 1, 1, 8, 3, 1, 1, 1, 1, 1, 1, true, kNone, true},
      {2, 10, 13, 13, 40, 1, 1, 1, 1, 1, 1, true, abi::kActRelu, true},
  };
  for (bool fp16 : {false, true}) {
    for (const ConvCase& c : cases) RunConvCase(c, false, fp16, 10 + c.in_c);
  }
}

TEST(Conv2d, GeneralWindowsStridesDilationsAndPadding) {
  const ConvCase cases[] = {
      {1, 9, 7, 3, 8, 3, 3, 2, 2, 1, 1, true, abi::kActRelu6, true},
      {2, 6, 5, 4, 5, 3, 3, 1, 1, 1, 1, true, kNone, true},
      {1, 11, 9, 5, 13, 3, 3, 2, 2, 1, 1, false, kNone, true},
      {1, 9, 10, 8, 4, 5, 3, 1, 2, 2, 1, true, kNone, true},
      {2, 5, 6, 13, 3, 1, 1, 2, 2, 1, 1, true, kNone, true},
      {1, 7, 7, 1, 1, 2, 2, 1, 1, 1, 1, false, kNone, false},
      {1, 1, 1, 5, 8, 3, 3, 1, 1, 1, 1, true, kNone, true},
      {1, 16, 16, 3, 32, 3, 3, 2, 2, 1, 1, true, abi::kActRelu6, true},
  };
  for (bool fp16 : {false, true}) {
    for (const ConvCase& c : cases) RunConvCase(c, false, fp16, 20 + c.in_c);
  }
}

TEST(Conv2d, EachReluFamilyActivation) {
  for (abi::FusedActivation act :
       {abi::kActRelu, abi::kActRelu6, abi::kActReluN1To1}) {
    RunConvCase({1, 5, 4, 5, 6, 3, 3, 1, 1, 1, 1, true, act, true}, false,
                false, 30);
  }
}

// Shapes are uniforms by default (DeviceProfile::specialize_shapes); layers
// too large for the shaders' float div_mod() compile them in, and so does
// TFLITE_GLES_SPECIALIZE_SHAPES=1. Both paths of both shaders, batch 2.
TEST(Conv2d, ShapesCompiledInAndAsUniformsBothMatchTheReference) {
  const ConvCase convs[] = {
      {2, 12, 12, 5, 13, 1, 1, 1, 1, 1, 1, true, kNone, true},
      {2, 7, 5, 3, 5, 1, 1, 1, 1, 1, 1, true, abi::kActRelu6, true},
      {2, 9, 7, 3, 8, 3, 3, 2, 2, 1, 1, true, abi::kActRelu6, true},
      {2, 9, 7, 6, 8, 3, 3, 1, 1, 1, 1, true, kNone, true},
  };
  const ConvCase depthwise[] = {
      {2, 15, 16, 5, 5, 3, 3, 1, 1, 1, 1, true, kNone, true},
      {2, 13, 12, 5, 5, 3, 3, 2, 2, 1, 1, false, abi::kActRelu6, true},
      {2, 5, 5, 2, 10, 3, 3, 2, 2, 1, 1, true, kNone, true},
  };
  for (int specialize : {0, 1}) {
    for (const ConvCase& c : convs) RunConvCase(c, false, false, 70, specialize);
    for (const ConvCase& c : depthwise) RunConvCase(c, true, false, 71, specialize);
  }
}

TEST(DepthwiseConv2d, Fast3x3BlocksOverChannelsStridesAndPadding) {
  const ConvCase cases[] = {
      {1, 9, 11, 1, 1, 3, 3, 1, 1, 1, 1, true, kNone, true},
      {2, 7, 6, 3, 3, 3, 3, 1, 1, 1, 1, true, abi::kActRelu6, true},
      {1, 10, 9, 4, 4, 3, 3, 2, 2, 1, 1, true, kNone, true},
      {1, 13, 12, 5, 5, 3, 3, 2, 2, 1, 1, false, kNone, true},
      {1, 14, 14, 8, 8, 3, 3, 1, 1, 1, 1, false, abi::kActRelu, true},
      {1, 1, 1, 13, 13, 3, 3, 1, 1, 1, 1, true, kNone, true},
      {1, 7, 7, 132, 132, 3, 3, 1, 1, 1, 1, true, abi::kActRelu6, true},
      // Several blocks down each column at stride 2, and unequal strides.
      {1, 20, 19, 5, 5, 3, 3, 2, 2, 1, 1, true, kNone, true},
      {2, 21, 18, 3, 3, 3, 3, 2, 2, 1, 1, false, kNone, true},
      {1, 12, 10, 4, 4, 3, 3, 2, 1, 1, 1, true, kNone, true},
  };
  for (bool fp16 : {false, true}) {
    for (const ConvCase& c : cases) RunConvCase(c, true, fp16, 40 + c.in_c);
  }
}

TEST(DepthwiseConv2d, MultipliersDilationsAndOtherWindows) {
  const ConvCase cases[] = {
      {1, 6, 7, 3, 6, 3, 3, 1, 1, 1, 1, true, kNone, true},
      {2, 5, 5, 2, 10, 3, 3, 2, 2, 1, 1, true, kNone, true},
      {1, 9, 8, 5, 5, 3, 3, 1, 1, 2, 2, true, abi::kActRelu, true},
      {1, 8, 9, 4, 4, 5, 5, 1, 1, 1, 1, true, kNone, true},
      {1, 10, 7, 13, 13, 3, 2, 2, 1, 1, 3, false, kNone, false},
  };
  for (bool fp16 : {false, true}) {
    for (const ConvCase& c : cases) RunConvCase(c, true, fp16, 50 + c.in_c);
  }
}

TEST(DepthwiseConv2d, EachReluFamilyActivation) {
  for (abi::FusedActivation act : {abi::kActRelu, abi::kActRelu6,
                                   abi::kActReluN1To1}) {
    RunConvCase({1, 5, 6, 5, 5, 3, 3, 1, 1, 1, 1, true, act, true}, true,
                false, 60);
  }
}

TEST(Conv2dSupport, DeclinesFusedTanhAndSigmoidWhichTheCpuIgnores) {
  for (abi::FusedActivation act : {abi::kActTanh, abi::kActSigmoid}) {
    OpTester tester(abi::kTfLiteBuiltinConv2d);
    tester.AddInput({1, 4, 4, 4}, RandomData(64, 1));
    tester.AddConstInput({4, 1, 1, 4}, RandomData(16, 2));
    tester.AddConstInput({4}, RandomData(4, 3));
    tester.AddOutput({1, 4, 4, 4});
    tester.SetParams(abi::ConvParams{abi::kPaddingSame, 1, 1, act, 1, 1,
                                     abi::kNoType});
    Status status = tester.Check();
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find("ignore"), std::string::npos)
        << status.message();
  }
}

TEST(Conv2dSupport, DeclinesGroupedConvolutionAndNonConstantFilters) {
  abi::ConvParams params{abi::kPaddingSame, 1, 1, kNone, 1, 1, abi::kNoType};
  {
    OpTester tester(abi::kTfLiteBuiltinConv2d);
    tester.AddInput({1, 4, 4, 8}, RandomData(128, 1));
    tester.AddConstInput({4, 3, 3, 4}, RandomData(144, 2));
    tester.AddConstInput({4}, RandomData(4, 3));
    tester.AddOutput({1, 4, 4, 4});
    tester.SetParams(params);
    Status status = tester.Check();
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find("grouped"), std::string::npos)
        << status.message();
  }
  {
    OpTester tester(abi::kTfLiteBuiltinConv2d);
    tester.AddInput({1, 4, 4, 4}, RandomData(64, 1));
    tester.AddInput({4, 1, 1, 4}, RandomData(16, 2));
    tester.AddConstInput({4}, RandomData(4, 3));
    tester.AddOutput({1, 4, 4, 4});
    tester.SetParams(params);
    Status status = tester.Check();
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find("must be a constant"), std::string::npos)
        << status.message();
  }
}

// ---------------------------------------------------------------- FC ----

struct FcCase {
  std::vector<int> in_dims;
  int outputs;
  std::vector<int> out_dims;
  bool bias;
  abi::FusedActivation act;
};

TEST(FullyConnected, RowsFlattenedBatchesKeepNumDimsAndNoBias) {
  const FcCase cases[] = {
      {{1, 13}, 5, {1, 5}, true, kNone},
      {{2, 8}, 13, {2, 13}, true, abi::kActRelu},
      {{1, 1024}, 1001, {1, 1001}, true, kNone},
      {{2, 3, 3, 5}, 7, {2, 7}, true, kNone},        // whole batch flattened
      {{1, 4, 2, 3}, 6, {1, 4, 2, 6}, true, kNone},  // keep_num_dims
      {{3, 5, 4}, 3, {15, 3}, false, abi::kActRelu6},
  };
  for (bool fp16 : {false, true}) {
    for (const FcCase& c : cases) {
      const int rows = static_cast<int>(Count(c.out_dims) / c.outputs);
      const int depth = static_cast<int>(Count(c.in_dims)) / rows;
      SCOPED_TRACE("rows " + std::to_string(rows) + " depth " +
                   std::to_string(depth) + " outputs " +
                   std::to_string(c.outputs) + (fp16 ? " fp16" : " fp32"));
      auto x = RandomData(Count(c.in_dims), depth, -2, 2);
      auto w = RandomData(static_cast<size_t>(c.outputs) * depth, 7, -0.5f, 0.5f);
      auto bias = c.bias ? RandomData(c.outputs, 8, -1, 1) : std::vector<float>();
      OpTester tester(abi::kTfLiteBuiltinFullyConnected, 5);
      tester.AddInput(c.in_dims, x);
      tester.AddConstInput({c.outputs, depth}, w);
      if (c.bias) {
        tester.AddConstInput({c.outputs}, bias);
      } else {
        tester.AddOptionalInput();
      }
      tester.AddOutput(c.out_dims);
      abi::FullyConnectedParams params{};
      params.activation = c.act;
      params.keep_num_dims = c.out_dims.size() == c.in_dims.size();
      tester.SetParams(params);
      Status status = tester.Run(fp16);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_LE(MaxRelativeError(tester.output(),
                                 FullyConnectedReference(x, rows, depth, w,
                                                         c.outputs, bias, c.act)),
                fp16 ? kFp16Tolerance : kFp32Tolerance);
    }
  }
}

TEST(FullyConnectedSupport, DeclinesShuffledWeights) {
  OpTester tester(abi::kTfLiteBuiltinFullyConnected, 2);
  tester.AddInput({1, 16}, RandomData(16, 1));
  tester.AddConstInput({4, 16}, RandomData(64, 2));
  tester.AddOptionalInput();
  tester.AddOutput({1, 4});
  abi::FullyConnectedParams params{};
  params.weights_format = abi::kFullyConnectedWeightsFormatShuffled4x16Int8;
  tester.SetParams(params);
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("shuffled"), std::string::npos)
      << status.message();
}

TEST(FullyConnectedSupport, DeclinesDepthsPastLlvmpipesLoopLimit) {
  // 128x128x16 flattened per batch: 65536 vec4 steps in one invocation.
  const int depth = 128 * 128 * 16;
  OpTester tester(abi::kTfLiteBuiltinFullyConnected);
  tester.AddInput({1, 128, 128, 16}, RandomData(depth, 1));
  tester.AddConstInput({1, depth}, RandomData(depth, 2));
  tester.AddOptionalInput();
  tester.AddOutput({1, 1});
  tester.SetParams(abi::FullyConnectedParams{});
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("loop iterations"), std::string::npos)
      << status.message();
}

// ---------------------------------------------------- transposed conv ----

struct TransposeCase {
  int batch, in_h, in_w, in_c, out_c, kernel_h, kernel_w, stride_h, stride_w;
  bool same;
  bool bias;
};

// Scatter form (independent of the kernel's gather): input pixel (iy, ix)
// adds its products at output (iy * s - pad + ky, ix * s - pad + kx).
std::vector<float> TransposeReference(const TransposeCase& c, int out_h,
                                      int out_w, int pad_top, int pad_left,
                                      const std::vector<float>& x,
                                      const std::vector<float>& w,
                                      const std::vector<float>& bias) {
  std::vector<double> out(static_cast<size_t>(c.batch) * out_h * out_w * c.out_c);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = bias.empty() ? 0.0 : bias[i % c.out_c];
  }
  for (int b = 0; b < c.batch; ++b)
    for (int iy = 0; iy < c.in_h; ++iy)
      for (int ix = 0; ix < c.in_w; ++ix)
        for (int ky = 0; ky < c.kernel_h; ++ky)
          for (int kx = 0; kx < c.kernel_w; ++kx) {
            const int oy = iy * c.stride_h - pad_top + ky;
            const int ox = ix * c.stride_w - pad_left + kx;
            if (oy < 0 || oy >= out_h || ox < 0 || ox >= out_w) continue;
            for (int oc = 0; oc < c.out_c; ++oc)
              for (int ic = 0; ic < c.in_c; ++ic) {
                out[((static_cast<size_t>(b) * out_h + oy) * out_w + ox) * c.out_c + oc] +=
                    static_cast<double>(x[((static_cast<size_t>(b) * c.in_h + iy) * c.in_w + ix) * c.in_c + ic]) *
                    w[((static_cast<size_t>(oc) * c.kernel_h + ky) * c.kernel_w + kx) * c.in_c + ic];
              }
          }
  return std::vector<float>(out.begin(), out.end());
}

TEST(TransposeConv, MatchesScatterReferenceForStridesAndPadding) {
  const TransposeCase cases[] = {
      {1, 4, 5, 3, 5, 3, 3, 2, 2, true, true},
      {2, 3, 3, 8, 4, 2, 2, 2, 2, false, true},
      {1, 5, 4, 13, 1, 3, 3, 1, 1, true, false},
      {1, 3, 4, 4, 13, 4, 3, 2, 3, false, true},
  };
  for (bool fp16 : {false, true}) {
    for (const TransposeCase& c : cases) {
      // TRANSPOSE_CONV: the output size is an operand (the usual one here);
      // padding is the forward-conv rule from that size.
      const int out_h = c.same ? c.in_h * c.stride_h
                               : (c.in_h - 1) * c.stride_h + c.kernel_h;
      const int out_w = c.same ? c.in_w * c.stride_w
                               : (c.in_w - 1) * c.stride_w + c.kernel_w;
      const Axis ay = ConvAxis(out_h, c.kernel_h, c.stride_h, 1, c.same);
      const Axis ax = ConvAxis(out_w, c.kernel_w, c.stride_w, 1, c.same);
      SCOPED_TRACE("in " + std::to_string(c.in_h) + "x" + std::to_string(c.in_w) +
                   " k" + std::to_string(c.kernel_h) + "x" + std::to_string(c.kernel_w) +
                   (c.same ? " SAME" : " VALID") + (fp16 ? " fp16" : " fp32"));
      const std::vector<int> in_dims = {c.batch, c.in_h, c.in_w, c.in_c};
      auto x = RandomData(Count(in_dims), 70 + c.in_c, -2, 2);
      auto w = RandomData(static_cast<size_t>(c.out_c) * c.kernel_h * c.kernel_w * c.in_c,
                          71, -0.5f, 0.5f);
      auto bias = c.bias ? RandomData(c.out_c, 72, -1, 1) : std::vector<float>();
      OpTester tester(abi::kTfLiteBuiltinTransposeConv, 3);
      tester.AddConstIntInput({4}, {c.batch, out_h, out_w, c.out_c});
      tester.AddConstInput({c.out_c, c.kernel_h, c.kernel_w, c.in_c}, w);
      tester.AddInput(in_dims, x);
      if (c.bias) tester.AddConstInput({c.out_c}, bias);
      tester.AddOutput({c.batch, out_h, out_w, c.out_c});
      abi::TransposeConvParams params{};
      params.padding = c.same ? abi::kPaddingSame : abi::kPaddingValid;
      params.stride_width = c.stride_w;
      params.stride_height = c.stride_h;
      tester.SetParams(params);
      Status status = tester.Run(fp16);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_LE(MaxRelativeError(tester.output(),
                                 TransposeReference(c, out_h, out_w, ay.pad,
                                                    ax.pad, x, w, bias)),
                fp16 ? kFp16Tolerance : kFp32Tolerance);
    }
  }
}

TEST(Convolution2DTransposeBias, MatchesScatterReferenceLikeSelfieSegmentation) {
  // The selfie model's layer is 2x2 stride 2 SAME, 16 -> 1 channels.
  const TransposeCase cases[] = {
      {1, 6, 5, 16, 1, 2, 2, 2, 2, true, true},
      {1, 4, 5, 5, 8, 3, 3, 2, 2, true, true},
      {2, 3, 4, 3, 4, 3, 2, 2, 1, false, true},
  };
  for (bool fp16 : {false, true}) {
    for (const TransposeCase& c : cases) {
      auto axis = [&](int in, int kernel, int stride, int* pad) {
        const int total = c.same ? std::max(0, kernel - (in - 1) % stride - 1) : 0;
        *pad = total / 2;
        return stride * (in - 1) + kernel - total;
      };
      int pad_top = 0, pad_left = 0;
      const int out_h = axis(c.in_h, c.kernel_h, c.stride_h, &pad_top);
      const int out_w = axis(c.in_w, c.kernel_w, c.stride_w, &pad_left);
      SCOPED_TRACE("in " + std::to_string(c.in_h) + "x" + std::to_string(c.in_w) +
                   " k" + std::to_string(c.kernel_h) + "x" + std::to_string(c.kernel_w) +
                   (c.same ? " SAME" : " VALID") + (fp16 ? " fp16" : " fp32"));
      const std::vector<int> in_dims = {c.batch, c.in_h, c.in_w, c.in_c};
      auto x = RandomData(Count(in_dims), 80 + c.in_c, -2, 2);
      auto w = RandomData(static_cast<size_t>(c.out_c) * c.kernel_h * c.kernel_w * c.in_c,
                          81, -0.5f, 0.5f);
      auto bias = RandomData(c.out_c, 82, -1, 1);
      OpTester tester(abi::kTfLiteBuiltinCustom);
      tester.AddInput(in_dims, x);
      tester.AddConstInput({c.out_c, c.kernel_h, c.kernel_w, c.in_c}, w);
      tester.AddConstInput({c.out_c}, bias);
      tester.AddOutput({c.batch, out_h, out_w, c.out_c});
      const int32_t fields[3] = {c.same ? 1 : 2, c.stride_w, c.stride_h};
      std::vector<uint8_t> custom(sizeof(fields));
      std::memcpy(custom.data(), fields, sizeof(fields));
      tester.SetCustom("Convolution2DTransposeBias", custom);
      Status status = tester.Run(fp16);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_LE(MaxRelativeError(tester.output(),
                                 TransposeReference(c, out_h, out_w, pad_top,
                                                    pad_left, x, w, bias)),
                fp16 ? kFp16Tolerance : kFp32Tolerance);
    }
  }
}

TEST(Convolution2DTransposeBiasSupport, DeclinesTruncatedCustomData) {
  OpTester tester(abi::kTfLiteBuiltinCustom);
  tester.AddInput({1, 2, 2, 4}, RandomData(16, 1));
  tester.AddConstInput({4, 2, 2, 4}, RandomData(64, 2));
  tester.AddConstInput({4}, RandomData(4, 3));
  tester.AddOutput({1, 4, 4, 4});
  tester.SetCustom("Convolution2DTransposeBias", {1, 0, 0, 0});
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("custom data"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace tflite_gles::testing
