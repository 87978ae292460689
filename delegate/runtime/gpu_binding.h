// GPU-side inputs and outputs of a partition (issue 16): a partition input
// fed by something already on the GPU instead of the host upload, a
// partition output consumed on the GPU instead of the readback.
//
// A binding names, for one TFLite tensor index, a float32 GL buffer in one of
// two layouts (GpuLayout) and, optionally, who fills or reads that buffer:
//  - an application's buffer (GpuBinding::buffer != 0, no producer/sink):
//    the buffer itself is read by the first dispatches / written by the last
//    (TfLiteGlesDelegateBindBuffer, delegate/gpu_io.cc);
//  - a producer (inputs) or sink (outputs) with buffer == 0: the runtime
//    allocates a buffer of the layout's size and calls Produce(buffer) at
//    every invoke before the first dispatch, or Consume(buffer) after the
//    last one. The runtime then treats that buffer exactly as it treats an
//    application's.
// What the runtime does with the buffer (PartitionRuntime::BindGpu,
// runtime_gpu_io.cc): where the delegate's own buffer at that point has the
// same layout and element type, the external buffer takes its place (no
// dispatch at all: the upload conversion, or the kernel that fuses it, reads
// the application's BHWC floats straight away; the readback conversion
// writes them); otherwise one gpu_io.comp dispatch converts, and a PHWC4
// binding replaces the layout conversion it makes unnecessary.
// A bound input skips the host upload (the TFLite tensor's bytes are not
// read); a bound output skips the readback (the TFLite tensor is not
// written; the delegate marks it stale, see delegate/gpu_io.cc).
//
// Textures (texture_io.h) are a producer or sink that also offers
// GpuTextureAccess: the runtime's own dispatches then read or write the
// texture in place (runtime_texture_io.cc: the first convolution samples an
// input texture, or one dispatch writes the PHWC4 tensor from it in place of
// the upload conversion; one dispatch writes an output texture from the
// PHWC4 tensor in place of the readback conversion), and Produce / Consume
// through a BHWC float buffer are the fallback where no such dispatch fits.
// Producers and sinks run with the delegate's context current, may compile
// programs through the ProgramCache they are given, bind what they need and
// dispatch; the runtime places the memory barriers before and after them
// and restores nothing on their behalf (the runtime binds every buffer it
// uses before each of its own dispatches).
#pragma once

#include <GLES3/gl31.h>

#include <cstddef>
#include <memory>
#include <string>

#include "delegate/graph/graph.h"
#include "egl/status.h"

namespace tflite_gles {

class ProgramCache;
namespace gl {
class Program;
}  // namespace gl

// A texture the runtime's dispatches read or write themselves. The shaders
// that do (conv2d.comp TEXTURE_INPUT, texture_io.comp TEXTURE_TO_TENSOR /
// TENSOR_TO_TEXTURE) take the binding's scale, offset and channel choice as
// plain uniforms at kTextureScaleLocation and the two locations after it.
constexpr int kTextureScaleLocation = 0;
class GpuTextureAccess {
 public:
  virtual ~GpuTextureAccess() = default;
  // At every invoke, before the first dispatch that uses it: the texture is
  // still what was bound (not deleted, nor reallocated to another size, or
  // to another format for outputs).
  virtual Status Check() = 0;
  // The texture's internal format (an output's image format in shaders).
  virtual GLenum internal_format() const = 0;
  // Binds it for `program` (texture unit `unit` with a NEAREST sampler for
  // inputs, image unit `unit` for outputs) and sets the uniforms; Unbind
  // leaves the unit as the application expects it (no sampler, nothing).
  virtual Status Bind(const gl::Program& program, GLuint unit) = 0;
  virtual Status Unbind(GLuint unit) = 0;
};

// How a float32 GL buffer lays out a tensor of shape B x H x W x C.
enum class GpuLayout : int {
  // TFLite's logical order, B*H*W*C floats (quantized tensors: the float
  // view, real = scale * (q - zero_point)).
  kBhwcFloat32 = 0,
  // The delegate's: B x ceil(C/4) x H x W vec4s (slice-major), 16 bytes
  // each; padded lanes of the last slice are ignored on input and written
  // as zero on output (so only C % 4 == 0 tensors in fp32 storage are
  // stored in the bound buffer itself; others get a gpu_io.comp dispatch).
  kPhwc4Float32 = 1,
};

const char* GpuLayoutName(GpuLayout layout);
// Bytes a buffer of `layout` holds for `shape`.
size_t GpuLayoutBytes(GpuLayout layout, const Shape4& shape);

// What a producer writes or a sink reads: a float32 buffer of `layout`.
struct GpuBufferRef {
  GLuint buffer = 0;
  size_t bytes = 0;
  GpuLayout layout = GpuLayout::kBhwcFloat32;
  Shape4 shape;
};

// Fills a bound partition input on the GPU at every invoke (e.g. from a
// texture). Produce runs before the partition's first dispatch, with the
// delegate's context current; it writes all of `target`.
class GpuProducer {
 public:
  virtual ~GpuProducer() = default;
  // For messages: "texture 7 (RGBA8, 256x256)".
  virtual std::string Describe() const = 0;
  virtual Status Produce(const GpuBufferRef& target, ProgramCache& programs) = 0;
  // Non-null where the runtime may read the source in place instead.
  virtual GpuTextureAccess* texture() { return nullptr; }
};

// Reads a bound partition output on the GPU at every invoke (e.g. into a
// texture). Consume runs after the partition's last dispatch.
class GpuSink {
 public:
  virtual ~GpuSink() = default;
  virtual std::string Describe() const = 0;
  virtual Status Consume(const GpuBufferRef& source, ProgramCache& programs) = 0;
  // Non-null where the runtime may write the target in place instead.
  virtual GpuTextureAccess* texture() { return nullptr; }
};

struct GpuBinding {
  GpuLayout layout = GpuLayout::kBhwcFloat32;
  // The application's buffer (its size checked by the caller), or 0 with a
  // producer (inputs) or sink (outputs).
  GLuint buffer = 0;
  size_t bytes = 0;
  std::shared_ptr<GpuProducer> producer;
  std::shared_ptr<GpuSink> sink;
  // Outputs: the interpreter may copy the tensor back through a buffer
  // handle (no TFLITE_GLES_BIND_NO_HOST_COPY), so a sink written in place
  // still gets a float32 buffer beside it, filled by the readback conversion.
  bool host_copy = false;

  std::string Describe() const;
};

}  // namespace tflite_gles
