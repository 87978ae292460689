#include "delegate/runtime/texture_io.h"

#include <GLES2/gl2ext.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "delegate/runtime/program_cache.h"
#include "egl/gl_call.h"
#include "egl/shader_source.h"

namespace tflite_gles {

namespace {

constexpr GLuint kTextureUnit = 1;  // texture_io.comp's sampler binding
constexpr GLuint kImageUnit = 0;    // and its image binding
constexpr uint32_t kLocal = 64;     // within GLES 3.1's 128 invocations

// The fallback's texture_io.comp program (TEXTURE_TO_BHWC / BHWC_TO_TEXTURE)
// for `shape` (and the image format of outputs).
struct TextureProgram {
  const gl::Program* program = nullptr;
  uint32_t groups[2] = {1, 1};
};

StatusOr<TextureProgram> BuildProgram(const char* mode, GLenum image_format,
                                      const Shape4& shape, const std::string& what,
                                      ProgramCache& programs) {
  std::map<std::string, std::string> defines;
  defines[mode] = "";
  if (image_format == GL_RGBA8) defines["IMAGE_RGBA8"] = "";
  if (image_format == GL_RGBA16F) defines["IMAGE_RGBA16F"] = "";
  const long long pixels = static_cast<long long>(shape.h) * shape.w;
  defines["W"] = std::to_string(shape.w);
  defines["H"] = std::to_string(shape.h);
  defines["C"] = std::to_string(shape.c);
  defines["TOTAL"] = std::to_string(pixels);
  defines["LOCAL_X"] = std::to_string(kLocal);
  defines["LOCAL_Y"] = "1";
  defines["LOCAL_Z"] = "1";
  // A 1-D grid folded over y past the device's x limit (global_index()).
  GLint max_x = 65535;
  TFG_GL(glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, 0, &max_x));
  TextureProgram result;
  const long long groups = (pixels + kLocal - 1) / kLocal;
  result.groups[0] = static_cast<uint32_t>(std::min<long long>(groups, max_x));
  result.groups[1] = static_cast<uint32_t>((groups + max_x - 1) / max_x);
  TFG_ASSIGN_OR_RETURN(std::string body, gl::EmbeddedShader("texture_io"));
  // The shader reads and writes plain float SSBOs and the texture: no
  // storage choice of the delegate's applies (and no extension is needed).
  gl::StorageChoice storage;
  storage.texture_buffer_reads = false;
  storage.staging_texture_reads = false;
  TFG_ASSIGN_OR_RETURN(std::string source,
                       gl::AssembleShader("texture_io", body, storage, defines));
  auto program = programs.Get(source);
  if (!program.ok()) return program.status().WithContext(what + " (shader texture_io)");
  result.program = *program;
  return result;
}

// What a producer and a sink share: the texture, its parameters and what
// it was at bind (the reallocation check), the fallback's program (built at
// its first use) and the uniforms every texture shader reads.
class BoundTexture : public GpuTextureAccess {
 public:
  BoundTexture(const TextureParams& params, const Shape4& shape, std::string what,
               gl::TextureFacts facts, bool output)
      : params_(params), shape_(shape), what_(std::move(what)), facts_(facts),
        output_(output) {}

  // "texture 7 (GL_RGBA8, 256x256)".
  std::string DescribeTexture() const {
    return "texture " + std::to_string(params_.texture) + " (" +
           gl::TextureFormatName(facts_.internal_format) + ", " + std::to_string(facts_.width) +
           "x" + std::to_string(facts_.height) + ")";
  }

  Status Check() override {
    // Every invoke: an immutable texture can only have been deleted since
    // it was bound (its size and format are fixed while the name lives),
    // and the full check costs ~12 GL calls on the CPU before the first
    // dispatch (docs/perf/log.md, "tex3"). A deleted name that a new
    // texture took again is not seen; the contract keeps bound textures
    // alive (docs/gpu_io.md, "Lifetime").
    if (facts_.immutable) return gl::CheckTextureExists(params_.texture, what_);
    TFG_ASSIGN_OR_RETURN(gl::TextureFacts now,
                         gl::CheckTexture(params_.texture, shape_.w, shape_.h, output_, what_));
    if (output_ && now.internal_format != facts_.internal_format) {
      // The programs were compiled for the image format it had at bind.
      return Status::Error(what_ + ": texture " + std::to_string(params_.texture) +
                           " was reallocated as " + gl::TextureFormatName(now.internal_format) +
                           " after binding as " + gl::TextureFormatName(facts_.internal_format) +
                           "; bind it again");
    }
    return Status::Ok();
  }

  GLenum internal_format() const override { return facts_.internal_format; }

  Status Bind(const gl::Program& program, GLuint unit) override {
    TFG_GL(glProgramUniform4fv(program.id(), kTextureScaleLocation, 1, params_.scale));
    TFG_GL(glProgramUniform4fv(program.id(), kTextureScaleLocation + 1, 1, params_.offset));
    if (output_) {
      // Only input shaders read the channel choice; setting an inactive
      // location may be GL_INVALID_OPERATION.
      TFG_GL(glBindImageTexture(unit, params_.texture, 0, GL_FALSE, 0, GL_WRITE_ONLY,
                                facts_.internal_format));
      return Status::Ok();
    }
    TFG_GL(glProgramUniform4iv(program.id(), kTextureScaleLocation + 2, 1, params_.channels));
    TFG_GL(glActiveTexture(GL_TEXTURE0 + unit));
    TFG_GL(glBindTexture(GL_TEXTURE_2D, params_.texture));
    TFG_GL(glBindSampler(unit, sampler_.id()));
    return Status::Ok();
  }

