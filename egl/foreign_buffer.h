// GL buffer objects the delegate does not own (an application's, bound to a
// tensor: delegate/runtime/gpu_binding.h): checks and host copies, each with
// GL_COPY_READ_BUFFER / GL_COPY_WRITE_BUFFER bound only for the call.
#pragma once

#include <EGL/egl.h>
#include <GLES3/gl31.h>

#include <cstddef>

#include "egl/status.h"

namespace tflite_gles::gl {

// The calling thread's current EGLContext (EGL_NO_CONTEXT if none).
EGLContext CurrentContext();
// Whether `name` is a buffer object in the current context (false for a
// deleted name, one never bound, or one of a context sharing nothing).
bool IsBufferObject(GLuint name);
StatusOr<size_t> BufferObjectSize(GLuint name);
// Copies `bytes` from the start of buffer `name` into `out` (a map; waits
// for the GPU's writes), or from `data` into it.
Status ReadBufferObject(GLuint name, size_t bytes, void* out);
Status WriteBufferObject(GLuint name, size_t bytes, const void* data);

}  // namespace tflite_gles::gl
