// RAII owners for the GL objects the delegate uses: buffers, texture-buffer
// views of them, compute programs and timer queries.
//
// Every object is created through a factory returning StatusOr, so a failed
// allocation (GL_OUT_OF_MEMORY, a size beyond the device's limits) is a message,
// never a half-made object. Each object remembers the EGLContext it was made
// in, and its destructor deletes it only while that context is current:
// deleting a name with another context current would destroy that context's
// object of the same name. Objects outlived by no current context are freed
// with their context. "That context" is checked beyond its handle while a
// ScopedTeardown runs (egl/context_identity.h): a destroyed context's handle
// can come back for a new one.
#pragma once

#include <EGL/egl.h>
#include <GLES3/gl31.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "egl/status.h"

namespace tflite_gles::gl {

// A GL buffer object: storage for tensors (written as SSBO, read as SSBO or
// through a texture-buffer view), constants and staging data.
class Buffer {
 public:
  Buffer() = default;
  // Allocates `bytes` of GPU storage; `initial` may be null.
  static StatusOr<Buffer> Create(size_t bytes, const void* initial,
                                 GLenum usage = GL_STATIC_DRAW);
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { Reset(); }

  // Allocates `bytes` of immutable storage (GL_EXT_buffer_storage; the
  // caller checks the extension) mapped once for writing, persistently and
  // coherently: Upload is then a memcpy into memory the GPU reads directly,
  // with no driver call (MobileNet's 602 KB input on an H200: 33 -> 23 us of
  // CPU time against glBufferSubData; docs/perf/log.md "Lead, session 3").
  // The caller must not write while the GPU may still read earlier contents.
  // Its bytes start as zeros (direct uploads rely on PHWC4's padded lanes
  // staying zero: the CPU writes only the elements).
  static StatusOr<Buffer> CreateMappedForWrite(size_t bytes);
  // The same for reading back (MAP_READ, persistent, coherent): Download is
  // a memcpy. Shader writes become visible to it only after
  // glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT) and a fence the
  // caller waits for.
  static StatusOr<Buffer> CreateMappedForRead(size_t bytes);
  // Mapped for both (zeroed): staging that is also a TFLite tensor's memory
  // (DeviceProfile::alias_model_io), which TFLite's side reads and writes.
  static StatusOr<Buffer> CreateMappedReadWrite(size_t bytes);

  GLuint id() const { return id_; }
  size_t bytes() const { return bytes_; }
  bool mapped_for_write() const { return mapped_ != nullptr && mapped_write_; }
  bool mapped_for_read() const { return mapped_ != nullptr && mapped_read_; }
  // The persistent mapping (CreateMappedFor*), null otherwise: callers that
  // convert while copying write or read it directly.
  void* mapped() const { return mapped_; }
  Status Upload(size_t offset, size_t bytes, const void* data) const;
  // Copies `bytes` from the buffer into `out` through a mapped range.
  Status Download(size_t offset, size_t bytes, void* out) const;
  Status BindAsStorage(GLuint binding, size_t offset, size_t bytes) const;
  // Binds [offset, offset + bytes) as the uniform block at `binding`.
  Status BindAsUniforms(GLuint binding, size_t offset, size_t bytes) const;

  // Live buffers owned through this class in the process (leak checks).
  static long LiveCount();

 private:
  static StatusOr<Buffer> CreateMapped(size_t bytes, bool read, bool write);
  // Both factories' first steps: refuses sizes no GPU has (or above the
  // test hook's limit; `kind` names the buffer in the message), then
  // generates the buffer and binds it to GL_SHADER_STORAGE_BUFFER.
  Status GenerateAndBind(size_t bytes, const char* kind);
  void Reset();
  GLuint id_ = 0;
  size_t bytes_ = 0;
  void* mapped_ = nullptr;  // CreateMappedFor*'s persistent mapping
  bool mapped_read_ = false;   // mapped with GL_MAP_READ_BIT
  bool mapped_write_ = false;  // mapped with GL_MAP_WRITE_BIT
  EGLContext context_ = EGL_NO_CONTEXT;
};

// A glFenceSync after the commands issued so far; Wait blocks until the GPU
// has finished them. Deleted with the object.
class Fence {
 public:
  Fence() = default;
  static StatusOr<Fence> Create();
  Fence(Fence&& other) noexcept { *this = std::move(other); }
  Fence& operator=(Fence&& other) noexcept;
  Fence(const Fence&) = delete;
  Fence& operator=(const Fence&) = delete;
  ~Fence() { Reset(); }

