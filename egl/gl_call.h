// Checked GL and EGL calls, kept in release builds.
//
// Every GL/EGL call in tflite-gles goes through TFG_GL / TFG_EGL so that a
// failure becomes a Status naming the call, the file and line, and the error
// in words. GL errors are sticky and can queue up, so the check drains
// glGetError() in a loop before and after the call.
#pragma once

#include <EGL/egl.h>
#include <GLES3/gl31.h>

#include <string>

#include "egl/status.h"

namespace tflite_gles::gl {

const char* GlErrorName(GLenum error);
const char* EglErrorName(EGLint error);

// Discards errors left by earlier code (for example the application's), so
// they are not blamed on our next call.
void ClearGlErrors();

// Turns pending glGetError() codes into a Status naming `call`.
Status CheckGlErrors(const char* call, const char* file, int line);
// Turns eglGetError() into a Status naming `call`.
Status CheckEglError(const char* call, const char* file, int line);

}  // namespace tflite_gles::gl

// Runs a GL statement and returns a Status error from the enclosing function
// if it raised any GL error.
#define TFG_GL(call)                                                        \
  do {                                                                      \
    ::tflite_gles::gl::ClearGlErrors();                                     \
    call;                                                                   \
    TFG_RETURN_IF_ERROR(                                                    \
        ::tflite_gles::gl::CheckGlErrors(#call, __FILE__, __LINE__));       \
  } while (0)

// Runs an EGL call returning EGLBoolean and returns a Status error from the
// enclosing function if it returned EGL_FALSE.
#define TFG_EGL(call)                                                        \
  do {                                                                       \
    if ((call) != EGL_TRUE)                                                  \
      return ::tflite_gles::gl::CheckEglError(#call, __FILE__, __LINE__);    \
  } while (0)
