#include "egl/egl_environment.h"

#include <EGL/eglext.h>
#include <GLES3/gl32.h>

#include <algorithm>
#include <functional>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "egl/driver_shader_cache.h"
#include "egl/driver_threads.h"
#include "egl/gl_call.h"
#include "egl/init_phases.h"

namespace tflite_gles::egl {
namespace {

// EGL displays are process-wide singletons: eglTerminate on one tears down
// every context on it, including other delegates'. We count our own users of
// each display and terminate only when the last of ours is gone.
std::mutex g_display_mutex;

// Every EGLContext tflite-gles created and has not destroyed yet. A context
// of ours left current by one delegate is not "the application's context"
// for the next delegate on that thread: treating it so would tie the second
// delegate to a context the first destroys with itself. Our own contexts
// are switched freely; the application's are never touched.
std::mutex g_owned_mutex;
std::set<EGLContext>& OwnedContexts() {
  static auto* contexts = new std::set<EGLContext>();
  return *contexts;
}

bool IsOurContext(EGLContext context) {
  std::lock_guard<std::mutex> lock(g_owned_mutex);
  return OwnedContexts().count(context) > 0;
}
std::map<EGLDisplay, int>& DisplayUsers() {
  static auto* users = new std::map<EGLDisplay, int>();
  return *users;
}

Status InitializeDisplay(EGLDisplay display) {
  std::lock_guard<std::mutex> lock(g_display_mutex);
  EGLint major = 0, minor = 0;
  TFG_EGL(eglInitialize(display, &major, &minor));
  ++DisplayUsers()[display];
  return Status::Ok();
}

void ReleaseDisplay(EGLDisplay display) {
  std::lock_guard<std::mutex> lock(g_display_mutex);
  auto it = DisplayUsers().find(display);
  if (it == DisplayUsers().end()) return;
  if (--it->second == 0) {
    DisplayUsers().erase(it);
    eglTerminate(display);
  }
}

bool HasToken(const char* list, const char* token) {
  if (list == nullptr) return false;
  std::istringstream words(list);
  std::string word;
  while (words >> word) {
    if (word == token) return true;
  }
  return false;
}

struct DisplayCandidate {
  EGLDisplay display = EGL_NO_DISPLAY;
  std::string description;
};

// A stable name for an EGL device, where the driver offers one: its DRM
// render node or device file (EGL_EXT_device_drm_render_node,
// EGL_EXT_device_drm; both NVIDIA's and Mesa's drivers expose them). ""
// where none is offered (Mesa's software device).
std::string DeviceFile(EGLDeviceEXT device) {
  auto query_string = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(
      eglGetProcAddress("eglQueryDeviceStringEXT"));
  if (query_string == nullptr) return "";
  const char* extensions = query_string(device, EGL_EXTENSIONS);
  // EGL_DRM_RENDER_NODE_FILE_EXT: a render node needs no DRM master.
  constexpr EGLint kRenderNode = 0x3377;
  if (HasToken(extensions, "EGL_EXT_device_drm_render_node")) {
    const char* node = query_string(device, kRenderNode);
    if (node != nullptr) return node;
  }
  if (HasToken(extensions, "EGL_EXT_device_drm")) {
    const char* file = query_string(device, EGL_DRM_DEVICE_FILE_EXT);
    if (file != nullptr) return file;
  }
  return "";
}

// Whether device `index` (with `file`) is the one `selector` names: empty
// (any), its index, or its DRM device file / render node.
bool Selected(const std::string& selector, int index, const std::string& file) {
  if (selector.empty()) return true;
  if (selector.find_first_not_of("0123456789") == std::string::npos) {
    return std::to_string(index) == selector;
  }
  return !file.empty() && file == selector;
}

// EGL_EXT_platform_device: how NVIDIA's driver runs without a window system.
// `selector` (option egl_device) picks one device; empty: the first that
// initializes.
StatusOr<DisplayCandidate> OpenDeviceDisplay(const std::string& selector) {
  const char* client_extensions = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  // NVIDIA's GLVND may advertise enumeration as part of EGL_EXT_device_base.
  const bool platform = HasToken(client_extensions, "EGL_EXT_platform_device");
  const bool enumeration =
      HasToken(client_extensions, "EGL_EXT_device_enumeration") ||
      HasToken(client_extensions, "EGL_EXT_device_base");
  if (!platform || !enumeration) {
    return Status::Error(
        std::string(platform ? "" : "EGL_EXT_platform_device ") +
        (enumeration ? "" : "EGL_EXT_device_enumeration/_base ") +
        "not offered (client extensions: " +
        (client_extensions ? client_extensions : "none") + ")");
  }
  auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(
      eglGetProcAddress("eglQueryDevicesEXT"));
  auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
      eglGetProcAddress("eglGetPlatformDisplayEXT"));
  if (query_devices == nullptr || get_platform_display == nullptr) {
    return Status::Error("eglQueryDevicesEXT/eglGetPlatformDisplayEXT missing");
  }
  EGLDeviceEXT devices[16];
  EGLint count = 0;
  if (!query_devices(16, devices, &count) || count == 0) {
    return Status::Error("eglQueryDevicesEXT found no device");
  }
  // Several devices: the first one that initializes wins. Mesa lists its
  // software device too; it works like the surfaceless platform.
  std::string reasons;
  std::string listed;
  for (EGLint i = 0; i < count; ++i) {
    const std::string file = DeviceFile(devices[i]);
    listed += " " + std::to_string(i) + (file.empty() ? "" : " (" + file + ")");
    if (!Selected(selector, i, file)) continue;
    EGLDisplay display =
        get_platform_display(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
    if (display == EGL_NO_DISPLAY) {
      reasons += " device " + std::to_string(i) + ": no display;";
      continue;
    }
    Status status = InitializeDisplay(display);
    if (!status.ok()) {
      reasons += " device " + std::to_string(i) + ": " + status.message() + ";";
      continue;
    }
    return DisplayCandidate{display, "EGL device platform (device " +
                                         std::to_string(i) + " of " +
                                         std::to_string(count) +
                                         (file.empty() ? "" : ", " + file) + ")"};
  }
  if (!selector.empty() && reasons.empty()) {
    return Status::Error("egl_device '" + selector + "' names none of the devices:" + listed);
  }
  return Status::Error("no EGL device initialized:" + reasons);
}

StatusOr<DisplayCandidate> OpenSurfacelessDisplay() {
  const char* client_extensions = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (!HasToken(client_extensions, "EGL_MESA_platform_surfaceless")) {
    return Status::Error("EGL_MESA_platform_surfaceless not offered");
  }
  auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
      eglGetProcAddress("eglGetPlatformDisplayEXT"));
  if (get_platform_display == nullptr) {
    return Status::Error("eglGetPlatformDisplayEXT missing");
  }
  EGLDisplay display = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA,
                                            EGL_DEFAULT_DISPLAY, nullptr);
  if (display == EGL_NO_DISPLAY) return Status::Error("no surfaceless display");
  TFG_RETURN_IF_ERROR(InitializeDisplay(display));
  return DisplayCandidate{display, "Mesa surfaceless platform"};
}