  bool pending() const { return sync_ != nullptr; }
  // Waits (flushing the commands first) and releases the fence. `spin`:
  // polls with a zero timeout instead of sleeping in the driver (for the
  // readback wait, where a wake-up late by some microseconds is lost time).
  Status Wait(bool spin = false);

 private:
  void Reset();
  GLsync sync_ = nullptr;
  EGLContext context_ = EGL_NO_CONTEXT;
};

// A GL_TEXTURE_BUFFER view of a range of a Buffer, so shaders can read it
// with texelFetch on a samplerBuffer (15-20x cheaper than SSBO loads on
// llvmpipe, see docs/design.md).
class TextureBufferView {
 public:
  TextureBufferView() = default;
  // `format` is GL_RGBA32F, GL_RGBA16F or GL_R32F.
  static StatusOr<TextureBufferView> Create(const Buffer& buffer, GLenum format,
                                            size_t offset, size_t bytes);
  // The same over a buffer this class does not own (an application's,
  // bound to a tensor: delegate/runtime/gpu_binding.h).
  static StatusOr<TextureBufferView> CreateForName(GLuint buffer, GLenum format,
                                                   size_t offset, size_t bytes);
  TextureBufferView(TextureBufferView&& other) noexcept {
    *this = std::move(other);
  }
  TextureBufferView& operator=(TextureBufferView&& other) noexcept;
  TextureBufferView(const TextureBufferView&) = delete;
  TextureBufferView& operator=(const TextureBufferView&) = delete;
  ~TextureBufferView() { Reset(); }

  GLuint id() const { return id_; }
  Status Bind(GLuint unit) const;

 private:
  void Reset();
  GLuint id_ = 0;
  EGLContext context_ = EGL_NO_CONTEXT;
};

// A linked compute program.
class Program {
 public:
  Program() = default;
  // Compiles and links `source`. On failure the message carries the driver's
  // info log and the line-numbered source, so the broken line can be found.
  // `retrievable`: the program's binary will be read back with Binary()
  // (GL_PROGRAM_BINARY_RETRIEVABLE_HINT, set before linking).
  static StatusOr<Program> CreateCompute(const std::string& source,
                                         bool retrievable = false);
  // Recreates a program from a binary that Binary() returned earlier. Fails
  // (never returns an unlinked program) when the driver refuses it: another
  // driver or version, a format it no longer takes, damaged bytes.
  static StatusOr<Program> CreateFromBinary(GLenum format, const uint8_t* data,
                                            size_t bytes);
  // The driver's binary of this linked program (glGetProgramBinary).
  Status Binary(GLenum* format, std::vector<uint8_t>* data) const;
  Program(Program&& other) noexcept { *this = std::move(other); }
  Program& operator=(Program&& other) noexcept;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() { Reset(); }

  GLuint id() const { return id_; }
  Status Dispatch(GLuint groups_x, GLuint groups_y, GLuint groups_z) const;

 private:
  void Reset();
  GLuint id_ = 0;
  EGLContext context_ = EGL_NO_CONTEXT;
};

// `source` with each line prefixed by its number, for error messages.
std::string NumberLines(const std::string& source);

// The program binary formats the driver offers (GL_PROGRAM_BINARY_FORMATS);
// empty where it offers none and program binaries cannot be used.
StatusOr<std::vector<GLenum>> ProgramBinaryFormats();

}  // namespace tflite_gles::gl
