#include "delegate/device/device_profiles.h"

#include <algorithm>

#include "tflite_gles/delegate.h"

namespace tflite_gles {
namespace {

// Every limit the delegate reads (egl::GpuInfo); docs/device_profiles.md
// gives each number's source.
struct Limits {
  int workgroup_count;         // each axis
  int workgroup_size[3];
  int workgroup_invocations;
  int shared_memory_bytes;
  int ssbo_blocks;             // per compute shader
  int ssbo_binding_points;
  long long ssbo_bytes;
  int texture_units;           // per compute shader
  int image_uniforms;
  int uniform_components;
  int texture_buffer_texels;
  int texture_size;
  int alignment;               // largest buffer offset alignment allowed
};

// OpenGL ES 3.1 minimums (texture buffers: EXT_texture_buffer / ES 3.2);
// checked against the specification tables in docs/device_profiles.md.
constexpr Limits kGles31Minimum = {
    65535, {128, 128, 64}, 128, 16384, 4, 4, 1LL << 27, 16, 4, 512, 65536, 2048, 256};

// Mali-G52 (Bifrost): 384 invocations of at most 384 along each axis (the
// figures its Arm driver reports, docs/device_profiles.md); every limit
// without a public source here stays at the GLES 3.1 minimum.
constexpr Limits kMaliG52 = {
    65535, {384, 384, 384}, 384, 16384, 4, 4, 1LL << 27, 16, 4, 512, 65536, 2048, 256};

template <typename T>
void Clamp(T* value, T limit) {
  *value = std::min(*value, limit);
}

}  // namespace

Status ParseDeviceProfile(const std::string& text, int* profile) {
  for (int p : {TFLITE_GLES_DEVICE_PROFILE_NATIVE, TFLITE_GLES_DEVICE_PROFILE_GLES31_MINIMUM,
                TFLITE_GLES_DEVICE_PROFILE_MALI_G52}) {
    if (text == DeviceProfileName(p)) {
      *profile = p;
      return Status::Ok();
    }
  }
  return Status::Error("unknown device profile '" + text +
                       "' (native|gles31-minimum|mali-g52)");
}

const char* DeviceProfileName(int profile) {
  switch (profile) {
    case TFLITE_GLES_DEVICE_PROFILE_GLES31_MINIMUM: return "gles31-minimum";
    case TFLITE_GLES_DEVICE_PROFILE_MALI_G52: return "mali-g52";
    default: return "native";
  }
}

StatusOr<int> ChooseDeviceProfile(int option, const std::string& env_text) {
  if (env_text.empty()) return option;
  int profile = option;
  Status parsed = ParseDeviceProfile(env_text, &profile);
  if (!parsed.ok()) return parsed.WithContext("TFLITE_GLES_DEVICE_PROFILE");
  return profile;
}

egl::GpuInfo ApplyDeviceProfile(const egl::GpuInfo& native, int profile) {
  egl::GpuInfo gpu = native;
  const Limits* limits = nullptr;
  if (profile == TFLITE_GLES_DEVICE_PROFILE_GLES31_MINIMUM) limits = &kGles31Minimum;
  if (profile == TFLITE_GLES_DEVICE_PROFILE_MALI_G52) limits = &kMaliG52;
  if (limits == nullptr) return gpu;
  for (int i = 0; i < 3; ++i) {
    Clamp(&gpu.max_workgroup_count[i], limits->workgroup_count);
    Clamp(&gpu.max_workgroup_size[i], limits->workgroup_size[i]);
  }
  Clamp(&gpu.max_workgroup_invocations, limits->workgroup_invocations);
  Clamp(&gpu.max_shared_memory_bytes, limits->shared_memory_bytes);
  Clamp(&gpu.max_ssbo_bindings, limits->ssbo_blocks);
  Clamp(&gpu.max_ssbo_binding_points, limits->ssbo_binding_points);
  Clamp(&gpu.max_ssbo_bytes, limits->ssbo_bytes);
  Clamp(&gpu.max_texture_units, limits->texture_units);
  Clamp(&gpu.max_image_uniforms, limits->image_uniforms);
  Clamp(&gpu.max_uniform_components, limits->uniform_components);
  Clamp(&gpu.max_texture_buffer_texels, limits->texture_buffer_texels);
  Clamp(&gpu.max_texture_size, limits->texture_size);
  // Offsets must be multiples of these: the weakest GPU asks for the most.
  gpu.ssbo_offset_alignment = std::max(gpu.ssbo_offset_alignment, limits->alignment);
  gpu.uniform_buffer_offset_alignment =
      std::max(gpu.uniform_buffer_offset_alignment, limits->alignment);
  if (gpu.has_texture_buffer) {
    gpu.texture_buffer_offset_alignment =
        std::max(gpu.texture_buffer_offset_alignment, limits->alignment);
  }
  gpu.profile = DeviceProfileName(profile);
  return gpu;
}

}  // namespace tflite_gles
