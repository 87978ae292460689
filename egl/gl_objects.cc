#include "egl/gl_objects.h"

#include <GLES2/gl2ext.h>
#include <GLES3/gl32.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "egl/context_identity.h"
#include "egl/gl_call.h"

namespace tflite_gles::gl {
namespace {
std::atomic<long> g_live_buffers{0};

// Test hook: TFLITE_GLES_TEST_MAX_BUFFER_BYTES=N makes every buffer larger
// than N bytes fail the way GL_OUT_OF_MEMORY does. Drivers rarely report
// out-of-memory on demand (llvmpipe overcommits host memory), and the
// failure path of Prepare must be testable on every GPU. 0 when unset.
size_t TestBufferLimit() {
  const char* text = std::getenv("TFLITE_GLES_TEST_MAX_BUFFER_BYTES");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const unsigned long long limit = std::strtoull(text, &end, 10);
  return *end == '\0' ? static_cast<size_t>(limit) : 0;
}

// Deletes a shader object on every return path of CreateCompute.
struct ShaderGuard {
  GLuint id = 0;
  ~ShaderGuard() {
    if (id != 0) glDeleteShader(id);  // cleanup: nothing to report to
  }
};
}  // namespace

Status Buffer::GenerateAndBind(size_t bytes, const char* kind) {
  // Some drivers (NVIDIA's) accept any size and reserve lazily, failing
  // only later, mid-dispatch; a size no GPU has is refused here, up front.
  constexpr size_t kMaxBufferBytes = size_t{1} << 40;  // 1 TiB
  if (bytes > kMaxBufferBytes) {
    return Status::Error("buffer of " + std::to_string(bytes) +
                         " bytes is beyond any GPU's memory (limit " +
                         std::to_string(kMaxBufferBytes) + " bytes)");
  }
  const size_t test_limit = TestBufferLimit();
  if (test_limit != 0 && bytes > test_limit) {
    return Status::Error(
        std::string("allocating a ") + kind + " of " + std::to_string(bytes) +
        " bytes: GL_OUT_OF_MEMORY (simulated: above "
        "TFLITE_GLES_TEST_MAX_BUFFER_BYTES=" + std::to_string(test_limit) + ")");
  }
  context_ = eglGetCurrentContext();
  TFG_GL(glGenBuffers(1, &id_));
  ++g_live_buffers;
  bytes_ = bytes;
  TFG_GL(glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_));
  return Status::Ok();
}

StatusOr<Buffer> Buffer::Create(size_t bytes, const void* initial,
                                GLenum usage) {
  if (bytes == 0) bytes = 16;  // GL rejects empty data stores for binding.
  Buffer buffer;
  TFG_RETURN_IF_ERROR(buffer.GenerateAndBind(bytes, "GPU buffer"));
  gl::ClearGlErrors();
  glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(bytes),
               initial, usage);
  Status status = CheckGlErrors("glBufferData", __FILE__, __LINE__);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  if (!status.ok()) {
    return status.WithContext("allocating a GPU buffer of " +
                              std::to_string(bytes) + " bytes");
  }
  return buffer;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Reset();
    id_ = other.id_;
    bytes_ = other.bytes_;
    mapped_ = other.mapped_;
    mapped_read_ = other.mapped_read_;
    mapped_write_ = other.mapped_write_;
    context_ = other.context_;
    other.id_ = 0;
    other.bytes_ = 0;
    other.mapped_ = nullptr;
  }
  return *this;
}

void Buffer::Reset() {
  if (id_ != 0) {
    // Deleting a mapped buffer unmaps it (ES 3.2, 6.3.1).
    if (MayDeleteIn(context_)) glDeleteBuffers(1, &id_);
    --g_live_buffers;
    id_ = 0;
    mapped_ = nullptr;
    mapped_read_ = false;
    mapped_write_ = false;
  }
}

StatusOr<Buffer> Buffer::CreateMappedForWrite(size_t bytes) {
  TFG_ASSIGN_OR_RETURN(Buffer buffer, CreateMapped(bytes, /*read=*/false, /*write=*/true));
  std::memset(buffer.mapped_, 0, buffer.bytes_);
  return buffer;
}