StatusOr<DisplayCandidate> OpenDefaultDisplay() {
  EGLDisplay display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
  if (display == EGL_NO_DISPLAY) return Status::Error("eglGetDisplay failed");
  TFG_RETURN_IF_ERROR(InitializeDisplay(display));
  return DisplayCandidate{display, "default EGL display"};
}

// Creates a GLES 3.1+ context on `display` and makes it current without a
// surface (EGL_KHR_surfaceless_context), or with a 1x1 pbuffer where the
// display lacks surfaceless support.
Status CreateContext(EGLDisplay display, EGLContext* context,
                     EGLSurface* surface) {
  TFG_EGL(eglBindAPI(EGL_OPENGL_ES_API));
  const char* extensions = eglQueryString(display, EGL_EXTENSIONS);
  const bool surfaceless = HasToken(extensions, "EGL_KHR_surfaceless_context");
  const EGLint config_attributes[] = {
      EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT_KHR,
      EGL_SURFACE_TYPE, surfaceless ? EGL_DONT_CARE : EGL_PBUFFER_BIT,
      EGL_NONE};
  EGLConfig config = nullptr;
  EGLint num_configs = 0;
  TFG_EGL(eglChooseConfig(display, config_attributes, &config, 1, &num_configs));
  if (num_configs == 0) {
    return Status::Error("eglChooseConfig: no config with GLES 3 support");
  }
  const EGLint context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3,
                                       EGL_CONTEXT_MINOR_VERSION, 1, EGL_NONE};
  *context = eglCreateContext(display, config, EGL_NO_CONTEXT,
                              context_attributes);
  if (*context == EGL_NO_CONTEXT) {
    return gl::CheckEglError("eglCreateContext(GLES 3.1)", __FILE__, __LINE__);
  }
  *surface = EGL_NO_SURFACE;
  if (!surfaceless) {
    const EGLint pbuffer_attributes[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
    *surface = eglCreatePbufferSurface(display, config, pbuffer_attributes);
    if (*surface == EGL_NO_SURFACE) {
      Status status =
          gl::CheckEglError("eglCreatePbufferSurface", __FILE__, __LINE__);
      eglDestroyContext(display, *context);
      *context = EGL_NO_CONTEXT;
      return status;
    }
  }
  if (eglMakeCurrent(display, *surface, *surface, *context) != EGL_TRUE) {
    Status status = gl::CheckEglError("eglMakeCurrent", __FILE__, __LINE__);
    if (*surface != EGL_NO_SURFACE) eglDestroySurface(display, *surface);
    eglDestroyContext(display, *context);
    *context = EGL_NO_CONTEXT;
    *surface = EGL_NO_SURFACE;
    return status;
  }
  return Status::Ok();
}

}  // namespace

