// An application's 2D textures as a partition's image inputs and outputs
// (docs/gpu_io.md, "Textures"): the producer / sink of a GPU binding
// (delegate/runtime/gpu_binding.h). Both offer GpuTextureAccess, so the
// runtime's own dispatches read or write the texture in place
// (runtime_texture_io.cc); their Produce / Consume, which move it with
// shaders/texture_io.comp to or from a float32 BHWC buffer, are the fallback.
// What a texture must be is egl/foreign_texture.h's CheckTexture.
#pragma once

#include <GLES3/gl31.h>

#include <memory>
#include <string>

#include "delegate/runtime/gpu_binding.h"
#include "egl/foreign_texture.h"
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


// A bound input texture: read in place (GpuTextureAccess), or Produce writes
// the binding's BHWC floats from it. A bound output texture: written in
// place, or Consume writes it from the binding's BHWC floats. `what` names
// the tensor in messages. Both check the texture again at every invoke
// (deleted, or reallocated to another size or format: the invoke fails with
// the reason) and leave no sampler, texture or image bound where it would
// change the application's own drawing. The fallback's program is compiled
// at its first use, through the cache Produce / Consume are given.
StatusOr<std::shared_ptr<GpuProducer>> MakeTextureProducer(const TextureParams& params,
                                                           const Shape4& shape,
                                                           const std::string& what,
                                                           ProgramCache& programs);
StatusOr<std::shared_ptr<GpuSink>> MakeTextureSink(const TextureParams& params,
                                                   const Shape4& shape,
                                                   const std::string& what,
                                                   ProgramCache& programs);

}  // namespace tflite_gles