StatusOr<Buffer> Buffer::CreateMappedForRead(size_t bytes) {
  return CreateMapped(bytes, /*read=*/true, /*write=*/false);
}

StatusOr<Buffer> Buffer::CreateMappedReadWrite(size_t bytes) {
  TFG_ASSIGN_OR_RETURN(Buffer buffer, CreateMapped(bytes, /*read=*/true, /*write=*/true));
  std::memset(buffer.mapped_, 0, buffer.bytes_);
  return buffer;
}

StatusOr<Buffer> Buffer::CreateMapped(size_t bytes, bool read, bool write) {
  if (bytes == 0) bytes = 16;
  // Not exported by GLES libraries: from eglGetProcAddress, once.
  static const auto buffer_storage = reinterpret_cast<PFNGLBUFFERSTORAGEEXTPROC>(
      eglGetProcAddress("glBufferStorageEXT"));
  if (buffer_storage == nullptr) {
    return Status::Error("eglGetProcAddress gave no glBufferStorageEXT");
  }
  Buffer buffer;
  TFG_RETURN_IF_ERROR(buffer.GenerateAndBind(bytes, "mapped GPU buffer"));
  buffer.mapped_read_ = read;
  buffer.mapped_write_ = write;
  const GLbitfield flags = (read ? GL_MAP_READ_BIT : 0) | (write ? GL_MAP_WRITE_BIT : 0) |
                           GL_MAP_PERSISTENT_BIT_EXT | GL_MAP_COHERENT_BIT_EXT;
  gl::ClearGlErrors();
  buffer_storage(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(bytes), nullptr,
                 flags);
  Status status = CheckGlErrors("glBufferStorageEXT", __FILE__, __LINE__);
  if (status.ok()) {
    buffer.mapped_ = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0,
                                      static_cast<GLsizeiptr>(bytes), flags);
    status = CheckGlErrors("glMapBufferRange", __FILE__, __LINE__);
    if (status.ok() && buffer.mapped_ == nullptr) {
      status = Status::Error("glMapBufferRange returned null");
    }
  }
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  if (!status.ok()) {
    return status.WithContext("allocating a persistently mapped buffer of " +
                              std::to_string(bytes) + " bytes");
  }
  return buffer;
}

long Buffer::LiveCount() { return g_live_buffers.load(); }

Status Buffer::Upload(size_t offset, size_t bytes, const void* data) const {
  if (offset + bytes > bytes_) {
    return Status::Error("upload of " + std::to_string(bytes) +
                         " bytes at offset " + std::to_string(offset) +
                         " exceeds the buffer's " + std::to_string(bytes_));
  }
  if (mapped_ != nullptr && !mapped_write_) {
    return Status::Error("upload into a buffer mapped for reading");
  }
  if (mapped_ != nullptr) {
    // Coherent mapping: commands issued after this see the bytes.
    std::memcpy(static_cast<char*>(mapped_) + offset, data, bytes);
    return Status::Ok();
  }
  TFG_GL(glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_));
  TFG_GL(glBufferSubData(GL_SHADER_STORAGE_BUFFER,
                         static_cast<GLintptr>(offset),
                         static_cast<GLsizeiptr>(bytes), data));
  return Status::Ok();
}

Status Buffer::Download(size_t offset, size_t bytes, void* out) const {
  if (offset + bytes > bytes_) {
    return Status::Error("download of " + std::to_string(bytes) +
                         " bytes exceeds the buffer's " +
                         std::to_string(bytes_));
  }
  if (mapped_ != nullptr && mapped_read_) {
    // Persistent coherent read mapping: the caller waited for the fence
    // that follows the GPU's writes and their client-mapped barrier.
    std::memcpy(out, static_cast<const char*>(mapped_) + offset, bytes);
    return Status::Ok();
  }
  if (mapped_ != nullptr) return Status::Error("download from a buffer mapped for writing");
  TFG_GL(glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_));
  gl::ClearGlErrors();
  void* mapped = glMapBufferRange(GL_SHADER_STORAGE_BUFFER,
                                  static_cast<GLintptr>(offset),
                                  static_cast<GLsizeiptr>(bytes),
                                  GL_MAP_READ_BIT);
  if (mapped == nullptr) {
    Status status = CheckGlErrors("glMapBufferRange", __FILE__, __LINE__);
    return status.ok() ? Status::Error("glMapBufferRange returned null")
                       : status;
  }
  std::memcpy(out, mapped, bytes);
  if (glUnmapBuffer(GL_SHADER_STORAGE_BUFFER) != GL_TRUE) {
    return Status::Error(
        "glUnmapBuffer reported the buffer's contents corrupted");
  }
  return Status::Ok();
}