Status ParseDisplayPlatform(const std::string& text, DisplayPlatform* platform) {
  if (text == "auto" || text.empty()) {
    *platform = DisplayPlatform::kAuto;
  } else if (text == "device") {
    *platform = DisplayPlatform::kDevice;
  } else if (text == "surfaceless") {
    *platform = DisplayPlatform::kSurfaceless;
  } else if (text == "default") {
    *platform = DisplayPlatform::kDefault;
  } else {
    return Status::Error("unknown EGL platform '" + text +
                         "' (valid: auto, device, surfaceless, default)");
  }
  return Status::Ok();
}

const char* DisplayPlatformName(DisplayPlatform platform) {
  switch (platform) {
    case DisplayPlatform::kAuto: return "auto";
    case DisplayPlatform::kDevice: return "device";
    case DisplayPlatform::kSurfaceless: return "surfaceless";
    case DisplayPlatform::kDefault: return "default";
  }
  return "?";
}

bool GpuInfo::HasExtension(const std::string& name) const {
  return std::find(extensions.begin(), extensions.end(), name) !=
         extensions.end();
}

bool GpuInfo::IsLlvmpipe() const {
  return renderer.find("llvmpipe") != std::string::npos;
}

bool GpuInfo::IsNvidia() const { return renderer.find("NVIDIA") != std::string::npos; }

