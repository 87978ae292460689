// MEAN, SOFTMAX, L2_NORMALIZATION, RESIZE_BILINEAR and
// RESIZE_NEAREST_NEIGHBOR on the GPU against naive float64 references
// written from the ops' definitions; channels 1/3/4/5/8/13, odd spatial
// sizes and 1, batch 1 and 2, fp32 and fp16 storage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "delegate/abi/half.h"
#include "delegate/abi/tflite_builtin.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

// ------------------------------------------------------------------- MEAN

// Mean of a 4-D tensor over `axes` (non-negative); the result in TFLite
// order with the reduced axes removed or kept as 1.
std::vector<float> MeanReference(const std::vector<int>& dims,
                                 const std::vector<float>& in,
                                 const std::set<int>& axes, bool keep_dims,
                                 std::vector<int>* out_dims) {
  out_dims->clear();
  std::vector<int> kept(dims.size());
  for (size_t a = 0; a < dims.size(); ++a) {
    const bool reduced = axes.count(static_cast<int>(a)) > 0;
    kept[a] = reduced ? 1 : dims[a];
    if (!reduced || keep_dims) out_dims->push_back(kept[a]);
  }
  std::vector<double> sums(Count(kept), 0.0);
  std::vector<int> counts(Count(kept), 0);
  std::vector<int> index(dims.size(), 0);
  for (size_t flat = 0; flat < in.size(); ++flat) {
    size_t rest = flat, target = 0, stride = 1;
    for (int a = static_cast<int>(dims.size()) - 1; a >= 0; --a) {
      const int i = static_cast<int>(rest % dims[a]);
      rest /= dims[a];
      target += (kept[a] == 1 ? 0 : i) * stride;
      stride *= kept[a];
    }
    sums[target] += in[flat];
    ++counts[target];
  }
  std::vector<float> out;
  for (size_t i = 0; i < sums.size(); ++i) {
    out.push_back(static_cast<float>(sums[i] / counts[i]));
  }
  return out;
}

struct MeanCase {
  std::vector<int> dims_without_channels;
  std::vector<int> axes;  // as the model writes them, may be negative
  bool keep_dims;
};

const MeanCase kMeanCases[] = {
    {{2, 5, 7}, {1, 2}, true},      // global average per batch
    {{2, 5, 7}, {2, 1}, false},     // -> [2, C]
    {{2, 3, 5}, {1}, false},        // -> [2, 5, C]
    {{2, 3, 5}, {-2}, true},        // width only
    {{1, 5, 7}, {-1}, false},       // channels -> [1, 5, 7]: width moves to C
    {{2, 1, 3}, {3, 1}, true},      // channels and height
    {{1, 4, 3}, {0, 1, 2, 3}, false},  // everything -> scalar
    {{2}, {1}, false},              // rank 2 -> [2]: batch moves to C
};

using ChannelCase = std::tuple<int /*channels*/, bool /*fp16*/>;
class ReduceTest : public ::testing::TestWithParam<ChannelCase> {};

TEST_P(ReduceTest, MeanOverEachAxisCombination) {
  const auto [channels, fp16] = GetParam();
  for (const MeanCase& c : kMeanCases) {
    std::vector<int> dims = c.dims_without_channels;
    dims.push_back(channels);
    const int rank = static_cast<int>(dims.size());
    std::set<int> axes;
    for (int a : c.axes) axes.insert(a < 0 ? a + rank : a);
    const auto input = RandomData(Count(dims), 7 + channels, -3, 3);
    std::vector<int> out_dims;
    const auto expected =
        MeanReference(dims, AsStored(input, fp16), axes, c.keep_dims, &out_dims);
    OpTester tester(abi::kTfLiteBuiltinMean);
    tester.AddInput(dims, input);
    tester.AddConstIntInput({static_cast<int>(c.axes.size())}, c.axes);
    tester.AddOutput(out_dims);
    abi::ReducerParams params{};
    params.keep_dims = c.keep_dims;
    tester.SetParams(params);
    Status status = tester.Run(fp16);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_LE(MaxRelativeError(tester.output(), expected), Tolerance(fp16))
        << "rank " << rank << " axes[0] " << c.axes[0] << " keep " << c.keep_dims;
  }
}