Status Buffer::BindAsStorage(GLuint binding, size_t offset,
                             size_t bytes) const {
  TFG_GL(glBindBufferRange(GL_SHADER_STORAGE_BUFFER, binding, id_,
                           static_cast<GLintptr>(offset),
                           static_cast<GLsizeiptr>(bytes)));
  return Status::Ok();
}

Status Buffer::BindAsUniforms(GLuint binding, size_t offset,
                              size_t bytes) const {
  TFG_GL(glBindBufferRange(GL_UNIFORM_BUFFER, binding, id_,
                           static_cast<GLintptr>(offset),
                           static_cast<GLsizeiptr>(bytes)));
  return Status::Ok();
}

StatusOr<TextureBufferView> TextureBufferView::Create(const Buffer& buffer,
                                                      GLenum format,
                                                      size_t offset,
                                                      size_t bytes) {
  return CreateForName(buffer.id(), format, offset, bytes);
}

StatusOr<TextureBufferView> TextureBufferView::CreateForName(GLuint buffer,
                                                             GLenum format,
                                                             size_t offset,
                                                             size_t bytes) {
  TextureBufferView view;
  view.context_ = eglGetCurrentContext();
  TFG_GL(glGenTextures(1, &view.id_));
  TFG_GL(glBindTexture(GL_TEXTURE_BUFFER, view.id_));
  TFG_GL(glTexBufferRange(GL_TEXTURE_BUFFER, format, buffer,
                          static_cast<GLintptr>(offset),
                          static_cast<GLsizeiptr>(bytes)));
  TFG_GL(glBindTexture(GL_TEXTURE_BUFFER, 0));
  return view;
}

TextureBufferView& TextureBufferView::operator=(
    TextureBufferView&& other) noexcept {
  if (this != &other) {
    Reset();
    id_ = other.id_;
    context_ = other.context_;
    other.id_ = 0;
  }
  return *this;
}

void TextureBufferView::Reset() {
  if (id_ != 0) {
    if (MayDeleteIn(context_)) glDeleteTextures(1, &id_);
    id_ = 0;
  }
}

Status TextureBufferView::Bind(GLuint unit) const {
  TFG_GL(glActiveTexture(GL_TEXTURE0 + unit));
  TFG_GL(glBindTexture(GL_TEXTURE_BUFFER, id_));
  return Status::Ok();
}

namespace {

// The info log of a shader or program (`get_iv`/`get_log` are the matching
// glGetShaderiv/glGetShaderInfoLog or glGetProgramiv/glGetProgramInfoLog).
StatusOr<std::string> InfoLog(GLuint id, void (*get_iv)(GLuint, GLenum, GLint*),
                              void (*get_log)(GLuint, GLsizei, GLsizei*, GLchar*)) {
  GLint length = 0;
  TFG_GL(get_iv(id, GL_INFO_LOG_LENGTH, &length));
  std::vector<char> log(static_cast<size_t>(length > 1 ? length : 1), '\0');
  TFG_GL(get_log(id, static_cast<GLsizei>(log.size()), nullptr, log.data()));
  return std::string(log.data());
}

}  // namespace

std::string NumberLines(const std::string& source) {
  std::istringstream lines(source);
  std::ostringstream out;
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    out << number << ": " << line << "\n";
  }
  return out.str();
}

