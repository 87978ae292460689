// RGBA textures as tensor storage (egl/tensor_texture.h): the extent rule,
// the sharing of textures by lifetime (PlanTextures), and kernels on the GPU
// with every tensor in a texture, against float64 references, including
// textures wrapped at another width than W (a device whose
// GL_MAX_TEXTURE_SIZE is smaller than B*S*H) and a partition whose tensor no
// texture holds (it keeps buffers). The op tests as a whole run under this
// storage in ctest's op_tests_rgba_textures.
#include <gtest/gtest.h>

#include <random>

#include "delegate/abi/tflite_builtin.h"
#include "delegate/passes/memory_planner.h"
#include "egl/tensor_texture.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

TEST(TensorTextureExtent, RowsOfWWhereTheyFitElseTheWidestRows) {
  // A 1x5x7x3 tensor: 1 slice, rows of W = 7, B*S*H = 5 rows.
  auto natural = gl::TensorTextureExtent(35, 7, 2048);
  ASSERT_TRUE(natural.ok());
  EXPECT_EQ(natural->width, 7);
  EXPECT_EQ(natural->height, 5);
  // 1x512x4x64 at the GLES 3.1 minimum: 8192 rows of 4 do not fit 2048.
  auto wrapped = gl::TensorTextureExtent(32768, 4, 2048);
  ASSERT_TRUE(wrapped.ok());
  EXPECT_EQ(wrapped->width, 2048);
  EXPECT_EQ(wrapped->height, 16);
  // Fewer texels than a row: one row of exactly them.
  auto small = gl::TensorTextureExtent(10, 0, 2048);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->width, 10);
  EXPECT_EQ(small->height, 1);
  // A W wider than the device allows wraps too.
  auto wide = gl::TensorTextureExtent(5000, 5000, 2048);
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(wide->width, 2048);
  EXPECT_EQ(wide->height, 3);
  // Past max x max: refused (buffer storage).
  EXPECT_FALSE(gl::TensorTextureExtent(2048LL * 2048 + 1, 0, 2048).ok());
  EXPECT_TRUE(gl::TensorTextureExtent(2048LL * 2048, 0, 2048).ok());
  // Fixed rows: exactly that wide, or one row of fewer texels.
  auto fixed = gl::TensorTextureExtent(35, 7, 2048, 16);
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->width, 16);
  EXPECT_EQ(fixed->height, 3);
  auto short_row = gl::TensorTextureExtent(10, 7, 2048, 16);
  ASSERT_TRUE(short_row.ok());
  EXPECT_EQ(short_row->width, 10);
  EXPECT_EQ(short_row->height, 1);
}

TEST(PlanTextures, TenantsOfATextureNeverLiveTogetherAndFitIt) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<TensorLifetime> tensors(30);
    for (TensorLifetime& t : tensors) {
      t.first = static_cast<int>(random() % 40);
      t.last = t.first + static_cast<int>(random() % 8);
      t.bytes = random() % 5 == 0 ? 0 : 1 + random() % 1000;
    }
    for (bool share : {true, false}) {
      const TexturePlan plan = PlanTextures(tensors, share);
      size_t used = 0;
      for (size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i].bytes == 0) {
          EXPECT_EQ(plan.slot[i], -1);
          continue;
        }
        ++used;
        ASSERT_GE(plan.slot[i], 0);
        const size_t slot = static_cast<size_t>(plan.slot[i]);
        EXPECT_GE(plan.slot_bytes[slot], tensors[i].bytes);
        EXPECT_EQ(tensors[plan.slot_owner[slot]].bytes, plan.slot_bytes[slot]);
        for (size_t j = 0; j < i; ++j) {
          if (plan.slot[j] == plan.slot[i]) {
            EXPECT_FALSE(LifetimesOverlap(tensors[i], tensors[j])) << i << " " << j;
          }
        }
      }
      if (share) {
        EXPECT_LT(plan.slot_bytes.size(), used);
      } else {
        EXPECT_EQ(plan.slot_bytes.size(), used);
      }
    }
  }
}

// A GPU whose textures are at most `size` texels wide and high.
const egl::GpuInfo* SmallTextures(int size) {
  static egl::GpuInfo info;
  info = TestGpuInfo();
  info.max_texture_size = size;
  return &info;
}

// Every tensor in a texture, with rows of W (`row_width` 0) or of
// `row_width` texels.
void ForceTextures(OpTester& tester, int max_texture_size, int row_width) {
  tester.TuneDevice([max_texture_size, row_width](DeviceProfile* device) {
    if (max_texture_size > 0) device->gpu = SmallTextures(max_texture_size);
    device->rgba_textures = true;
    device->texture_buffer_reads = false;
    device->texture_row_width = row_width;
  });
}

