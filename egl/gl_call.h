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

// Batched checking for hot loops (an invoke's dispatches): while a
// DeferredGlChecks is alive on this thread, TFG_GL runs its call without the
// glGetError round trips, and Finish() then turns whatever GL error the
// batch raised into one Status naming the batch. GL error flags are sticky,
// so no error of the batch is lost; only the exact call is not named (the
// caller may rerun the batch with immediate checks to find it).
class DeferredGlChecks {
 public:
  DeferredGlChecks();
  ~DeferredGlChecks();
  DeferredGlChecks(const DeferredGlChecks&) = delete;
  DeferredGlChecks& operator=(const DeferredGlChecks&) = delete;
  // Ends the deferral and checks the batch's errors.
  Status Finish(const char* batch);
  static bool Active();

 private:
  bool finished_ = false;
};

}  // namespace tflite_gles::gl

// Runs a GL statement and returns a Status error from the enclosing function
// if it raised any GL error (or, inside a DeferredGlChecks, leaves the check
// to its Finish()).
#define TFG_GL(call)                                                        \
  do {                                                                      \
    if (::tflite_gles::gl::DeferredGlChecks::Active()) {                    \
      call;                                                                 \
      break;                                                                \
    }                                                                       \
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
