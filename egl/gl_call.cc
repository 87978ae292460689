#include "egl/gl_call.h"

#include <cstdio>

namespace tflite_gles::gl {

const char* GlErrorName(GLenum error) {
  switch (error) {
    case GL_NO_ERROR: return "GL_NO_ERROR";
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM (an enum argument is out of range)";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE (a numeric argument is out of range)";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION (not allowed in the current state)";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY (the driver could not allocate memory)";
    default: return "unknown GL error";
  }
}

const char* EglErrorName(EGLint error) {
  switch (error) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED (display not initialized)";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS (resource in use by another thread)";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC (out of resources)";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE (unknown attribute or value)";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT (not a valid context)";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG (not a valid config)";
    case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY (not a valid display)";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH (arguments inconsistent)";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
    case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
    case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST (power event; recreate the context)";
    default: return "unknown EGL error";
  }
}

void ClearGlErrors() {
  // Bounded: a lost context can report errors forever.
  for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) {
  }
}

Status CheckGlErrors(const char* call, const char* file, int line) {
  std::string errors;
  for (int i = 0; i < 16; ++i) {
    GLenum error = glGetError();
    if (error == GL_NO_ERROR) break;
    if (!errors.empty()) errors += ", ";
    errors += GlErrorName(error);
  }
  if (errors.empty()) return Status::Ok();
  char where[256];
  std::snprintf(where, sizeof(where), "%s at %s:%d", call, file, line);
  return Status::Error(std::string(where) + " failed: " + errors);
}

Status CheckEglError(const char* call, const char* file, int line) {
  EGLint error = eglGetError();
  char where[256];
  std::snprintf(where, sizeof(where), "%s at %s:%d", call, file, line);
  return Status::Error(std::string(where) + " failed: " + EglErrorName(error));
}

}  // namespace tflite_gles::gl