StatusOr<Program> Program::CreateCompute(const std::string& source,
                                         bool retrievable) {
  ClearGlErrors();
  ShaderGuard shader;
  shader.id = glCreateShader(GL_COMPUTE_SHADER);
  if (shader.id == 0) {
    TFG_RETURN_IF_ERROR(CheckGlErrors("glCreateShader", __FILE__, __LINE__));
    return Status::Error("glCreateShader(GL_COMPUTE_SHADER) returned 0");
  }
  const char* text = source.c_str();
  TFG_GL(glShaderSource(shader.id, 1, &text, nullptr));
  TFG_GL(glCompileShader(shader.id));
  GLint compiled = GL_FALSE;
  TFG_GL(glGetShaderiv(shader.id, GL_COMPILE_STATUS, &compiled));
  if (compiled != GL_TRUE) {
    TFG_ASSIGN_OR_RETURN(std::string log,
                         InfoLog(shader.id, glGetShaderiv, glGetShaderInfoLog));
    return Status::Error("compute shader failed to compile:\n" + log +
                         "\nsource:\n" + NumberLines(source));
  }
  Program program;
  program.context_ = eglGetCurrentContext();
  program.id_ = glCreateProgram();
  if (program.id_ == 0) {
    TFG_RETURN_IF_ERROR(CheckGlErrors("glCreateProgram", __FILE__, __LINE__));
    return Status::Error("glCreateProgram returned 0");
  }
  TFG_GL(glAttachShader(program.id_, shader.id));
  if (retrievable) {
    TFG_GL(glProgramParameteri(program.id_, GL_PROGRAM_BINARY_RETRIEVABLE_HINT,
                               GL_TRUE));
  }
  TFG_GL(glLinkProgram(program.id_));
  GLint linked = GL_FALSE;
  TFG_GL(glGetProgramiv(program.id_, GL_LINK_STATUS, &linked));
  if (linked != GL_TRUE) {
    TFG_ASSIGN_OR_RETURN(std::string log, InfoLog(program.id_, glGetProgramiv,
                                                  glGetProgramInfoLog));
    return Status::Error("compute program failed to link:\n" + log +
                         "\nsource:\n" + NumberLines(source));
  }
  // The shader is flagged for deletion by ShaderGuard and freed with the
  // program it is attached to.
  return program;
}

StatusOr<Program> Program::CreateFromBinary(GLenum format, const uint8_t* data,
                                            size_t bytes) {
  if (bytes == 0 || bytes > static_cast<size_t>(INT32_MAX)) {
    return Status::Error("program binary of " + std::to_string(bytes) +
                         " bytes: empty or too large for glProgramBinary");
  }
  ClearGlErrors();
  Program program;
  program.context_ = eglGetCurrentContext();
  program.id_ = glCreateProgram();
  if (program.id_ == 0) {
    TFG_RETURN_IF_ERROR(CheckGlErrors("glCreateProgram", __FILE__, __LINE__));
    return Status::Error("glCreateProgram returned 0");
  }
  TFG_GL(glProgramBinary(program.id_, format, data, static_cast<GLsizei>(bytes)));
  // A binary the driver no longer accepts is not a GL error: it leaves the
  // program unlinked, which is what decides.
  GLint linked = GL_FALSE;
  TFG_GL(glGetProgramiv(program.id_, GL_LINK_STATUS, &linked));
  if (linked != GL_TRUE) {
    TFG_ASSIGN_OR_RETURN(std::string log, InfoLog(program.id_, glGetProgramiv,
                                                  glGetProgramInfoLog));
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%x", format);
    return Status::Error(std::string("the driver refused the program binary "
                                     "(format ") + hex + ")" +
                         (log.empty() ? "" : ": " + log));
  }
  return program;
}

Status Program::Binary(GLenum* format, std::vector<uint8_t>* data) const {
  GLint length = 0;
  TFG_GL(glGetProgramiv(id_, GL_PROGRAM_BINARY_LENGTH, &length));
  if (length <= 0) {
    return Status::Error("the driver reports no binary for this program "
                         "(GL_PROGRAM_BINARY_LENGTH " + std::to_string(length) + ")");
  }
  data->assign(static_cast<size_t>(length), 0);
  GLsizei written = 0;
  TFG_GL(glGetProgramBinary(id_, length, &written, format, data->data()));
  if (written <= 0 || written > length) {
    return Status::Error("glGetProgramBinary wrote " + std::to_string(written) +
                         " of " + std::to_string(length) + " bytes");
  }
  data->resize(static_cast<size_t>(written));
  return Status::Ok();
}

