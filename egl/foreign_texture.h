// 2D textures the delegate does not own (an application's, bound to an
// image input or output: delegate/runtime/texture_io.h): what they are,
// asked with GLES 3.1's own queries, and the sampler object that reads them.
#pragma once

#include <EGL/egl.h>
#include <GLES3/gl31.h>

#include <string>

#include "egl/status.h"

namespace tflite_gles::gl {

// What CheckTexture found.
struct TextureFacts {
  GLenum internal_format = 0;
  int width = 0;
  int height = 0;
  // Allocated with glTexStorage2D: its size and format are fixed for as
  // long as the name lives.
  bool immutable = false;
};

// OK when `texture` names a live 2D texture of the current context whose
// level 0 is `width` x `height` in RGBA8 (or unsized RGBA of bytes), RGBA16F
// or RGBA32F; an output texture must also be immutable (glTexStorage2D):
// GLES 3.1 binds only those to image units. `what` names the binding in
// messages ("input tensor 0 'image'"). Leaves texture unit 0's 2D binding
// as it found it.
StatusOr<TextureFacts> CheckTexture(GLuint texture, int width, int height,
                                    bool output, const std::string& what);
// OK while `texture` names a texture of the current context: all an
// immutable texture can lose after CheckTexture (one GL call, not ~12).
Status CheckTextureExists(GLuint texture, const std::string& what);

// "GL_RGBA8", "GL_RGBA16F", ... or the number in hex.
std::string TextureFormatName(GLenum internal_format);

// A sampler object (NEAREST, CLAMP_TO_EDGE) bound beside an input texture:
// a texture with level 0 only and GL's default minification filter
// (NEAREST_MIPMAP_LINEAR) is incomplete, and texelFetch on it returns
// (0, 0, 0, 1); the sampler's filter makes it complete whatever the
// application set. Deleted only while its context is current.
class Sampler {
 public:
  Sampler() = default;
  static StatusOr<Sampler> Create();
  Sampler(Sampler&& other) noexcept { *this = std::move(other); }
  Sampler& operator=(Sampler&& other) noexcept;
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;
  ~Sampler() { Reset(); }
  GLuint id() const { return id_; }

 private:
  void Reset();
  GLuint id_ = 0;
  EGLContext context_ = EGL_NO_CONTEXT;
};

}  // namespace tflite_gles::gl
