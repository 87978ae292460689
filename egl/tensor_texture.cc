#include "egl/tensor_texture.h"

#include <algorithm>
#include <string>

#include "egl/context_identity.h"
#include "egl/gl_call.h"

namespace tflite_gles::gl {

StatusOr<TextureExtent> TensorTextureExtent(long long texels, int preferred_width,
                                            int max_size, int row_width) {
  if (texels <= 0) texels = 1;
  if (max_size <= 0) return Status::Error("GL_MAX_TEXTURE_SIZE is unknown");
  auto rows = [texels](long long width) { return (texels + width - 1) / width; };
  long long width = preferred_width;
  if (row_width > 0) {
    width = std::min<long long>(texels, row_width);
  } else if (width <= 0 || width > max_size || rows(width) > max_size) {
    // Wrapped at the widest row the device takes: the fewest rows.
    width = std::min<long long>(texels, max_size);
  }
  const long long height = rows(width);
  if (height > max_size) {
    return Status::Error(std::to_string(texels) + " texels do not fit a " +
                         std::to_string(max_size) + "x" + std::to_string(max_size) +
                         " texture (GL_MAX_TEXTURE_SIZE)");
  }
  return TextureExtent{static_cast<int>(width), static_cast<int>(height)};
}

StatusOr<TensorTexture> TensorTexture::Create(const TextureExtent& extent, bool fp16) {
  TensorTexture texture;
  texture.context_ = eglGetCurrentContext();
  texture.extent_ = extent;
  texture.fp16_ = fp16;
  TFG_GL(glGenTextures(1, &texture.id_));
  TFG_GL(glActiveTexture(GL_TEXTURE0));
  TFG_GL(glBindTexture(GL_TEXTURE_2D, texture.id_));
  ClearGlErrors();
  // Checked in a lambda so that a failure still unbinds and says which size.
  auto allocate = [&]() -> Status {
    TFG_GL(glTexStorage2D(GL_TEXTURE_2D, 1, fp16 ? GL_RGBA16F : GL_RGBA32F, extent.width,
                          extent.height));
    return Status::Ok();
  };
  Status status = allocate();
  if (!status.ok()) {
    glBindTexture(GL_TEXTURE_2D, 0);
    return status.WithContext("allocating a " + std::to_string(extent.width) + "x" +
                              std::to_string(extent.height) + " tensor texture");
  }
  TFG_GL(glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST));
  TFG_GL(glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST));
  TFG_GL(glBindTexture(GL_TEXTURE_2D, 0));
  return texture;
}

TensorTexture& TensorTexture::operator=(TensorTexture&& other) noexcept {
  if (this != &other) {
    Reset();
    id_ = other.id_;
    extent_ = other.extent_;
    fp16_ = other.fp16_;
    context_ = other.context_;
    other.id_ = 0;
  }
  return *this;
}

void TensorTexture::Reset() {
  if (id_ != 0) {
    if (MayDeleteIn(context_)) glDeleteTextures(1, &id_);
    id_ = 0;
  }
}

namespace {
// The unpack state glTexSubImage2D reads, set to tightly packed client
// memory for the guard's lifetime and restored after.
struct UnpackGuard {
  GLint saved[5] = {0, 0, 0, 0, 0};
  static constexpr GLenum kNames[5] = {GL_PIXEL_UNPACK_BUFFER_BINDING, GL_UNPACK_ROW_LENGTH,
                                       GL_UNPACK_SKIP_ROWS, GL_UNPACK_SKIP_PIXELS,
                                       GL_UNPACK_ALIGNMENT};
  Status Set() {
    for (int k = 0; k < 5; ++k) TFG_GL(glGetIntegerv(kNames[k], &saved[k]));
    TFG_GL(glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0));
    TFG_GL(glPixelStorei(GL_UNPACK_ROW_LENGTH, 0));
    TFG_GL(glPixelStorei(GL_UNPACK_SKIP_ROWS, 0));
    TFG_GL(glPixelStorei(GL_UNPACK_SKIP_PIXELS, 0));
    TFG_GL(glPixelStorei(GL_UNPACK_ALIGNMENT, 4));  // rows are multiples of 8 bytes
    return Status::Ok();
  }
  Status Restore() const {
    TFG_GL(glBindBuffer(GL_PIXEL_UNPACK_BUFFER, static_cast<GLuint>(saved[0])));
    TFG_GL(glPixelStorei(GL_UNPACK_ROW_LENGTH, saved[1]));
    TFG_GL(glPixelStorei(GL_UNPACK_SKIP_ROWS, saved[2]));
    TFG_GL(glPixelStorei(GL_UNPACK_SKIP_PIXELS, saved[3]));
    TFG_GL(glPixelStorei(GL_UNPACK_ALIGNMENT, saved[4]));
    return Status::Ok();
  }
};

Status WriteRows(const TextureExtent& extent, bool fp16, const void* data,
                 long long texels) {
  const GLenum type = fp16 ? GL_HALF_FLOAT : GL_FLOAT;
  const size_t texel_bytes = fp16 ? 8 : 16;
  const long long full_rows = texels / extent.width;
  const long long rest = texels - full_rows * extent.width;
  if (full_rows > 0) {
    TFG_GL(glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, extent.width,
                           static_cast<GLsizei>(full_rows), GL_RGBA, type, data));
  }
  if (rest > 0) {
    const auto* tail = static_cast<const unsigned char*>(data) +
                       static_cast<size_t>(full_rows * extent.width) * texel_bytes;
    TFG_GL(glTexSubImage2D(GL_TEXTURE_2D, 0, 0, static_cast<GLint>(full_rows),
                           static_cast<GLsizei>(rest), 1, GL_RGBA, type, tail));
  }
  return Status::Ok();
}
}  // namespace

Status TensorTexture::Upload(const void* data, long long texels) const {
  if (texels > extent_.texels()) {
    return Status::Error(std::to_string(texels) + " texels exceed a " +
                         std::to_string(extent_.width) + "x" +
                         std::to_string(extent_.height) + " tensor texture");
  }
  UnpackGuard guard;
  TFG_RETURN_IF_ERROR(guard.Set());
  TFG_GL(glActiveTexture(GL_TEXTURE0));
  TFG_GL(glBindTexture(GL_TEXTURE_2D, id_));
  Status written = WriteRows(extent_, fp16_, data, texels);
  glBindTexture(GL_TEXTURE_2D, 0);  // our own name, never fails
  TFG_RETURN_IF_ERROR(guard.Restore());
  return written;
}

Status TensorTexture::BindForRead(GLuint unit) const {
  TFG_GL(glActiveTexture(GL_TEXTURE0 + unit));
  TFG_GL(glBindTexture(GL_TEXTURE_2D, id_));
  TFG_GL(glBindSampler(unit, 0));
  return Status::Ok();
}

Status TensorTexture::BindForWrite(GLuint unit) const {
  TFG_GL(glBindImageTexture(unit, id_, 0, GL_FALSE, 0, GL_WRITE_ONLY,
                            fp16_ ? GL_RGBA16F : GL_RGBA32F));
  return Status::Ok();
}

}  // namespace tflite_gles::gl
