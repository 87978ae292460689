// Camera-to-overlay on the GPU, the program an application would copy: a
// photograph is decoded into a GL texture, resized on the GPU to the model's
// input, segmented by selfie segmentation with that texture bound as the
// input and a mask texture bound as the output (tflite-gles, no CPU copy of
// either), composited over the photograph by a small compute pass, and only
// the final picture is read back and written as a PNG.
//
//   gpu_pipeline_example model.tflite photo.png out.png [--fp16] [--frames N]
//
// Drives TFLite through its C API, like tools/cpp_example.cc: with a TFLite
// C library (-DTFLITE_GLES_TFLITE_C_LIBRARY=...) this builds the program;
// without one (this repository's CI: no library installed with ai-edge-litert
// exports that API, docs/cpp_usage.md) CMake only compiles it, and
// tools/gpu_pipeline_example.py runs the same steps with LiteRT's Python
// interpreter (tests/python/test_gpu_pipeline_example.py runs that one).
// The passes are tools/gpu_pipeline.comp; PNGs go through Debian's libstb-dev.
#if __has_include(<tensorflow/lite/c/c_api.h>)
#include <tensorflow/lite/c/c_api.h>
#else
#include "tools/tflite_c_api_subset.h"
#endif

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl31.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
#include <tflite_gles/delegate.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef TFLITE_GLES_PIPELINE_SHADER
#define TFLITE_GLES_PIPELINE_SHADER "tools/gpu_pipeline.comp"
#endif

namespace {

// Every GL call checked: a failure names the call and stops the program.
bool GlOk(const char* what) {
  const GLenum error = glGetError();
  if (error == GL_NO_ERROR) return true;
  std::fprintf(stderr, "%s: GL error 0x%04x\n", what, error);
  return false;
}
#define GL_CHECK(call) \
  do {                 \
    call;              \
    if (!GlOk(#call)) return false; \
  } while (0)

// A GLES 3.1 context without a surface: Mesa's surfaceless platform, else
// the first EGL device (NVIDIA headless), else the default display.
struct Egl {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  bool Create() {
    auto get_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
        eglGetProcAddress("eglGetPlatformDisplayEXT"));
    const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    const std::string extensions = client ? client : "";
    if (get_display && extensions.find("EGL_MESA_platform_surfaceless") != std::string::npos) {
      display = get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    }
    auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(
        eglGetProcAddress("eglQueryDevicesEXT"));
    EGLDeviceEXT device = nullptr;
    EGLint devices = 0;
    if (display == EGL_NO_DISPLAY && get_display && query_devices &&
        query_devices(1, &device, &devices) && devices > 0) {
      display = get_display(EGL_PLATFORM_DEVICE_EXT, device, nullptr);
    }
    if (display == EGL_NO_DISPLAY) display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, nullptr, nullptr) ||
        !eglBindAPI(EGL_OPENGL_ES_API)) {
      std::fprintf(stderr, "no EGL display (0x%x)\n", eglGetError());
      return false;
    }
    const EGLint config_attributes[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT,
                                        EGL_SURFACE_TYPE, EGL_DONT_CARE, EGL_NONE};
    EGLConfig config = nullptr;
    EGLint configs = 0;
    const EGLint context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3,
                                         EGL_CONTEXT_MINOR_VERSION, 1, EGL_NONE};
    if (!eglChooseConfig(display, config_attributes, &config, 1, &configs) || configs == 0 ||
        (context = eglCreateContext(display, config, EGL_NO_CONTEXT, context_attributes)) ==
            EGL_NO_CONTEXT ||
        !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
      std::fprintf(stderr, "no GLES 3.1 context without a surface (0x%x)\n", eglGetError());
      return false;
    }
    return true;
  }
  ~Egl() {
    if (context != EGL_NO_CONTEXT) {
      eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(display, context);
    }
    if (display != EGL_NO_DISPLAY) eglTerminate(display);
  }
};

// An immutable RGBA8 texture (image-writable), bilinear, clamped.
bool MakeTexture(int width, int height, const unsigned char* pixels, GLuint* texture) {
  GL_CHECK(glGenTextures(1, texture));
  GL_CHECK(glBindTexture(GL_TEXTURE_2D, *texture));
  GL_CHECK(glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, width, height));
  GL_CHECK(glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR));
  GL_CHECK(glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR));
  GL_CHECK(glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE));
  GL_CHECK(glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE));
  if (pixels != nullptr) {
    GL_CHECK(glPixelStorei(GL_UNPACK_ALIGNMENT, 1));
    GL_CHECK(glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA,
                             GL_UNSIGNED_BYTE, pixels));
  }
  GL_CHECK(glBindTexture(GL_TEXTURE_2D, 0));
  return true;
}