// Spatial means of long windows with a workgroup per output
// (DeviceProfile::workgroup_reductions, on real GPUs by default; forced here
// on llvmpipe): H and W, H alone, W alone, batch 2, windows that do not
// divide by the invocations, workgroups of 64, 256 and 1024, and one window
// below the cooperative threshold.
TEST(ReduceSupport, SpatialMeansSharedByAWorkgroup) {
  struct Case { std::vector<int> dims; std::vector<int> axes; bool keep_dims; };
  const Case cases[] = {{{2, 37, 23, 6}, {1, 2}, true},
                        {{1, 300, 3, 5}, {1}, false},
                        {{2, 2, 261, 9}, {2}, true},
                        {{1, 9, 9, 4}, {1, 2}, false},
                        {{1, 50, 50, 2}, {1, 2}, true},   // 256 invocations
                        {{1, 96, 97, 3}, {1, 2}, true}};  // 1024 invocations
  for (const Case& c : cases) {
    for (bool fp16 : {false, true}) {
      const auto input = AsStored(RandomData(Count(c.dims), 17, -3, 3), fp16);
      std::vector<int> out_dims;
      const auto expected = MeanReference(c.dims, input,
                                          std::set<int>(c.axes.begin(), c.axes.end()),
                                          c.keep_dims, &out_dims);
      OpTester tester(abi::kTfLiteBuiltinMean);
      tester.AddInput(c.dims, input);
      tester.AddConstIntInput({static_cast<int>(c.axes.size())}, c.axes);
      tester.AddOutput(out_dims);
      tester.SetParams(abi::ReducerParams{c.keep_dims});
      tester.TuneDevice([](DeviceProfile* device) { device->workgroup_reductions = true; });
      Status status = tester.Run(fp16);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_LE(MaxRelativeError(tester.output(), expected), Tolerance(fp16))
          << c.dims[1] << "x" << c.dims[2] << (fp16 ? " fp16" : " fp32");
    }
  }
}

// --------------------------------------------------- SOFTMAX, L2_NORMALIZATION

// Normalizes each run of `channels` values (the last axis).
std::vector<float> ChannelReference(bool softmax, const std::vector<float>& in,
                                    int channels, double beta) {
  std::vector<float> out;
  for (size_t first = 0; first < in.size(); first += channels) {
    const auto begin = in.begin() + first;
    if (softmax) {
      const double largest = *std::max_element(begin, begin + channels);
      double sum = 0;
      for (int c = 0; c < channels; ++c) sum += std::exp(beta * (begin[c] - largest));
      for (int c = 0; c < channels; ++c) {
        out.push_back(static_cast<float>(std::exp(beta * (begin[c] - largest)) / sum));
      }
    } else {
      double squares = 0;
      for (int c = 0; c < channels; ++c) squares += 1.0 * begin[c] * begin[c];
      const double norm = std::max(std::sqrt(squares), 1e-6);
      for (int c = 0; c < channels; ++c) out.push_back(static_cast<float>(begin[c] / norm));
    }
  }
  return out;
}

// SOFTMAX (with `beta`) and L2_NORMALIZATION of `input` on the GPU against
// ChannelReference of the values as stored; `what` names the case.
void ExpectSoftmaxMatches(const std::vector<int>& dims, const std::vector<float>& input,
                          double beta, bool fp16, const std::string& what) {
  OpTester tester(abi::kTfLiteBuiltinSoftmax);
  tester.AddInput(dims, input);
  tester.AddOutput(dims);
  tester.SetParams(abi::SoftmaxParams{static_cast<float>(beta)});
  Status status = tester.Run(fp16);
  ASSERT_TRUE(status.ok()) << what << ": " << status.message();
  EXPECT_LE(MaxRelativeError(tester.output(),
                             ChannelReference(true, AsStored(input, fp16), dims.back(), beta)),
            Tolerance(fp16))
      << "softmax " << what;
}

