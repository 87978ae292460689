#include "egl/foreign_buffer.h"

#include <cstring>

#include "egl/gl_call.h"

namespace tflite_gles::gl {

EGLContext CurrentContext() { return eglGetCurrentContext(); }

bool IsBufferObject(GLuint name) {
  // A pure query: no error for any name (0 and unknown names answer false).
  return glIsBuffer(name) == GL_TRUE;
}

StatusOr<size_t> BufferObjectSize(GLuint name) {
  GLint64 size = 0;
  TFG_GL(glBindBuffer(GL_COPY_READ_BUFFER, name));
  auto query = [&]() -> Status {
    TFG_GL(glGetBufferParameteri64v(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, &size));
    return Status::Ok();
  };
  Status status = query();
  glBindBuffer(GL_COPY_READ_BUFFER, 0);
  TFG_RETURN_IF_ERROR(status);
  return static_cast<size_t>(size);
}

Status ReadBufferObject(GLuint name, size_t bytes, void* out) {
  TFG_GL(glBindBuffer(GL_COPY_READ_BUFFER, name));
  ClearGlErrors();
  void* mapped = glMapBufferRange(GL_COPY_READ_BUFFER, 0, static_cast<GLsizeiptr>(bytes),
                                  GL_MAP_READ_BIT);
  Status status = CheckGlErrors("glMapBufferRange", __FILE__, __LINE__);
  if (status.ok() && mapped == nullptr) {
    status = Status::Error("glMapBufferRange of buffer " + std::to_string(name) +
                           " returned null");
  }
  if (mapped != nullptr) {
    std::memcpy(out, mapped, bytes);
    // GL_FALSE: the contents were lost while mapped (a display mode change
    // on some platforms); what was copied cannot be trusted.
    if (glUnmapBuffer(GL_COPY_READ_BUFFER) != GL_TRUE && status.ok()) {
      status = Status::Error("the contents of buffer " + std::to_string(name) +
                             " were lost while mapped (glUnmapBuffer)");
    }
  }
  glBindBuffer(GL_COPY_READ_BUFFER, 0);
  return status;
}

Status WriteBufferObject(GLuint name, size_t bytes, const void* data) {
  TFG_GL(glBindBuffer(GL_COPY_WRITE_BUFFER, name));
  auto write = [&]() -> Status {
    TFG_GL(glBufferSubData(GL_COPY_WRITE_BUFFER, 0, static_cast<GLsizeiptr>(bytes), data));
    return Status::Ok();
  };
  Status status = write();
  glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
  return status;
}

}  // namespace tflite_gles::gl