StatusOr<std::unique_ptr<GlEnvironment>> GlEnvironment::Acquire(
    DisplayPlatform platform, const std::string& device,
    const std::string& driver_cache_dir) {
  std::unique_ptr<GlEnvironment> env(new GlEnvironment());
  env->thread_ = std::this_thread::get_id();

  EGLContext current = eglGetCurrentContext();
  if (current != EGL_NO_CONTEXT && !IsOurContext(current)) {
    // The application's context: use it as it is, never destroy it.
    env->display_ = eglGetCurrentDisplay();
    env->context_ = current;
    env->draw_ = eglGetCurrentSurface(EGL_DRAW);
    env->read_ = eglGetCurrentSurface(EGL_READ);
    env->owns_context_ = false;
    env->description_ = "the application's current EGL context";
    if (!driver_cache_dir.empty()) {
      env->driver_cache_ =
          "driver shader cache left to the application (its EGL display was "
          "initialized before the delegate)";
    }
    TFG_RETURN_IF_ERROR(env->ReadGpuInfo().WithContext(
        "the calling thread's current EGLContext cannot run the delegate"));
    return env;
  }

  if (const char* forced = std::getenv("TFLITE_GLES_EGL_PLATFORM")) {
    TFG_RETURN_IF_ERROR(ParseDisplayPlatform(forced, &platform)
                            .WithContext("TFLITE_GLES_EGL_PLATFORM"));
  }
  // A chosen device exists only on the device platform: no silent fallback
  // to another GPU.
  if (!device.empty()) {
    if (platform != DisplayPlatform::kAuto && platform != DisplayPlatform::kDevice) {
      return Status::Error(std::string("egl_device '") + device + "' needs the EGL device "
                           "platform, but egl_platform is " + DisplayPlatformName(platform));
    }
    platform = DisplayPlatform::kDevice;
  }
  struct Attempt {
    DisplayPlatform platform;
    std::function<StatusOr<DisplayCandidate>()> open;
  };
  const Attempt attempts[] = {
      {DisplayPlatform::kDevice, [&device] { return OpenDeviceDisplay(device); }},
      {DisplayPlatform::kSurfaceless, OpenSurfacelessDisplay},
      {DisplayPlatform::kDefault, OpenDefaultDisplay},
  };
  // Until the context is made: the drivers read it at display
  // initialization (egl/driver_shader_cache.h).
  ScopedDriverShaderCache driver_cache(driver_cache_dir);
  ScopedDriverThreads driver_threads;
  std::string tried;
  for (const Attempt& attempt : attempts) {
    if (platform != DisplayPlatform::kAuto && platform != attempt.platform) {
      continue;
    }
    tried += std::string(tried.empty() ? "" : "; ") +
             DisplayPlatformName(attempt.platform) + ": ";
    auto candidate = [&attempt] {
      gl::ScopedInitPhase timed(gl::InitPhase::kEglDisplay);
      return attempt.open();
    }();
    if (!candidate.ok()) {
      tried += candidate.status().message();
      continue;
    }
    EGLContext context = EGL_NO_CONTEXT;
    EGLSurface surface = EGL_NO_SURFACE;
    Status status = [&] {
      gl::ScopedInitPhase timed(gl::InitPhase::kEglContext);
      return CreateContext(candidate->display, &context, &surface);
    }();
    if (!status.ok()) {
      tried += candidate->description + ": " + status.message();
      ReleaseDisplay(candidate->display);
      continue;
    }
    env->display_ = candidate->display;
    env->context_ = context;
    env->draw_ = env->read_ = surface;
    env->owns_context_ = true;
    // Say why earlier displays were passed over: on a machine where the
    // preferred platform fails, that is the first thing to know.
    env->description_ = candidate->description;
    const size_t last = tried.rfind("; ");
    if (last != std::string::npos) {
      env->description_ += " (passed over: " + tried.substr(0, last) + ")";
    }
    {
      gl::ScopedInitPhase timed(gl::InitPhase::kGpuInfo);
      status = env->ReadGpuInfo();
    }
    if (status.ok()) {
      env->driver_cache_ = driver_cache.description();
      {
        // A display already initialized keeps the driver cache it was
        // initialized with: the variables only act on a new one.
        std::lock_guard<std::mutex> lock(g_display_mutex);
        const bool fresh_display = DisplayUsers()[env->display_] == 1;
        if (!env->driver_cache_.empty() && !fresh_display) {
          env->driver_cache_ += " (no effect: the display was already initialized "
                                "by another delegate of this process)";
        }
        if (fresh_display && env->info_.IsLlvmpipe() &&
            !driver_threads.description().empty()) {
          env->description_ += ", llvmpipe workers: " + driver_threads.description();
        }
      }
      std::lock_guard<std::mutex> lock(g_owned_mutex);
      OwnedContexts().insert(context);
      return env;
    }
    tried += candidate->description + ": " + status.message();
    // The destructor of a half-built environment would release it too late
    // for the next attempt; release now and start clean.
    eglMakeCurrent(candidate->display, EGL_NO_SURFACE, EGL_NO_SURFACE,
                   EGL_NO_CONTEXT);
    if (surface != EGL_NO_SURFACE) eglDestroySurface(candidate->display, surface);
    eglDestroyContext(candidate->display, context);
    ReleaseDisplay(candidate->display);
    env->display_ = EGL_NO_DISPLAY;
    env->context_ = EGL_NO_CONTEXT;
    env->owns_context_ = false;
  }
  return Status::Error(
      "no OpenGL ES 3.1 compute context could be created (EGL platform '" +
      std::string(DisplayPlatformName(platform)) + "'; tried " + tried + ")");
}

long GlEnvironment::LiveOwnedContexts() {
  std::lock_guard<std::mutex> lock(g_owned_mutex);
  return static_cast<long>(OwnedContexts().size());
}

GlEnvironment::~GlEnvironment() {
  if (!owns_context_) return;
  {
    std::lock_guard<std::mutex> lock(g_owned_mutex);
    OwnedContexts().erase(context_);
  }
  if (eglGetCurrentContext() == context_) {
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  }
  if (draw_ != EGL_NO_SURFACE) eglDestroySurface(display_, draw_);
  eglDestroyContext(display_, context_);
  ReleaseDisplay(display_);
}