// tools/gpu_pipeline.comp with `define` after its #version line.
bool MakeProgram(const std::string& path, const char* define, GLuint* program) {
  std::ifstream file(path);
  if (!file) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  std::stringstream text;
  text << file.rdbuf();
  std::string source = text.str();
  source.insert(source.find('\n') + 1, std::string("#define ") + define + " 1\n");
  const GLuint shader = glCreateShader(GL_COMPUTE_SHADER);
  const char* lines = source.c_str();
  GL_CHECK(glShaderSource(shader, 1, &lines, nullptr));
  GL_CHECK(glCompileShader(shader));
  GLint ok = 0;
  GL_CHECK(glGetShaderiv(shader, GL_COMPILE_STATUS, &ok));
  if (!ok) {
    char log[4096] = {};
    glGetShaderInfoLog(shader, sizeof(log), nullptr, log);
    std::fprintf(stderr, "%s (%s): %s\n", path.c_str(), define, log);
    return false;
  }
  *program = glCreateProgram();
  GL_CHECK(glAttachShader(*program, shader));
  GL_CHECK(glLinkProgram(*program));
  GL_CHECK(glDeleteShader(shader));
  GL_CHECK(glGetProgramiv(*program, GL_LINK_STATUS, &ok));
  return ok != 0;
}

// One pass of tools/gpu_pipeline.comp: `sources` on texture units 0.., the
// result on image unit 0.
bool RunPass(GLuint program, GLuint target, int width, int height,
             const std::vector<GLuint>& sources) {
  GL_CHECK(glUseProgram(program));
  for (size_t unit = 0; unit < sources.size(); ++unit) {
    GL_CHECK(glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(unit)));
    GL_CHECK(glBindTexture(GL_TEXTURE_2D, sources[unit]));
  }
  GL_CHECK(glBindImageTexture(0, target, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA8));
  GL_CHECK(glDispatchCompute((width + 7) / 8, (height + 7) / 8, 1));
  // Its stores, visible to the next pass, the delegate and the readback.
  GL_CHECK(glMemoryBarrier(GL_ALL_BARRIER_BITS));
  return true;
}

bool ReadTexture(GLuint texture, int width, int height, std::vector<unsigned char>* pixels) {
  GLuint framebuffer = 0;
  GL_CHECK(glGenFramebuffers(1, &framebuffer));
  GL_CHECK(glBindFramebuffer(GL_FRAMEBUFFER, framebuffer));
  GL_CHECK(glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D,
                                  texture, 0));
  pixels->resize(static_cast<size_t>(width) * height * 4);
  GL_CHECK(glPixelStorei(GL_PACK_ALIGNMENT, 1));
  GL_CHECK(glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels->data()));
  GL_CHECK(glBindFramebuffer(GL_FRAMEBUFFER, 0));
  GL_CHECK(glDeleteFramebuffers(1, &framebuffer));
  return true;
}

struct Pipeline {
  TfLiteModel* model = nullptr;
  TfLiteInterpreterOptions* options = nullptr;
  TfLiteInterpreter* interpreter = nullptr;
  TfLiteDelegate* delegate = nullptr;
  std::vector<GLuint> textures;
  std::vector<GLuint> programs;
  ~Pipeline() {
    // The interpreter before the delegate, GL objects while the context lives.
    if (interpreter) TfLiteInterpreterDelete(interpreter);
    if (delegate) TfLiteGlesDelegateDelete(delegate);
    if (options) TfLiteInterpreterOptionsDelete(options);
    if (model) TfLiteModelDelete(model);
    for (GLuint program : programs) glDeleteProgram(program);
    if (!textures.empty()) glDeleteTextures(static_cast<GLsizei>(textures.size()), textures.data());
  }
};