void ExpectL2NormalizationMatches(const std::vector<int>& dims,
                                  const std::vector<float>& input, bool fp16,
                                  const std::string& what) {
  OpTester tester(abi::kTfLiteBuiltinL2Normalization);
  tester.AddInput(dims, input);
  tester.AddOutput(dims);
  tester.SetParams(abi::L2NormParams{abi::kActNone});
  Status status = tester.Run(fp16);
  ASSERT_TRUE(status.ok()) << what << ": " << status.message();
  EXPECT_LE(MaxRelativeError(tester.output(),
                             ChannelReference(false, AsStored(input, fp16), dims.back(), 1.0)),
            Tolerance(fp16))
      << "l2 " << what;
}

TEST_P(ReduceTest, SoftmaxAndL2NormalizationAlongChannels) {
  const auto [channels, fp16] = GetParam();
  // Softmax ignores a common shift, so a wrong maximum only shows through
  // exp()'s range: with these inputs an unmasked zero-padded lane taken as
  // the maximum makes every exp() underflow to 0 (and the result NaN).
  for (const std::vector<int>& dims :
       {std::vector<int>{2, 3, 5, channels}, std::vector<int>{3, channels}}) {
    const std::string rank = "rank " + std::to_string(dims.size());
    const auto input = RandomData(Count(dims), 11 + channels, -120, -90);
    for (double beta : {1.0, 0.3}) {
      ExpectSoftmaxMatches(dims, input, beta, fp16, rank + " beta " + std::to_string(beta));
    }
    const auto signed_input = RandomData(Count(dims), 13 + channels, -3, 3);
    ExpectL2NormalizationMatches(dims, signed_input, fp16, rank);
  }
}

// ----------------------------------------------------------------- RESIZE

struct ResizeFlags {
  bool align_corners, half_pixel_centers;
};

float ResizeScale(int in, int out, bool align_corners) {
  return align_corners && out > 1 ? (in - 1) / static_cast<float>(out - 1)
                                  : in / static_cast<float>(out);
}

// Bilinear: the four neighbours of the source position, weighted by
// distance, with the source clamped into the input.
double BilinearAt(const std::vector<float>& in, const std::vector<int>& d, int b,
                  double sy, double sx, int c) {
  const int h = d[1], w = d[2], channels = d[3];
  sy = std::min(std::max(sy, 0.0), h - 1.0);
  sx = std::min(std::max(sx, 0.0), w - 1.0);
  const int y0 = static_cast<int>(std::floor(sy)), x0 = static_cast<int>(std::floor(sx));
  const int y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
  const double fy = sy - y0, fx = sx - x0;
  auto at = [&](int y, int x) { return in[((b * h + y) * w + x) * channels + c]; };
  return (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) +
         fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1));
}

// Nearest: floor of the scaled position, or rounded half away from zero
// with align_corners; computed in float like TFLite so ties pick the same.
int NearestAt(int o, int in_size, int out_size, ResizeFlags f) {
  const float scale = ResizeScale(in_size, out_size, f.align_corners);
  const float source = (o + (f.half_pixel_centers ? 0.5f : 0.0f)) * scale;
  const int picked = static_cast<int>(f.align_corners ? std::round(source)
                                                      : std::floor(source));
  return std::max(0, std::min(picked, in_size - 1));
}

std::vector<float> ResizeReference(bool bilinear, const std::vector<int>& d,
                                   const std::vector<float>& in, int oh, int ow,
                                   ResizeFlags f) {
  const float scale_h = ResizeScale(d[1], oh, f.align_corners);
  const float scale_w = ResizeScale(d[2], ow, f.align_corners);
  const double shift = f.half_pixel_centers ? 0.5 : 0.0;
  std::vector<float> out;
  for (int b = 0; b < d[0]; ++b)
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x)
        for (int c = 0; c < d[3]; ++c) {
          if (bilinear) {
            out.push_back(static_cast<float>(
                BilinearAt(in, d, b, (y + shift) * scale_h - shift,
                           (x + shift) * scale_w - shift, c)));
          } else {
            const int sy = NearestAt(y, d[1], oh, f), sx = NearestAt(x, d[2], ow, f);
            out.push_back(in[((b * d[1] + sy) * d[2] + sx) * d[3] + c]);
          }
        }
  return out;
}

