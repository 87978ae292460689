// 2D RGBA textures as tensor storage (the third storage of docs/design.md,
// "Tensor layout and storage"): a PHWC4 tensor's vec4s laid out row after
// row, texel (i % width, i / width) holding vec4 i, written with imageStore
// and read with texelFetch. The shaders' LOAD/STORE macros compute the same
// texel (egl/shader_source.cc): with a mask and a shift where every texture
// has rows of the same power of two (TEXTURE_ROW_SHIFT, the default), else
// from the texture's own width (tensor_texel). Either way any texture with
// enough texels can hold a tensor, whatever its shape.
#pragma once

#include <EGL/egl.h>
#include <GLES3/gl31.h>

#include <cstddef>

#include "egl/status.h"

namespace tflite_gles::gl {

struct TextureExtent {
  int width = 0;
  int height = 0;
  long long texels() const { return static_cast<long long>(width) * height; }
};

// The extent of a texture holding `texels` vec4s: rows of `preferred_width`
// (a tensor's W, so that a tensor of up to 4 channels is an RGBA image of
// its own size, as camera textures are; B*S*H rows) when that fits
// `max_size` (GL_MAX_TEXTURE_SIZE) both ways, else rows as wide as
// `max_size` allows (or `texels`, if fewer). An error when even that
// exceeds `max_size` rows: such a tensor needs buffer storage. (The
// shaders' tensor_texel is exact for every row below 2^21, so the rows
// limit is the only one.)
// `row_width` > 0 (a power of two, <= max_size): rows of exactly that many
// texels whatever `preferred_width` (one row of `texels` if fewer), as
// shaders compiled with TEXTURE_ROW_SHIFT address them.
StatusOr<TextureExtent> TensorTextureExtent(long long texels, int preferred_width,
                                            int max_size, int row_width = 0);

// An immutable RGBA32F (or RGBA16F, `fp16`) 2D texture of one level, with
// NEAREST filters (RGBA32F is not filterable: with GL's default minifying
// filter it would be incomplete, and texelFetch would read zeros).
class TensorTexture {
 public:
  TensorTexture() = default;
  static StatusOr<TensorTexture> Create(const TextureExtent& extent, bool fp16);
  TensorTexture(TensorTexture&& other) noexcept { *this = std::move(other); }
  TensorTexture& operator=(TensorTexture&& other) noexcept;
  TensorTexture(const TensorTexture&) = delete;
  TensorTexture& operator=(const TensorTexture&) = delete;
  ~TensorTexture() { Reset(); }

  GLuint id() const { return id_; }
  const TextureExtent& extent() const { return extent_; }
  bool fp16() const { return fp16_; }
  size_t bytes() const {
    return static_cast<size_t>(extent_.texels()) * (fp16_ ? 8 : 16);
  }
  // Writes texels [0, texels) from `data` (vec4 floats, or 4 halves each
  // where fp16): whole rows, then the start of the next. Saves and restores
  // the unpack state an application may have set (a bound pixel unpack
  // buffer would turn `data` into an offset).
  Status Upload(const void* data, long long texels) const;
  // The texture on texture unit `unit` (a sampler2D), with no sampler
  // object there (one with a mipmap filter would make it incomplete).
  Status BindForRead(GLuint unit) const;
  // The texture on image unit `unit`, write-only (an image2D with the
  // rgba32f / rgba16f format qualifier).
  Status BindForWrite(GLuint unit) const;

 private:
  void Reset();
  GLuint id_ = 0;
  TextureExtent extent_;
  bool fp16_ = false;
  EGLContext context_ = EGL_NO_CONTEXT;
};

}  // namespace tflite_gles::gl