bool Run(const char* model_path, const char* photo_path, const char* out_path, bool fp16,
         int frames) {
  int width = 0, height = 0, channels = 0;
  unsigned char* decoded = stbi_load(photo_path, &width, &height, &channels, 4);
  if (decoded == nullptr) {
    std::fprintf(stderr, "cannot decode %s: %s\n", photo_path, stbi_failure_reason());
    return false;
  }
  std::vector<unsigned char> photo_pixels(decoded, decoded + width * height * 4);
  stbi_image_free(decoded);
  Pipeline p;
  // The application's context is current before the delegate is applied
  // (TfLiteInterpreterCreate): the delegate runs in it, and the textures
  // below are names it can use.
  TfLiteGlesDelegateOptions delegate_options = TfLiteGlesDelegateOptionsDefault();
  delegate_options.is_precision_loss_allowed = fp16 ? 1 : 0;
  p.delegate = TfLiteGlesDelegateCreate(&delegate_options);
  p.model = TfLiteModelCreateFromFile(model_path);
  p.options = TfLiteInterpreterOptionsCreate();
  if (!p.delegate || !p.model || !p.options) return false;
  TfLiteInterpreterOptionsAddDelegate(p.options, p.delegate);
  p.interpreter = TfLiteInterpreterCreate(p.model, p.options);
  if (!p.interpreter || TfLiteInterpreterAllocateTensors(p.interpreter) != kTfLiteOk) {
    std::fprintf(stderr, "cannot make the interpreter\n");
    return false;
  }
  TfLiteTensor* input = TfLiteInterpreterGetInputTensor(p.interpreter, 0);
  const TfLiteTensor* output = TfLiteInterpreterGetOutputTensor(p.interpreter, 0);
  const int model_h = TfLiteTensorDim(input, 1), model_w = TfLiteTensorDim(input, 2);
  GLuint photo = 0, model_input = 0, mask = 0, result = 0, resize = 0, composite = 0;
  if (!MakeTexture(width, height, photo_pixels.data(), &photo) ||
      !MakeTexture(model_w, model_h, nullptr, &model_input) ||
      !MakeTexture(model_w, model_h, nullptr, &mask) ||
      !MakeTexture(width, height, nullptr, &result)) {
    return false;
  }
  p.textures = {photo, model_input, mask, result};
  if (!MakeProgram(TFLITE_GLES_PIPELINE_SHADER, "RESIZE", &resize) ||
      !MakeProgram(TFLITE_GLES_PIPELINE_SHADER, "COMPOSITE", &composite)) {
    return false;
  }
  p.programs = {resize, composite};
  // Selfie segmentation takes RGB in [0, 1], which RGBA8 texels read as.
  // The mask stays on the GPU: without NO_HOST_COPY the interpreter (which
  // the C API cannot tell to allow buffer-handle outputs) would copy it to
  // the CPU after every Invoke as well.
  TfLiteGlesTextureBinding binding = TfLiteGlesTextureBindingDefault();
  const int input_index = TfLiteGlesDelegateTensorIndex(p.delegate, input);
  const int output_index = TfLiteGlesDelegateTensorIndex(p.delegate, output);
  if (TfLiteGlesDelegateBindInputTexture(p.delegate, input_index, model_input, &binding) != 0 ||
      TfLiteGlesDelegateBindOutputTexture(p.delegate, output_index, mask, &binding,
                                          TFLITE_GLES_BIND_NO_HOST_COPY) != 0) {
    std::fprintf(stderr, "%s\n", TfLiteGlesDelegateLastError(p.delegate));
    return false;
  }
  std::vector<unsigned char> picture;
  double best_ms = 1e30;
  for (int frame = 0; frame < frames; ++frame) {  // a camera: a new frame each time
    const auto start = std::chrono::steady_clock::now();
    if (!RunPass(resize, model_input, model_w, model_h, {photo})) return false;
    if (TfLiteInterpreterInvoke(p.interpreter) != kTfLiteOk) {
      std::fprintf(stderr, "Invoke failed: %s\n", TfLiteGlesDelegateLastError(p.delegate));
      return false;
    }
    if (!RunPass(composite, result, width, height, {photo, mask}) ||
        !ReadTexture(result, width, height, &picture)) {  // the one readback
      return false;
    }
    const std::chrono::duration<double, std::milli> took =
        std::chrono::steady_clock::now() - start;
    best_ms = took.count() < best_ms ? took.count() : best_ms;
  }
  // Unbound before the textures and the interpreter go.
  TfLiteGlesDelegateUnbindTexture(p.delegate, input_index);
  TfLiteGlesDelegateUnbindTexture(p.delegate, output_index);
  if (!stbi_write_png(out_path, width, height, 4, picture.data(), width * 4)) {
    std::fprintf(stderr, "cannot write %s\n", out_path);
    return false;
  }
  std::printf("wrote %s: %dx%d, model %dx%d, best frame %.1f ms of %d\n", out_path, width,
              height, model_w, model_h, best_ms, frames);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s model.tflite photo.png out.png [--fp16] [--frames N]\n",
                 argv[0]);
    return 2;
  }
  bool fp16 = false;
  int frames = 1;
  for (int i = 4; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fp16") == 0) fp16 = true;
    if (std::strcmp(argv[i], "--frames") == 0 && i + 1 < argc) frames = std::atoi(argv[++i]);
  }
  Egl egl;
  if (!egl.Create()) return 1;
  return Run(argv[1], argv[2], argv[3], fp16, frames > 0 ? frames : 1) ? 0 : 1;
}
