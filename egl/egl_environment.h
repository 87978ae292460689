// The EGL context a delegate runs in, and the facts about its GPU.
//
// The contract of a TFLite GPU delegate: if the calling thread already has a
// current EGLContext, that context belongs to the application and we use it;
// otherwise we create our own GLES 3.1+ context without a surface. Displays are
// tried in a fixed order: the EGL device platform (how NVIDIA runs headless),
// Mesa's surfaceless platform, then the default display. The environment
// variable TFLITE_GLES_EGL_PLATFORM or the delegate option `egl_platform`
// forces one of them.
#pragma once

#include <EGL/egl.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "egl/status.h"

namespace tflite_gles::egl {

enum class DisplayPlatform { kAuto, kDevice, kSurfaceless, kDefault };

// Parses "auto", "device", "surfaceless" or "default".
Status ParseDisplayPlatform(const std::string& text, DisplayPlatform* platform);
const char* DisplayPlatformName(DisplayPlatform platform);

// What the GL context offers; read once when the environment is acquired.
struct GpuInfo {
  std::string vendor;
  std::string renderer;
  std::string version;
  int major = 0;
  int minor = 0;
  std::vector<std::string> extensions;
  // samplerBuffer in GLSL ES 3.10 shaders needs GL_EXT_ or
  // GL_OES_texture_buffer (even on ES 3.2); the name offered, or "".
  bool has_texture_buffer = false;
  std::string texture_buffer_extension;
  bool has_timer_query = false;       // GL_EXT_disjoint_timer_query
  long long max_ssbo_bytes = 0;       // GL_MAX_SHADER_STORAGE_BLOCK_SIZE
  int max_texture_buffer_texels = 0;  // GL_MAX_TEXTURE_BUFFER_SIZE
  int max_workgroup_count[3] = {0, 0, 0};
  int max_workgroup_size[3] = {0, 0, 0};  // GL_MAX_COMPUTE_WORK_GROUP_SIZE
  int max_workgroup_invocations = 0;
  int max_shared_memory_bytes = 0;    // GL_MAX_COMPUTE_SHARED_MEMORY_SIZE
  int max_ssbo_bindings = 0;          // GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS
  // GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS: every SSBO binding index is below it.
  int max_ssbo_binding_points = 0;
  int max_texture_units = 0;          // GL_MAX_COMPUTE_TEXTURE_IMAGE_UNITS
  int max_image_uniforms = 0;         // GL_MAX_COMPUTE_IMAGE_UNIFORMS
  int max_uniform_components = 0;     // GL_MAX_COMPUTE_UNIFORM_COMPONENTS
  int max_texture_size = 0;           // GL_MAX_TEXTURE_SIZE
  int texture_buffer_offset_alignment = 1;
  int ssbo_offset_alignment = 1;
  int uniform_buffer_offset_alignment = 1;  // GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT
  // The device profile the limits above were clamped to ("native": as the
  // GPU reports them; delegate/device/device_profiles.h).
  std::string profile = "native";

  bool HasExtension(const std::string& name) const;
  bool IsLlvmpipe() const;
  // The NVIDIA driver (where the per-device kernel choices were measured).
  bool IsNvidia() const;
};

class GlEnvironment {
 public:
  // Uses the calling thread's current context if it has one (and it is not
  // one that another tflite-gles environment created), otherwise creates one
  // on the chosen display. Fails with a message naming every
  // display that was tried and why it was rejected.
  // `device` (option egl_device): on the EGL device platform, the device
  // with this index, or with this DRM device file / render node
  // ("/dev/dri/renderD129"); empty: the first that initializes. A device
  // that names none is an error listing the devices.
  // `driver_cache_dir` non-empty: when a display is initialized for a
  // context of our own, the driver's on-disk shader cache is pointed there
  // (egl/driver_shader_cache.h); ignored for the application's context.
  static StatusOr<std::unique_ptr<GlEnvironment>> Acquire(
      DisplayPlatform platform, const std::string& device = "",
      const std::string& driver_cache_dir = "");

  GlEnvironment(const GlEnvironment&) = delete;
  GlEnvironment& operator=(const GlEnvironment&) = delete;
  ~GlEnvironment();

  // OK when called on the thread that acquired the environment with this
  // context current. A context we own is made current again when that thread
  // has no context current or another tflite-gles environment's context (two
  // delegates on one thread); any other situation (an application's context
  // current, another thread) is an error that says what is wrong, so nothing
  // runs on the wrong context.
  Status EnsureCurrent() const;

  // EGLContexts created by environments alive in the process (leak checks).
  static long LiveOwnedContexts();

  bool owns_context() const { return owns_context_; }
  EGLDisplay display() const { return display_; }
  EGLContext context() const { return context_; }
  const GpuInfo& info() const { return info_; }
  // Which display was used, e.g. "EGL device platform (device 0 of 1)".
  const std::string& display_description() const { return description_; }
  // Where the driver's shader cache was pointed, or why not ("" when
  // Acquire got no driver_cache_dir).
  const std::string& driver_cache() const { return driver_cache_; }

 private:
  GlEnvironment() = default;
  Status ReadGpuInfo();

  EGLDisplay display_ = EGL_NO_DISPLAY;
  EGLContext context_ = EGL_NO_CONTEXT;
  EGLSurface draw_ = EGL_NO_SURFACE;
  EGLSurface read_ = EGL_NO_SURFACE;
  bool owns_context_ = false;
  std::thread::id thread_;
  GpuInfo info_;
  std::string description_;
  std::string driver_cache_;
};

}  // namespace tflite_gles::egl