StatusOr<std::vector<GLenum>> ProgramBinaryFormats() {
  GLint count = 0;
  TFG_GL(glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &count));
  std::vector<GLint> formats(static_cast<size_t>(count > 0 ? count : 0));
  if (!formats.empty()) {
    TFG_GL(glGetIntegerv(GL_PROGRAM_BINARY_FORMATS, formats.data()));
  }
  return std::vector<GLenum>(formats.begin(), formats.end());
}

Program& Program::operator=(Program&& other) noexcept {
  if (this != &other) {
    Reset();
    id_ = other.id_;
    context_ = other.context_;
    other.id_ = 0;
  }
  return *this;
}

namespace {

// A program still in use is only flagged by glDeleteProgram and lives on
// in the context (the application's) until another one is used: the last
// one Dispatch used is taken off first.
Status StopUsing(GLuint program) {
  GLint current = 0;
  TFG_GL(glGetIntegerv(GL_CURRENT_PROGRAM, &current));
  if (static_cast<GLuint>(current) == program) TFG_GL(glUseProgram(0));
  return Status::Ok();
}

}  // namespace

void Program::Reset() {
  if (id_ != 0) {
    if (MayDeleteIn(context_)) {
      (void)StopUsing(id_);  // a failure leaves it flagged: nothing to report to
      glDeleteProgram(id_);
    }
    id_ = 0;
  }
}

Status Program::Dispatch(GLuint groups_x, GLuint groups_y,
                         GLuint groups_z) const {
  TFG_GL(glUseProgram(id_));
  TFG_GL(glDispatchCompute(groups_x, groups_y, groups_z));
  return Status::Ok();
}

StatusOr<Fence> Fence::Create() {
  Fence fence;
  fence.context_ = eglGetCurrentContext();
  ClearGlErrors();
  fence.sync_ = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  TFG_RETURN_IF_ERROR(CheckGlErrors("glFenceSync", __FILE__, __LINE__));
  if (fence.sync_ == nullptr) return Status::Error("glFenceSync returned no sync object");
  return fence;
}

Fence& Fence::operator=(Fence&& other) noexcept {
  if (this != &other) {
    Reset();
    sync_ = other.sync_;
    context_ = other.context_;
    other.sync_ = nullptr;
  }
  return *this;
}

void Fence::Reset() {
  if (sync_ != nullptr) {
    if (MayDeleteIn(context_)) glDeleteSync(sync_);
    sync_ = nullptr;
  }
}

Status Fence::Wait(bool spin) {
  if (sync_ == nullptr) return Status::Ok();
  constexpr GLuint64 kSecond = 1000000000ull;
  GLenum result = GL_TIMEOUT_EXPIRED;
  if (spin) {
    // The first poll flushes; then zero-timeout polls, up to the same 10 s
    // as the sleeping wait below, which takes over after that.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    GLbitfield flags = GL_SYNC_FLUSH_COMMANDS_BIT;
    while (result == GL_TIMEOUT_EXPIRED && std::chrono::steady_clock::now() < give_up) {
      ClearGlErrors();
      result = glClientWaitSync(sync_, flags, 0);
      Status status = CheckGlErrors("glClientWaitSync", __FILE__, __LINE__);
      if (!status.ok()) {
        Reset();
        return status;
      }
      flags = 0;
    }
    if (result == GL_ALREADY_SIGNALED || result == GL_CONDITION_SATISFIED) {
      Reset();
      return Status::Ok();
    }
  }
  // Ten one-second waits before giving up: a GPU that takes longer is hung.
  for (int i = 0; i < 10 && result == GL_TIMEOUT_EXPIRED; ++i) {
    ClearGlErrors();
    result = glClientWaitSync(sync_, GL_SYNC_FLUSH_COMMANDS_BIT, kSecond);
    Status status = CheckGlErrors("glClientWaitSync", __FILE__, __LINE__);
    if (!status.ok()) {
      Reset();
      return status;
    }
  }
  Reset();
  if (result == GL_WAIT_FAILED) return Status::Error("glClientWaitSync failed");
  if (result == GL_TIMEOUT_EXPIRED) {
    return Status::Error("the GPU did not finish earlier work within 10 s");
  }
  return Status::Ok();
}

}  // namespace tflite_gles::gl
