// Weights written into a program as GLSL literals (delegate/kernels/
// literal_weights.h): the text the convolutions' WEIGHTS_LITERAL / ST_LIT
// paths put in a const array must give back, on the real GPU, the very
// floats it was made from: random weights bit for bit, the extremes of the
// normal range, and the non-finite values GLSL has no literal for.
#include <gtest/gtest.h>

#include <GLES3/gl31.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "delegate/kernels/literal_weights.h"
#include "egl/gl_objects.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

TEST(LiteralWeights, TheGpuReadsBackEveryFloatOfTheArrayItWasWrittenFrom) {
  ASSERT_TRUE(TestEnvironment().EnsureCurrent().ok());
  std::mt19937 rng(18);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  std::vector<float> data;
  for (int i = 0; i < 48; ++i) data.push_back(normal(rng));
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {1.0f, -2.0f, 0.0f, 1e-5f, 3.40282347e38f, -1.17549435e-38f, inf, -inf,
                  std::numeric_limits<float>::quiet_NaN(), 0.1f, 7.0f, -1e30f}) {
    data.push_back(v);
  }
  ASSERT_EQ(data.size() % 4, 0u);
  const size_t n = data.size() / 4;
  const std::string source =
      "#version 310 es\nlayout(local_size_x = 1) in;\n"
      "layout(std430, binding = 0) buffer Out { uvec4 bits[]; };\n"
      "const vec4 W[" + std::to_string(n) + "] = vec4[](" + kernels::Vec4Literals(data) +
      ");\nvoid main() {\n  for (int i = 0; i < " + std::to_string(n) +
      "; ++i) bits[i] = floatBitsToUint(W[i]);\n}\n";
  auto program = gl::Program::CreateCompute(source);
  ASSERT_TRUE(program.ok()) << program.status().message() << "\n" << source;
  std::vector<uint32_t> got(data.size(), 0xdeadbeefu);
  auto out = gl::Buffer::Create(got.size() * 4, got.data());
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_TRUE(out->BindAsStorage(0, 0, got.size() * 4).ok());
  ASSERT_TRUE(program->Dispatch(1, 1, 1).ok());
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  ASSERT_TRUE(out->Download(0, got.size() * 4, got.data()).ok());
  for (size_t i = 0; i < data.size(); ++i) {
    SCOPED_TRACE("weight " + std::to_string(i) + " = " + std::to_string(data[i]));
    if (std::isnan(data[i])) {
      float value;
      std::memcpy(&value, &got[i], sizeof(value));
      EXPECT_TRUE(std::isnan(value)) << std::hex << got[i];
    } else {
      EXPECT_EQ(got[i], Bits(data[i])) << std::hex << got[i] << " vs " << Bits(data[i]);
    }
  }
}

}  // namespace
}  // namespace tflite_gles::testing