TEST_P(ReduceTest, ResizeUpAndDownWithEachCoordinateRule) {
  const auto [channels, fp16] = GetParam();
  const std::vector<int> dims = {2, 5, 7, channels};
  const auto input = RandomData(Count(dims), 17 + channels, -3, 3);
  for (int op : {abi::kTfLiteBuiltinResizeBilinear,
                 abi::kTfLiteBuiltinResizeNearestNeighbor}) {
    const bool bilinear = op == abi::kTfLiteBuiltinResizeBilinear;
    for (ResizeFlags flags : {ResizeFlags{false, false}, ResizeFlags{true, false},
                              ResizeFlags{false, true}}) {
      for (const auto& [oh, ow] : {std::pair<int, int>{9, 15}, {3, 4}}) {
        OpTester tester(op);
        tester.AddInput(dims, input);
        tester.AddConstIntInput({2}, {oh, ow});
        tester.AddOutput({dims[0], oh, ow, channels});
        abi::ResizeBilinearParams params{flags.align_corners, flags.half_pixel_centers};
        tester.SetParams(params);
        Status status = tester.Run(fp16);
        ASSERT_TRUE(status.ok()) << status.message();
        EXPECT_LE(MaxRelativeError(tester.output(),
                                   ResizeReference(bilinear, dims,
                                                   AsStored(input, fp16), oh, ow,
                                                   flags)),
                  Tolerance(fp16))
            << abi::BuiltinOperatorName(op) << " align " << flags.align_corners
            << " half " << flags.half_pixel_centers << " to " << oh << "x" << ow;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Reduce, ReduceTest,
                         ::testing::Combine(::testing::Values(1, 3, 4, 5, 8, 13),
                                            ::testing::Bool()));

// A classifier head: 1001 classes (3 padded lanes to mask) over few pixels.
// (An earlier workgroup-per-pixel variant with a shared-memory reduction
// passed on llvmpipe but summed wrongly on NVIDIA's driver, uniformly off by
// 3% to 45x; these cases caught it. The one in channel_normalize.comp now
// keeps barrier() where GLSL ES 3.10 allows it: in main, outside control
// flow, never after a return.)
TEST(ReduceSupport, SoftmaxAndL2OverAThousandChannels) {
  for (int run = 0; run < 4; ++run) {
    const bool spiked = run & 1, fp16 = run & 2;
    const std::vector<int> dims = {2, 3, 1001};
    auto input = RandomData(Count(dims), 5, -120, -90);
    // Spiked: one class per pixel far above the rest, at scattered
    // positions: a maximum missed or taken from a padded lane overflows
    // exp() to inf (the result turns NaN). Unspiked: the sum of many similar
    // terms, where a shift or a partial sum used inconsistently shows as a
    // relative error of a few percent.
    if (spiked) {
      for (int pixel = 0; pixel < 6; ++pixel) input[pixel * 1001 + pixel * 397 % 1001] = 60;
    }
    input = AsStored(input, fp16);
    const std::string what = std::string(spiked ? "spiked" : "unspiked") + (fp16 ? " fp16" : "");
    ExpectSoftmaxMatches(dims, input, 0.7, fp16, what);
    ExpectL2NormalizationMatches(dims, input, fp16, what);
  }
}

// The workgroup-per-pixel path from its threshold (64 channels = 16 slices)
// up, over more pixels than one grid row of workgroups, with slices that do
// not divide by the 64 invocations.
TEST(ReduceSupport, SoftmaxAndL2SharedByAWorkgroup) {
  for (int channels : {64, 257, 1030}) {
    for (bool fp16 : {false, true}) {
      const std::vector<int> dims = {2, 5, 7, channels};
      const auto input = AsStored(RandomData(Count(dims), channels, -6, 6), fp16);
      const std::string what = std::to_string(channels) + " channels";
      ExpectSoftmaxMatches(dims, input, 1.3, fp16, what);
      ExpectL2NormalizationMatches(dims, input, fp16, what);
    }
  }
}

TEST(ReduceSupport, MeanOverBatchIsDeclinedWithAReason) {
  OpTester tester(abi::kTfLiteBuiltinMean);
  tester.AddInput({2, 3, 3, 4}, RandomData(72, 1));
  tester.AddConstIntInput({1}, {0});
  tester.AddOutput({3, 3, 4});
  tester.SetParams(abi::ReducerParams{false});
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("batch axis"), std::string::npos) << status.message();
}

TEST(ReduceSupport, MeanOverBatchOfOneIsJustARankChange) {
  const std::vector<int> dims = {1, 3, 5, 6};
  const auto input = RandomData(Count(dims), 3);
  std::vector<int> out_dims;
  const auto expected = MeanReference(dims, input, {0, 2}, false, &out_dims);
  OpTester tester(abi::kTfLiteBuiltinMean);
  tester.AddInput(dims, input);
  tester.AddConstIntInput({2}, {0, 2});
  tester.AddOutput(out_dims);
  tester.SetParams(abi::ReducerParams{false});
  Status status = tester.Run();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_LE(MaxRelativeError(tester.output(), expected), kFp32Tolerance);
}

// llvmpipe stops an invocation's loops after 65535 iterations in all: a
// 300x257 map is past that, so the kernel must split it (row sums first).
TEST(ReduceSupport, MeanOfAMapPastTheLoopLimit) {
  const std::vector<int> dims = {1, 300, 257, 5};
  const auto input = RandomData(Count(dims), 8, 0.5f, 2.5f);
  for (const auto& [axes, keep_dims] :
       {std::pair<std::vector<int>, bool>{{1, 2}, true}, {{1, 2, 3}, false}}) {
    std::vector<int> out_dims;
    const auto expected = MeanReference(
        dims, input, std::set<int>(axes.begin(), axes.end()), keep_dims, &out_dims);
    OpTester tester(abi::kTfLiteBuiltinMean);
    tester.AddInput(dims, input);
    tester.AddConstIntInput({static_cast<int>(axes.size())}, axes);
    tester.AddOutput(out_dims);
    tester.SetParams(abi::ReducerParams{keep_dims});
    Status status = tester.Run();
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_LE(MaxRelativeError(tester.output(), expected), kFp32Tolerance)
        << "axes " << axes.size();
  }
}

TEST(ReduceSupport, ResizeFromASinglePixel) {
  const std::vector<int> dims = {1, 1, 1, 5};
  const auto input = RandomData(5, 4);
  for (int op : {abi::kTfLiteBuiltinResizeBilinear,
                 abi::kTfLiteBuiltinResizeNearestNeighbor}) {
    OpTester tester(op);
    tester.AddInput(dims, input);
    tester.AddConstIntInput({2}, {3, 2});
    tester.AddOutput({1, 3, 2, 5});
    tester.SetParams(abi::ResizeBilinearParams{true, false});
    Status status = tester.Run();
    ASSERT_TRUE(status.ok()) << status.message();
    std::vector<float> expected;
    for (int i = 0; i < 6; ++i) expected.insert(expected.end(), input.begin(), input.end());
    EXPECT_LE(MaxRelativeError(tester.output(), expected), kFp32Tolerance);
  }
}

TEST(ReduceSupport, ResizeSizeMustBeConstant) {
  OpTester tester(abi::kTfLiteBuiltinResizeBilinear);
  tester.AddInput({1, 2, 2, 3}, RandomData(12, 1));
  tester.AddInput({2}, {4.0f, 4.0f});
  tester.AddOutput({1, 4, 4, 3});
  tester.SetParams(abi::ResizeBilinearParams{false, false});
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("must be a constant"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace tflite_gles::testing