  Status Unbind(GLuint unit) override {
    if (output_) {
      TFG_GL(glBindImageTexture(unit, 0, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA8));
      return Status::Ok();
    }
    // A sampler object left on the unit would override the filters of the
    // application's own textures there.
    TFG_GL(glActiveTexture(GL_TEXTURE0 + unit));
    TFG_GL(glBindSampler(unit, 0));
    TFG_GL(glBindTexture(GL_TEXTURE_2D, 0));
    return Status::Ok();
  }

  Status CreateSampler() {
    TFG_ASSIGN_OR_RETURN(sampler_, gl::Sampler::Create());
    return Status::Ok();
  }

 protected:
  // The fallback through a float32 BHWC buffer (texture_io.comp
  // TEXTURE_TO_BHWC / BHWC_TO_TEXTURE): binding `ssbo` holds the floats.
  Status RunFallback(const GpuBufferRef& floats, GLuint ssbo, ProgramCache& programs) {
    TFG_RETURN_IF_ERROR(Check());
    if (floats.layout != GpuLayout::kBhwcFloat32) {
      return Status::Error(what_ + (output_ ? ": a texture reads BHWC float32 bindings only"
                                            : ": a texture fills BHWC float32 bindings only"));
    }
    if (fallback_.program == nullptr) {
      TFG_ASSIGN_OR_RETURN(fallback_, BuildProgram(output_ ? "BHWC_TO_TEXTURE"
                                                           : "TEXTURE_TO_BHWC",
                                                   output_ ? facts_.internal_format : 0,
                                                   shape_, what_, programs));
    }
    const GLuint unit = output_ ? kImageUnit : kTextureUnit;
    TFG_RETURN_IF_ERROR(Bind(*fallback_.program, unit));
    TFG_GL(glBindBufferRange(GL_SHADER_STORAGE_BUFFER, ssbo, floats.buffer, 0,
                             static_cast<GLsizeiptr>(floats.bytes)));
    Status dispatched = fallback_.program->Dispatch(fallback_.groups[0], fallback_.groups[1], 1);
    TFG_RETURN_IF_ERROR(Unbind(unit));
    return dispatched;
  }

 private:
  TextureParams params_;
  Shape4 shape_;
  std::string what_;
  gl::TextureFacts facts_;
  bool output_;
  gl::Sampler sampler_;  // inputs only
  TextureProgram fallback_;
};

class TextureProducer final : public GpuProducer, public BoundTexture {
 public:
  using BoundTexture::BoundTexture;
  std::string Describe() const override { return DescribeTexture(); }
  GpuTextureAccess* texture() override { return this; }
  Status Produce(const GpuBufferRef& target, ProgramCache& programs) override {
    return RunFallback(target, /*ssbo=*/0, programs);
  }
};

class TextureSink final : public GpuSink, public BoundTexture {
 public:
  using BoundTexture::BoundTexture;
  std::string Describe() const override { return DescribeTexture(); }
  GpuTextureAccess* texture() override { return this; }
  Status Consume(const GpuBufferRef& source, ProgramCache& programs) override {
    return RunFallback(source, /*ssbo=*/1, programs);
  }
};

// What both directions require of the tensor and the parameters.
Status CheckParams(const TextureParams& params, const Shape4& shape, bool output,
                   const std::string& what) {
  if (shape.b != 1 || shape.c < 1 || shape.c > 4) {
    return Status::Error(what + " is " + std::to_string(shape.b) + "x" + std::to_string(shape.h) +
                         "x" + std::to_string(shape.w) + "x" + std::to_string(shape.c) +
                         " (BHWC); a texture binds to one image (batch 1) of 1 to 4 channels");
  }
  for (int c = 0; c < 4; ++c) {
    if (!std::isfinite(params.scale[c]) || !std::isfinite(params.offset[c])) {
      return Status::Error(what + ": scale and offset must be finite numbers");
    }
    if (!output && c < shape.c && (params.channels[c] < 0 || params.channels[c] > 3)) {
      return Status::Error(what + ": channel " + std::to_string(c) + " takes texture component " +
                           std::to_string(params.channels[c]) +
                           "; components are 0 (R) to 3 (A)");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::shared_ptr<GpuProducer>> MakeTextureProducer(const TextureParams& params,
                                                           const Shape4& shape,
                                                           const std::string& what,
                                                           ProgramCache&) {
  TFG_RETURN_IF_ERROR(CheckParams(params, shape, false, what));
  TFG_ASSIGN_OR_RETURN(gl::TextureFacts facts, gl::CheckTexture(params.texture, shape.w, shape.h,
                                                        false, what));
  auto producer = std::make_shared<TextureProducer>(params, shape, what, facts, false);
  TFG_RETURN_IF_ERROR(producer->CreateSampler());
  return std::shared_ptr<GpuProducer>(std::move(producer));
}

StatusOr<std::shared_ptr<GpuSink>> MakeTextureSink(const TextureParams& params,
                                                   const Shape4& shape,
                                                   const std::string& what,
                                                   ProgramCache&) {
  TFG_RETURN_IF_ERROR(CheckParams(params, shape, true, what));
  TFG_ASSIGN_OR_RETURN(gl::TextureFacts facts, gl::CheckTexture(params.texture, shape.w, shape.h,
                                                        true, what));
  return std::shared_ptr<GpuSink>(std::make_shared<TextureSink>(params, shape, what, facts, true));
}

}  // namespace tflite_gles