Status GlEnvironment::EnsureCurrent() const {
  if (std::this_thread::get_id() != thread_) {
    return Status::Error(
        "called on a different thread than ModifyGraphWithDelegate; the GPU "
        "delegate must be invoked on the thread (and EGLContext) that "
        "applied it");
  }
  EGLContext current = eglGetCurrentContext();
  if (current == context_) return Status::Ok();
  // Another delegate's context may be current on this thread (several
  // interpreters on one thread): ours can replace it, an application's not.
  if (owns_context_ && (current == EGL_NO_CONTEXT || IsOurContext(current))) {
    TFG_EGL(eglMakeCurrent(display_, draw_, read_, context_));
    return Status::Ok();
  }
  return Status::Error(
      current == EGL_NO_CONTEXT
          ? "no EGLContext is current, but the delegate was applied with the "
            "application's context current; make it current before Invoke"
          : "another EGLContext is current than the one the delegate was "
            "applied with; make that context current before Invoke");
}

Status GlEnvironment::ReadGpuInfo() {
  auto get_string = [](GLenum name) {
    const GLubyte* text = glGetString(name);
    return text ? std::string(reinterpret_cast<const char*>(text)) : "";
  };
  gl::ClearGlErrors();
  info_.vendor = get_string(GL_VENDOR);
  info_.renderer = get_string(GL_RENDERER);
  info_.version = get_string(GL_VERSION);
  TFG_GL(glGetIntegerv(GL_MAJOR_VERSION, &info_.major));
  TFG_GL(glGetIntegerv(GL_MINOR_VERSION, &info_.minor));
  if (info_.version.rfind("OpenGL ES", 0) != 0 ||
      info_.major * 10 + info_.minor < 31) {
    return Status::Error("context is '" + info_.version +
                         "', but compute shaders need OpenGL ES 3.1 or newer");
  }
  GLint count = 0;
  TFG_GL(glGetIntegerv(GL_NUM_EXTENSIONS, &count));
  for (GLint i = 0; i < count; ++i) {
    const GLubyte* name = glGetStringi(GL_EXTENSIONS, i);
    if (name) info_.extensions.emplace_back(reinterpret_cast<const char*>(name));
  }
  for (const char* name : {"GL_EXT_texture_buffer", "GL_OES_texture_buffer"}) {
    if (info_.HasExtension(name)) {
      info_.texture_buffer_extension = name;
      info_.has_texture_buffer = true;
      break;
    }
  }
  info_.has_timer_query = info_.HasExtension("GL_EXT_disjoint_timer_query");
  GLint64 ssbo_size = 0;
  TFG_GL(glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &ssbo_size));
  info_.max_ssbo_bytes = ssbo_size;
  if (info_.has_texture_buffer) {
    TFG_GL(glGetIntegerv(GL_MAX_TEXTURE_BUFFER_SIZE,
                         &info_.max_texture_buffer_texels));
    TFG_GL(glGetIntegerv(GL_TEXTURE_BUFFER_OFFSET_ALIGNMENT,
                         &info_.texture_buffer_offset_alignment));
  }
  for (int i = 0; i < 3; ++i) {
    TFG_GL(glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, i,
                           &info_.max_workgroup_count[i]));
  }
  for (int i = 0; i < 3; ++i) {
    TFG_GL(glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_SIZE, i,
                           &info_.max_workgroup_size[i]));
  }
  TFG_GL(glGetIntegerv(GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS,
                       &info_.max_ssbo_binding_points));
  TFG_GL(glGetIntegerv(GL_MAX_COMPUTE_IMAGE_UNIFORMS, &info_.max_image_uniforms));
  TFG_GL(glGetIntegerv(GL_MAX_COMPUTE_UNIFORM_COMPONENTS,
                       &info_.max_uniform_components));
  TFG_GL(glGetIntegerv(GL_MAX_TEXTURE_SIZE, &info_.max_texture_size));
  TFG_GL(glGetIntegerv(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS,
                       &info_.max_workgroup_invocations));
  TFG_GL(glGetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE,
                       &info_.max_shared_memory_bytes));
  TFG_GL(glGetIntegerv(GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS,
                       &info_.max_ssbo_bindings));
  TFG_GL(glGetIntegerv(GL_MAX_COMPUTE_TEXTURE_IMAGE_UNITS,
                       &info_.max_texture_units));
  TFG_GL(glGetIntegerv(GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT,
                       &info_.ssbo_offset_alignment));
  TFG_GL(glGetIntegerv(GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT,
                       &info_.uniform_buffer_offset_alignment));
  return Status::Ok();
}

}  // namespace tflite_gles::egl
