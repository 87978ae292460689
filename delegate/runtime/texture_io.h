// An application's 2D textures as a partition's image inputs and outputs
// (docs/gpu_io.md, "Textures"): what a texture must be to bind, checked
// with GLES 3.1's own queries, and the producer / sink of a GPU binding
// (delegate/runtime/gpu_binding.h) that moves it with shaders/texture_io.comp
// to or from the binding's float32 BHWC buffer. The runtime does the rest
// (that buffer stands in for the upload staging or readback staging, or one
// conversion dispatch moves it; runtime_gpu_io.cc).
#pragma once

#include <EGL/egl.h>
#include <GLES3/gl31.h>

#include <memory>
#include <string>

#include "delegate/runtime/gpu_binding.h"
#include "egl/gl_objects.h"
#include "egl/status.h"

namespace tflite_gles {

// How a bound texture's texels map to tensor values. Inputs: tensor channel
// c = texel[channels[c]] * scale[c] + offset[c], with the texel as texelFetch
// returns it (RGBA8: byte / 255, so [0, 1]; RGBA16F/32F: as stored).
// Outputs: texel lane c = tensor channel c * scale[c] + offset[c].
struct TextureParams {
  GLuint texture = 0;
  float scale[4] = {1, 1, 1, 1};
  float offset[4] = {0, 0, 0, 0};
  int channels[4] = {0, 1, 2, 3};  // inputs only: 0 = R ... 3 = A
};

// What CheckTexture found.
struct TextureFacts {
  GLenum internal_format = 0;
  int width = 0;
  int height = 0;
};

// OK when `texture` names a live 2D texture of the current context whose
// level 0 is `width` x `height` in RGBA8 (or unsized RGBA of bytes), RGBA16F
// or RGBA32F; an output texture must also be immutable (glTexStorage2D):
// GLES 3.1 binds only those to image units. `what` names the binding in
// messages ("input tensor 0 'image'"). Leaves texture unit 0's 2D binding
// as it found it.
StatusOr<TextureFacts> CheckTexture(GLuint texture, int width, int height,
                                    bool output, const std::string& what);

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

// A bound input texture: Produce writes the binding's BHWC floats from it.
// A bound output texture: Consume writes it from the binding's BHWC floats.
// `what` names the tensor in messages. Both check the texture again at
// every invoke (deleted, or reallocated to another size or format: the
// invoke fails with the reason) and leave no sampler, texture or image
// bound where it would change the application's own drawing. Programs are
// compiled at creation, through `programs` (the delegate's cache, which
// outlives the binding).
StatusOr<std::shared_ptr<GpuProducer>> MakeTextureProducer(const TextureParams& params,
                                                           const Shape4& shape,
                                                           const std::string& what,
                                                           ProgramCache& programs);
StatusOr<std::shared_ptr<GpuSink>> MakeTextureSink(const TextureParams& params,
                                                   const Shape4& shape,
                                                   const std::string& what,
                                                   ProgramCache& programs);

}  // namespace tflite_gles
