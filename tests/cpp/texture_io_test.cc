// Textures bound to a partition's image input and output through the GPU
// binding hook (delegate/runtime/texture_io.h: TextureProducer and
// TextureSink, shaders/texture_io.comp; delegate/runtime/gpu_binding.h), on
// the real GPU: a 3x3 CONV_2D fed from an application texture through each
// of the runtime's upload paths (direct, staged with a conversion, fused
// into the convolution, which only real GPUs choose by default), in fp32
// and fp16 storage, its output written into textures of each format and
// read back through a framebuffer, against a float64 reference; and
// CheckTexture's refusals.
#include <GLES3/gl31.h>
// After gl31.h, which defines what gl2ext.h's declarations use.
#include <GLES2/gl2ext.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "delegate/abi/tflite_builtin.h"
#include "delegate/device/device_tuning.h"
#include "delegate/runtime/program_cache.h"
#include "delegate/runtime/runtime.h"
#include "delegate/runtime/texture_io.h"
#include "egl/foreign_buffer.h"
#include "egl/gl_objects.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

constexpr int kH = 9, kW = 13;  // not square: a transposed read fails

GLuint MakeTexture(GLenum format, int width, int height, const void* pixels, GLenum type) {
  GLuint texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexStorage2D(GL_TEXTURE_2D, 1, format, width, height);
  if (pixels != nullptr) {
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA, type, pixels);
  }
  glBindTexture(GL_TEXTURE_2D, 0);
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
  return texture;
}

// Level 0 as floats (RGBA8 read as bytes, the only type GLES reads it as).
std::vector<float> ReadTexture(GLuint texture, int width, int height, bool bytes) {
  GLuint framebuffer = 0;
  glGenFramebuffers(1, &framebuffer);
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, texture, 0);
  EXPECT_EQ(glCheckFramebufferStatus(GL_FRAMEBUFFER),
            static_cast<GLenum>(GL_FRAMEBUFFER_COMPLETE));
  std::vector<float> texels(static_cast<size_t>(width) * height * 4, NAN);
  if (bytes) {
    std::vector<uint8_t> raw(texels.size());
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, raw.data());
    for (size_t i = 0; i < raw.size(); ++i) texels[i] = raw[i] / 255.0f;
  } else {
    glReadPixels(0, 0, width, height, GL_RGBA, GL_FLOAT, texels.data());
  }
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glDeleteFramebuffers(1, &framebuffer);
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
  return texels;
}

// 3x3 SAME convolution, stride 1, in float64.
std::vector<float> Conv3x3(const std::vector<float>& x, int in_c, const std::vector<float>& w,
                           const std::vector<float>& bias, int out_c) {
  std::vector<float> out;
  for (int y = 0; y < kH; ++y)
    for (int x0 = 0; x0 < kW; ++x0)
      for (int o = 0; o < out_c; ++o) {
        double sum = bias[o];
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) {
            const int iy = y + ky - 1, ix = x0 + kx - 1;
            if (iy < 0 || iy >= kH || ix < 0 || ix >= kW) continue;
            for (int c = 0; c < in_c; ++c) {
              sum += static_cast<double>(x[(iy * kW + ix) * in_c + c]) *
                     w[((o * 3 + ky) * 3 + kx) * in_c + c];
            }
          }
        out.push_back(static_cast<float>(sum));
      }
  return out;
}

void AddConv(OpTester& tester, int in_c, int out_c, const std::vector<float>& w,
             const std::vector<float>& bias) {
  // The image tensor's own data is garbage: only the texture gives the answer.
  tester.AddInput({1, kH, kW, in_c}, std::vector<float>(kH * kW * in_c, 100.0f));
  tester.AddConstInput({out_c, 3, 3, in_c}, w);
  tester.AddConstInput({out_c}, bias);
  tester.AddOutput({1, kH, kW, out_c});
  abi::ConvParams params{abi::kPaddingSame, 1, 1, abi::kActNone, 1, 1, abi::kNoType};
  tester.SetParams(params);
}

enum class UploadPath { kDirect, kStaged, kFused };

