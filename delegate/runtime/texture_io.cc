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

// texture_io.comp for `shape` and `mode` (and the image format of outputs).
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

// `channels`: only the input variant reads io_channels; in the output one it
// is not an active uniform, and setting an inactive location may be
// GL_INVALID_OPERATION.
Status SetUniforms(const gl::Program& program, const TextureParams& params, bool channels) {
  TFG_GL(glProgramUniform4fv(program.id(), 0, 1, params.scale));
  TFG_GL(glProgramUniform4fv(program.id(), 1, 1, params.offset));
  if (channels) TFG_GL(glProgramUniform4iv(program.id(), 2, 1, params.channels));
  return Status::Ok();
}

class TextureProducer final : public GpuProducer {
 public:
  TextureProducer(const TextureParams& params, const Shape4& shape, std::string what,
                  gl::TextureFacts facts, TextureProgram program, gl::Sampler sampler)
      : params_(params), shape_(shape), what_(std::move(what)), facts_(facts),
        program_(program), sampler_(std::move(sampler)) {}

  std::string Describe() const override {
    return "texture " + std::to_string(params_.texture) + " (" +
           gl::TextureFormatName(facts_.internal_format) + ", " + std::to_string(facts_.width) +
           "x" + std::to_string(facts_.height) + ")";
  }

  Status Produce(const GpuBufferRef& target, ProgramCache&) override {
    TFG_RETURN_IF_ERROR(gl::CheckTexture(params_.texture, shape_.w, shape_.h, false, what_).status());
    if (target.layout != GpuLayout::kBhwcFloat32) {
      return Status::Error(what_ + ": a texture fills BHWC float32 bindings only");
    }
    TFG_RETURN_IF_ERROR(SetUniforms(*program_.program, params_, /*channels=*/true));
    TFG_GL(glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 0, target.buffer, 0,
                             static_cast<GLsizeiptr>(target.bytes)));
    TFG_GL(glActiveTexture(GL_TEXTURE0 + kTextureUnit));
    TFG_GL(glBindTexture(GL_TEXTURE_2D, params_.texture));
    TFG_GL(glBindSampler(kTextureUnit, sampler_.id()));
    Status dispatched = program_.program->Dispatch(program_.groups[0], program_.groups[1], 1);
    // A sampler object left on the unit would override the filters of the
    // application's own textures there.
    TFG_GL(glBindSampler(kTextureUnit, 0));
    TFG_GL(glBindTexture(GL_TEXTURE_2D, 0));
    return dispatched;
  }

 private:
  TextureParams params_;
  Shape4 shape_;
  std::string what_;
  gl::TextureFacts facts_;
  TextureProgram program_;
  gl::Sampler sampler_;
};

class TextureSink final : public GpuSink {
 public:
  TextureSink(const TextureParams& params, const Shape4& shape, std::string what,
              gl::TextureFacts facts, TextureProgram program)
      : params_(params), shape_(shape), what_(std::move(what)), facts_(facts),
        program_(program) {}

  std::string Describe() const override {
    return "texture " + std::to_string(params_.texture) + " (" +
           gl::TextureFormatName(facts_.internal_format) + ", " + std::to_string(facts_.width) +
           "x" + std::to_string(facts_.height) + ")";
  }

  Status Consume(const GpuBufferRef& source, ProgramCache&) override {
    TFG_ASSIGN_OR_RETURN(gl::TextureFacts now,
                         gl::CheckTexture(params_.texture, shape_.w, shape_.h, true, what_));
    if (now.internal_format != facts_.internal_format) {
      // The program was compiled for the image format it had at bind.
      return Status::Error(what_ + ": texture " + std::to_string(params_.texture) +
                           " was reallocated as " + gl::TextureFormatName(now.internal_format) +
                           " after binding as " + gl::TextureFormatName(facts_.internal_format) +
                           "; bind it again");
    }
    if (source.layout != GpuLayout::kBhwcFloat32) {
      return Status::Error(what_ + ": a texture reads BHWC float32 bindings only");
    }
    TFG_RETURN_IF_ERROR(SetUniforms(*program_.program, params_, /*channels=*/false));
    TFG_GL(glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 1, source.buffer, 0,
                             static_cast<GLsizeiptr>(source.bytes)));
    TFG_GL(glBindImageTexture(kImageUnit, params_.texture, 0, GL_FALSE, 0, GL_WRITE_ONLY,
                              facts_.internal_format));
    Status dispatched = program_.program->Dispatch(program_.groups[0], program_.groups[1], 1);
    TFG_GL(glBindImageTexture(kImageUnit, 0, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA8));
    return dispatched;
  }

 private:
  TextureParams params_;
  Shape4 shape_;
  std::string what_;
  gl::TextureFacts facts_;
  TextureProgram program_;
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
                                                           ProgramCache& programs) {
  TFG_RETURN_IF_ERROR(CheckParams(params, shape, false, what));
  TFG_ASSIGN_OR_RETURN(gl::TextureFacts facts, gl::CheckTexture(params.texture, shape.w, shape.h,
                                                        false, what));
  TFG_ASSIGN_OR_RETURN(TextureProgram program,
                       BuildProgram("TEXTURE_TO_BHWC", 0, shape, what, programs));
  TFG_ASSIGN_OR_RETURN(gl::Sampler sampler, gl::Sampler::Create());
  return std::shared_ptr<GpuProducer>(
      new TextureProducer(params, shape, what, facts, program, std::move(sampler)));
}

StatusOr<std::shared_ptr<GpuSink>> MakeTextureSink(const TextureParams& params,
                                                   const Shape4& shape,
                                                   const std::string& what,
                                                   ProgramCache& programs) {
  TFG_RETURN_IF_ERROR(CheckParams(params, shape, true, what));
  TFG_ASSIGN_OR_RETURN(gl::TextureFacts facts, gl::CheckTexture(params.texture, shape.w, shape.h,
                                                        true, what));
  TFG_ASSIGN_OR_RETURN(TextureProgram program,
                       BuildProgram("BHWC_TO_TEXTURE", facts.internal_format, shape, what,
                                    programs));
  return std::shared_ptr<GpuSink>(new TextureSink(params, shape, what, facts, program));
}

}  // namespace tflite_gles
