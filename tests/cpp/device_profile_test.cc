// The device profiles (delegate/device/device_profiles.h) and the limit
// check every program passes before its first dispatch
// (egl/program_limits.h), on real programs linked by the real driver: each
// over-limit shader must be refused, naming the limit, at the GLES 3.1
// minimum, and accepted with the GPU's own (larger) limits.
#include <gtest/gtest.h>

#include <string>

#include "delegate/device/device_profiles.h"
#include "delegate/device/device_tuning.h"
#include "egl/gl_objects.h"
#include "egl/program_limits.h"
#include "gpu_test_util.h"
#include "tflite_gles/delegate.h"

namespace tflite_gles::testing {
namespace {

egl::GpuInfo Minimum() {
  return ApplyDeviceProfile(TestEnvironment().info(),
                            TFLITE_GLES_DEVICE_PROFILE_GLES31_MINIMUM);
}

// The resources `body` (after the version line and a 1-invocation layout
// unless it declares its own) uses, checked against `gpu`.
Status CheckShader(const std::string& body, const egl::GpuInfo& gpu) {
  TFG_RETURN_IF_ERROR(TestEnvironment().EnsureCurrent());
  std::string source = "#version 310 es\n";
  if (!TestEnvironment().info().texture_buffer_extension.empty()) {
    source += "#extension " + TestEnvironment().info().texture_buffer_extension +
              " : require\nprecision highp samplerBuffer;\n";
  }
  source += "precision highp float;\n";
  if (body.find("local_size") == std::string::npos) {
    source += "layout(local_size_x = 1) in;\n";
  }
  source += body;
  TFG_ASSIGN_OR_RETURN(gl::Program program, gl::Program::CreateCompute(source));
  TFG_ASSIGN_OR_RETURN(gl::ProgramResources used, gl::QueryProgramResources(program.id()));
  return gl::CheckProgramResources(used, gpu);
}

// `n` SSBOs at bindings first..first+n-1, each one written (an unused block
// may be dropped by the linker).
std::string Buffers(int n, int first = 0) {
  std::string decl, use;
  for (int i = 0; i < n; ++i) {
    const std::string b = std::to_string(first + i);
    decl += "layout(std430, binding = " + b + ") buffer B" + b + " { float v" + b + "[]; };\n";
    use += "  v" + b + "[0] = 1.0;\n";
  }
  return decl + "void main() {\n" + use + "}\n";
}

void ExpectRefused(const Status& status, const char* limit) {
  ASSERT_FALSE(status.ok()) << "accepted over " << limit;
  EXPECT_NE(status.message().find(limit), std::string::npos) << status.message();
}

TEST(DeviceProfile, TheMinimumClampsEveryLimitAndNeverRaisesOne) {
  const egl::GpuInfo& native = TestEnvironment().info();
  const egl::GpuInfo minimum = Minimum();
  EXPECT_EQ(minimum.profile, "gles31-minimum");
  EXPECT_EQ(minimum.max_workgroup_invocations, std::min(native.max_workgroup_invocations, 128));
  EXPECT_EQ(minimum.max_workgroup_size[2], std::min(native.max_workgroup_size[2], 64));
  EXPECT_EQ(minimum.max_shared_memory_bytes, std::min(native.max_shared_memory_bytes, 16384));
  EXPECT_EQ(minimum.max_ssbo_bindings, std::min(native.max_ssbo_bindings, 4));
  EXPECT_EQ(minimum.max_ssbo_binding_points, std::min(native.max_ssbo_binding_points, 4));
  EXPECT_EQ(minimum.max_ssbo_bytes, std::min(native.max_ssbo_bytes, 1LL << 27));
  EXPECT_EQ(minimum.max_texture_units, std::min(native.max_texture_units, 16));
  EXPECT_EQ(minimum.max_image_uniforms, std::min(native.max_image_uniforms, 4));
  EXPECT_EQ(minimum.max_uniform_components, std::min(native.max_uniform_components, 512));
  EXPECT_EQ(minimum.max_texture_size, std::min(native.max_texture_size, 2048));
  if (native.has_texture_buffer) {
    EXPECT_EQ(minimum.max_texture_buffer_texels,
              std::min(native.max_texture_buffer_texels, 65536));
  }
  EXPECT_GE(minimum.ssbo_offset_alignment, 256);
  // A GPU weaker than the profile keeps its own limits.
  egl::GpuInfo weak = native;
  weak.max_workgroup_invocations = 64;
  weak.max_ssbo_bindings = 2;
  const egl::GpuInfo clamped =
      ApplyDeviceProfile(weak, TFLITE_GLES_DEVICE_PROFILE_GLES31_MINIMUM);
  EXPECT_EQ(clamped.max_workgroup_invocations, 64);
  EXPECT_EQ(clamped.max_ssbo_bindings, 2);
  // native changes nothing.
  EXPECT_EQ(ApplyDeviceProfile(native, TFLITE_GLES_DEVICE_PROFILE_NATIVE)
                .max_workgroup_invocations,
            native.max_workgroup_invocations);
}

TEST(DeviceProfile, NamesParseAndABadOneIsRefused) {
  int profile = -1;
  ASSERT_TRUE(ParseDeviceProfile("mali-g52", &profile).ok());
  EXPECT_EQ(profile, TFLITE_GLES_DEVICE_PROFILE_MALI_G52);
  auto chosen = ChooseDeviceProfile(TFLITE_GLES_DEVICE_PROFILE_NATIVE, "gles31-minimum");
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(*chosen, TFLITE_GLES_DEVICE_PROFILE_GLES31_MINIMUM);
  auto bad = ChooseDeviceProfile(TFLITE_GLES_DEVICE_PROFILE_NATIVE, "weakest");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("TFLITE_GLES_DEVICE_PROFILE"), std::string::npos);
}

TEST(DeviceProfile, FiveBuffersAreRefusedAtTheMinimumOnly) {
  ASSERT_GE(TestEnvironment().info().max_ssbo_bindings, 5);
  EXPECT_TRUE(CheckShader(Buffers(5), TestEnvironment().info()).ok());
  EXPECT_TRUE(CheckShader(Buffers(4), Minimum()).ok());
  ExpectRefused(CheckShader(Buffers(5), Minimum()), "GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS");
  // One buffer, but at binding 4: the index must stay below the 4 binding points.
  ExpectRefused(CheckShader(Buffers(1, 4), Minimum()), "GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS");
}

TEST(DeviceProfile, WorkgroupsOverTheMinimumAreRefused) {
  const std::string over =
      "layout(local_size_x = 16, local_size_y = 16) in;\n" + Buffers(1);
  EXPECT_TRUE(CheckShader(over, TestEnvironment().info()).ok());
  ExpectRefused(CheckShader(over, Minimum()), "GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS");
  const std::string deep = "layout(local_size_x = 1, local_size_z = 65) in;\n" + Buffers(1);
  ExpectRefused(CheckShader(deep, Minimum()), "GL_MAX_COMPUTE_WORK_GROUP_SIZE");
}

TEST(DeviceProfile, TextureUnitsPastTheMinimumAreRefused) {
  if (!TestEnvironment().info().has_texture_buffer) GTEST_FAIL() << "llvmpipe has texture buffers";
  const std::string body =
      "layout(binding = 16) uniform highp samplerBuffer t;\n"
      "layout(std430, binding = 0) buffer O { vec4 o[]; };\n"
      "void main() { o[0] = texelFetch(t, 0); }\n";
  ASSERT_GT(TestEnvironment().info().max_texture_units, 16);
  EXPECT_TRUE(CheckShader(body, TestEnvironment().info()).ok());
  ExpectRefused(CheckShader(body, Minimum()), "GL_MAX_COMPUTE_TEXTURE_IMAGE_UNITS");
}

TEST(DeviceProfile, AtTheMinimumDispatchesBindAtMostFourBuffers) {
  const egl::GpuInfo minimum = Minimum();
  DeviceProfile device;
  device.gpu = &minimum;
  device.texture_buffer_reads = PreferTextureBufferReads(minimum);
  EXPECT_FALSE(device.texture_buffer_reads) << "65536 texels do not hold common tensors";
  TuneForDevice(&device);
  device.shared_memory_gemm = device.fuse_depthwise_into_gemm = true;
  device.fuse_softmax_into_gemm = device.split_depthwise_gemm_k = true;
  FitDeviceLimits(&device);
  EXPECT_EQ(device.max_dispatch_buffers, 4);
  EXPECT_FALSE(device.fuse_depthwise_into_gemm);
  EXPECT_FALSE(device.fuse_softmax_into_gemm);
  EXPECT_FALSE(device.split_depthwise_gemm_k);
}

}  // namespace
}  // namespace tflite_gles::testing