Status BindTexture(PartitionRuntime& runtime, ProgramCache& programs, int index,
                   const TextureParams& params, const Shape4& shape, bool output) {
  GpuBinding binding;
  binding.layout = GpuLayout::kBhwcFloat32;
  if (output) {
    TFG_ASSIGN_OR_RETURN(binding.sink, MakeTextureSink(params, shape, "output", programs));
  } else {
    TFG_ASSIGN_OR_RETURN(binding.producer,
                         MakeTextureProducer(params, shape, "input", programs));
  }
  return runtime.BindGpu(index, std::move(binding), programs);
}

TEST(TextureIo, AnRgba8InputTextureFeedsTheConvolutionThroughEveryUploadPath) {
  TestEnvironment();
  std::vector<uint8_t> texels(kH * kW * 4);
  for (size_t i = 0; i < texels.size(); ++i) texels[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
  const GLuint texture = MakeTexture(GL_RGBA8, kW, kH, texels.data(), GL_UNSIGNED_BYTE);
  // BGR of the texture, [0, 255] bytes to [-1, 1].
  TextureParams params;
  params.texture = texture;
  const int picked[3] = {2, 1, 0};
  std::vector<float> image;
  for (int p = 0; p < kH * kW; ++p) {
    for (int c = 0; c < 3; ++c) {
      params.channels[c] = picked[c];
      params.scale[c] = 2.0f;
      params.offset[c] = -1.0f;
      image.push_back(texels[p * 4 + picked[c]] / 255.0f * 2.0f - 1.0f);
    }
  }
  const int out_c = 6;
  const auto w = RandomData(out_c * 9 * 3, 1, -0.5f, 0.5f);
  const auto bias = RandomData(out_c, 2, -1, 1);
  const auto expected = Conv3x3(image, 3, w, bias, out_c);
  int dispatches[3] = {0, 0, 0};
  for (bool fp16 : {false, true}) {
    for (UploadPath path : {UploadPath::kDirect, UploadPath::kStaged, UploadPath::kFused}) {
      SCOPED_TRACE(std::string(fp16 ? "fp16 " : "fp32 ") + "path " +
                   std::to_string(static_cast<int>(path)));
      OpTester tester(abi::kTfLiteBuiltinConv2d);
      AddConv(tester, 3, out_c, w, bias);
      tester.TuneDevice([path](DeviceProfile* device) {
        device->direct_transfers = path == UploadPath::kDirect;
        device->direct_max_bytes = 1 << 20;
        device->fuse_upload_into_conv = path == UploadPath::kFused;
      });
      tester.SetRunHook([&](PartitionRuntime& runtime, ProgramCache& programs, int run,
                            bool after) {
        if (run > 0 || after) return Status::Ok();
        dispatches[static_cast<int>(path)] = runtime.dispatch_count();
        return BindTexture(runtime, programs, 0, params, Shape4{1, kH, kW, 3}, false);
      });
      Status status = tester.RunRepeated(fp16, 2);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_LE(MaxRelativeError(tester.output(), expected), Tolerance(fp16));
    }
  }
  // The fused path really ran without its upload conversion.
  EXPECT_EQ(dispatches[static_cast<int>(UploadPath::kFused)] + 1,
            dispatches[static_cast<int>(UploadPath::kStaged)]);
  glDeleteTextures(1, &texture);
}

TEST(TextureIo, OutputTexturesOfEachFormatHoldTheTensorAndGlsExpansion) {
  TestEnvironment();
  std::vector<float> image = RandomData(kH * kW * 3, 3, -1, 1);
  for (GLenum format : {GL_RGBA32F, GL_RGBA16F, GL_RGBA8}) {
    for (int out_c = 1; out_c <= 4; ++out_c) {
      SCOPED_TRACE("format " + gl::TextureFormatName(format) + ", " + std::to_string(out_c) +
                   " channels");
      const auto w = RandomData(out_c * 9 * 3, 4 + out_c, -0.3f, 0.3f);
      const auto bias = RandomData(out_c, 5, -0.2f, 0.2f);
      const auto conv = Conv3x3(image, 3, w, bias, out_c);
      const GLuint texture = MakeTexture(format, kW, kH, nullptr, GL_FLOAT);
      TextureParams params;
      params.texture = texture;
      for (int c = 0; c < 4; ++c) {
        params.scale[c] = 0.25f;  // into [0, 1] for GL_RGBA8
        params.offset[c] = 0.5f;
      }
      OpTester tester(abi::kTfLiteBuiltinConv2d);
      tester.AddInput({1, kH, kW, 3}, image);
      tester.AddConstInput({out_c, 3, 3, 3}, w);
      tester.AddConstInput({out_c}, bias);
      tester.AddOutput({1, kH, kW, out_c});
      abi::ConvParams conv_params{abi::kPaddingSame, 1, 1, abi::kActNone, 1, 1, abi::kNoType};
      tester.SetParams(conv_params);
      tester.SetRunHook([&](PartitionRuntime& runtime, ProgramCache& programs, int run,
                            bool after) {
        if (run > 0 || after) return Status::Ok();
        return BindTexture(runtime, programs, 3, params, Shape4{1, kH, kW, out_c}, true);
      });
      Status status = tester.Run(false);
      ASSERT_TRUE(status.ok()) << status.message();
      const std::vector<float> texels = ReadTexture(texture, kW, kH, format == GL_RGBA8);
      const double bound = format == GL_RGBA8 ? 1.0 / 255 + 1e-6
                           : format == GL_RGBA16F ? 1e-3 : 1e-6;
      double worst = 0;
      for (int p = 0; p < kH * kW; ++p) {
        for (int c = 0; c < 4; ++c) {
          const double want = c < out_c ? conv[p * out_c + c] * 0.25 + 0.5 : (c == 3 ? 1.0 : 0.0);
          const double error = std::fabs(texels[p * 4 + c] - want);
          worst = std::isnan(error) ? INFINITY : std::max(worst, error);  // NaN: unwritten
        }
      }
      EXPECT_LE(worst, bound);
      glDeleteTextures(1, &texture);
    }
  }
}

// Where no dispatch of the partition can read or write a texture in place,
// the producer and sink move it through a float32 BHWC buffer
// (texture_io.comp TEXTURE_TO_BHWC / BHWC_TO_TEXTURE): both directions on
// their own, against the texels.
TEST(TextureIo, TheFloatBufferFallbackMovesTexelsBothWays) {
  TestEnvironment();
  ProgramCache programs;
  std::vector<uint8_t> texels(kH * kW * 4);
  for (size_t i = 0; i < texels.size(); ++i) texels[i] = static_cast<uint8_t>((i * 53 + 7) % 256);
  const GLuint source = MakeTexture(GL_RGBA8, kW, kH, texels.data(), GL_UNSIGNED_BYTE);
  const GLuint target = MakeTexture(GL_RGBA32F, kW, kH, nullptr, GL_FLOAT);
  const Shape4 shape{1, kH, kW, 3};
  TextureParams in;
  in.texture = source;
  in.channels[0] = 3;  // A, B, G
  in.channels[1] = 2;
  in.channels[2] = 1;
  in.scale[1] = 4.0f;
  in.offset[2] = -0.5f;
  auto producer = MakeTextureProducer(in, shape, "input", programs);
  ASSERT_TRUE(producer.ok()) << producer.status().message();
  const size_t bytes = static_cast<size_t>(kH) * kW * 3 * sizeof(float);
  auto floats = gl::Buffer::Create(bytes, nullptr, GL_STREAM_COPY);
  ASSERT_TRUE(floats.ok());
  GpuBufferRef ref;
  ref.buffer = floats->id();
  ref.bytes = bytes;
  ref.shape = shape;
  Status produced = (*producer)->Produce(ref, programs);
  ASSERT_TRUE(produced.ok()) << produced.message();
  glMemoryBarrier(GL_ALL_BARRIER_BITS);
  std::vector<float> got(static_cast<size_t>(kH) * kW * 3);
  ASSERT_TRUE(gl::ReadBufferObject(ref.buffer, bytes, got.data()).ok());
  double worst = 0;
  for (int p = 0; p < kH * kW; ++p) {
    for (int c = 0; c < 3; ++c) {
      const double want = texels[p * 4 + in.channels[c]] / 255.0 * in.scale[c] + in.offset[c];
      worst = std::max(worst, std::fabs(got[p * 3 + c] - want));
    }
  }
  EXPECT_LE(worst, 1e-5);
  // And back: the same floats into an RGBA32F texture, scaled.
  TextureParams out;
  out.texture = target;
  out.scale[0] = out.scale[1] = out.scale[2] = 0.5f;
  out.offset[0] = 1.0f;
  auto sink = MakeTextureSink(out, shape, "output", programs);
  ASSERT_TRUE(sink.ok()) << sink.status().message();
  Status consumed = (*sink)->Consume(ref, programs);
  ASSERT_TRUE(consumed.ok()) << consumed.message();
  glMemoryBarrier(GL_ALL_BARRIER_BITS);
  const std::vector<float> written = ReadTexture(target, kW, kH, false);
  worst = 0;
  for (int p = 0; p < kH * kW; ++p) {
    for (int c = 0; c < 4; ++c) {
      const double want = c < 3 ? got[p * 3 + c] * out.scale[c] + out.offset[c] : 1.0;
      const double error = std::fabs(written[p * 4 + c] - want);
      worst = std::isnan(error) ? INFINITY : std::max(worst, error);
    }
  }
  EXPECT_LE(worst, 1e-6);
  // Both left no sampler, texture or image bound on the units they used.
  GLint sampler = -1, image = -1;
  glActiveTexture(GL_TEXTURE1);
  glGetIntegerv(GL_SAMPLER_BINDING, &sampler);
  glActiveTexture(GL_TEXTURE0);
  glGetIntegeri_v(GL_IMAGE_BINDING_NAME, 0, &image);
  EXPECT_EQ(sampler, 0);
  EXPECT_EQ(image, 0);
  glDeleteTextures(1, &source);
  glDeleteTextures(1, &target);
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

TEST(TextureIo, CheckTextureNamesWhatIsWrong) {
  TestEnvironment();
  const GLuint good = MakeTexture(GL_RGBA8, 8, 6, nullptr, GL_UNSIGNED_BYTE);
  auto facts = gl::CheckTexture(good, 8, 6, /*output=*/true, "t");
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  EXPECT_EQ(facts->internal_format, static_cast<GLenum>(GL_RGBA8));
  auto message = [](const StatusOr<gl::TextureFacts>& result) {
    return result.ok() ? std::string("(accepted)") : result.status().message();
  };
  EXPECT_NE(message(gl::CheckTexture(good, 6, 8, false, "t")).find("is 8x6 but the tensor is 6x8"),
            std::string::npos);
  const GLuint integer = MakeTexture(GL_RGBA8UI, 8, 6, nullptr, GL_UNSIGNED_BYTE);
  EXPECT_NE(message(gl::CheckTexture(integer, 8, 6, false, "t")).find("GL_RGBA8UI"),
            std::string::npos);
  GLuint cube = 0;
  glGenTextures(1, &cube);
  glBindTexture(GL_TEXTURE_CUBE_MAP, cube);
  glBindTexture(GL_TEXTURE_CUBE_MAP, 0);
  EXPECT_NE(message(gl::CheckTexture(cube, 8, 6, false, "t")).find("not a GL_TEXTURE_2D"),
            std::string::npos);
  GLuint mutable_texture = 0;
  glGenTextures(1, &mutable_texture);
  glBindTexture(GL_TEXTURE_2D, mutable_texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 8, 6, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  glBindTexture(GL_TEXTURE_2D, 0);
  EXPECT_TRUE(gl::CheckTexture(mutable_texture, 8, 6, false, "t").ok());
  EXPECT_NE(message(gl::CheckTexture(mutable_texture, 8, 6, true, "t")).find("glTexStorage2D"),
            std::string::npos);
  GLuint deleted = MakeTexture(GL_RGBA8, 8, 6, nullptr, GL_UNSIGNED_BYTE);
  glDeleteTextures(1, &deleted);
  EXPECT_NE(message(gl::CheckTexture(deleted, 8, 6, false, "t")).find("is not a texture"),
            std::string::npos);
  for (GLuint texture : {good, integer, cube, mutable_texture}) glDeleteTextures(1, &texture);
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

}  // namespace
}  // namespace tflite_gles::testing