// out = act(conv3x3(x, w) + bias), SAME padding, stride 1, in float64.
std::vector<float> Conv3x3Reference(const std::vector<float>& x, int h, int w, int c,
                                    const std::vector<float>& filter, int oc,
                                    const std::vector<float>& bias) {
  std::vector<float> out;
  for (int y = 0; y < h; ++y)
    for (int xx = 0; xx < w; ++xx)
      for (int o = 0; o < oc; ++o) {
        double sum = bias[o];
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) {
            const int iy = y + ky - 1, ix = xx + kx - 1;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            for (int i = 0; i < c; ++i) {
              sum += static_cast<double>(x[(iy * w + ix) * c + i]) *
                     filter[((o * 3 + ky) * 3 + kx) * c + i];
            }
          }
        out.push_back(static_cast<float>(sum));
      }
  return out;
}

// A 3x3 CONV_2D: image, weights and bias in textures (`in_textures`; else
// the partition kept buffers); `max_texture_size` 0 for the device's own.
void ExpectConvMatches(int h, int w, int c, int oc, int max_texture_size, bool fp16,
                       bool in_textures = true, int row_width = 0) {
  const auto x = AsStored(RandomData(static_cast<size_t>(h * w * c), 1), fp16);
  const auto filter = AsStored(RandomData(static_cast<size_t>(oc * 9 * c), 2, -0.5f, 0.5f), fp16);
  const auto bias = AsStored(RandomData(static_cast<size_t>(oc), 3), fp16);
  OpTester tester(abi::kTfLiteBuiltinConv2d);
  tester.AddInput({1, h, w, c}, x);
  tester.AddConstInput({oc, 3, 3, c}, filter);
  tester.AddConstInput({oc}, bias);
  tester.AddOutput({1, h, w, oc});
  tester.SetParams(abi::ConvParams{abi::kPaddingSame, 1, 1, abi::kActNone, 1, 1,
                                   abi::kNoType});
  ForceTextures(tester, max_texture_size, row_width);
  size_t textures = 0;
  tester.SetRunHook([&](PartitionRuntime& runtime, ProgramCache&, int, bool after) {
    if (after) textures = runtime.texture_count();
    return Status::Ok();
  });
  Status status = tester.Run(fp16);
  ASSERT_TRUE(status.ok()) << status.message();
  if (in_textures) {
    EXPECT_GT(textures, 0u);
  } else {
    EXPECT_EQ(textures, 0u);
  }
  EXPECT_LE(MaxRelativeError(tester.output(), Conv3x3Reference(x, h, w, c, filter, oc, bias)),
            fp16 ? 2e-2 : 1e-5);
}

TEST(RgbaTextures, ConvolutionWithRowsOfW) {
  for (bool fp16 : {false, true}) {
    SCOPED_TRACE(fp16 ? "fp16" : "fp32");
    ExpectConvMatches(9, 7, 5, 13, 0, fp16);
  }
}

TEST(RgbaTextures, ConvolutionWithRowsOf16Texels) {
  // The mask-and-shift addressing (TEXTURE_ROW_SHIFT): every texture in
  // rows of 16 texels, the 7-texel rows of W notwithstanding.
  for (bool fp16 : {false, true}) {
    SCOPED_TRACE(fp16 ? "fp16" : "fp32");
    ExpectConvMatches(9, 7, 5, 13, 0, fp16, true, 16);
  }
}

TEST(RgbaTextures, ConvolutionInTexturesWrappedAtAnotherWidth) {
  // 32 texels a side at most: the 1x20x3x5 input (2 slices, 40 rows of 3)
  // wraps at 32-texel rows, its 13-channel output (4 slices: 80 rows) too,
  // and the weights (288 vec4s) take 9 rows of 32.
  for (bool fp16 : {false, true}) {
    SCOPED_TRACE(fp16 ? "fp16" : "fp32");
    ExpectConvMatches(20, 3, 5, 13, 32, fp16);
  }
}

TEST(RgbaTextures, ATensorNoTextureHoldsKeepsThePartitionInBuffers) {
  // 8x8 texels at most: the 1x20x3x5 input's 120 vec4s fit no texture, so
  // the partition runs on buffers, with the same answer.
  ExpectConvMatches(20, 3, 5, 13, 8, false, /*in_textures=*/false);
}

TEST(RgbaTextures, ElementwiseOpWithItsActivation) {
  // Both inputs converted into textures, the output read back from one.
  const std::vector<int> dims = {1, 6, 5, 7};
  const auto a = RandomData(Count(dims), 4), b = RandomData(Count(dims), 5);
  OpTester tester(abi::kTfLiteBuiltinMul);
  tester.AddInput(dims, a);
  tester.AddInput(dims, b);
  tester.AddOutput(dims);
  tester.SetParams(abi::MulParams{abi::kActRelu});
  ForceTextures(tester, 0, 2048);
  Status status = tester.Run(false);
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<float> expected;
  for (size_t i = 0; i < a.size(); ++i) {
    expected.push_back(static_cast<float>(std::max(0.0, static_cast<double>(a[i]) * b[i])));
  }
  EXPECT_LE(MaxRelativeError(tester.output(), expected), 1e-6);
}

}  // namespace
}  // namespace tflite_gles::testing
