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

std::string TextureFormatName(GLenum internal_format) {
  switch (internal_format) {
    case GL_RGBA8: return "GL_RGBA8";
    case GL_RGBA: return "GL_RGBA (unsized)";
    case GL_RGBA16F: return "GL_RGBA16F";
    case GL_RGBA32F: return "GL_RGBA32F";
    case GL_RGB8: return "GL_RGB8";
    case GL_SRGB8_ALPHA8: return "GL_SRGB8_ALPHA8";
    case GL_R8: return "GL_R8";
    case GL_R32F: return "GL_R32F";
    case GL_RGBA8UI: return "GL_RGBA8UI";
    default: break;
  }
  char hex[32];
  std::snprintf(hex, sizeof(hex), "0x%04X", static_cast<unsigned>(internal_format));
  return hex;
}

StatusOr<TextureFacts> CheckTexture(GLuint texture, int width, int height,
                                    bool output, const std::string& what) {
  // glIsTexture is false for a deleted name, a name never bound, and a name
  // of a context that shares nothing with this one (it is not a texture
  // here, or it is another object).
  gl::ClearGlErrors();
  if (texture == 0 || glIsTexture(texture) == GL_FALSE) {
    return Status::Error(what + ": " + std::to_string(texture) +
                         " is not a texture of the delegate's GL context (deleted, "
                         "never bound, or made in a context that shares no objects "
                         "with it)");
  }
  GLint active = 0;
  GLint previous = 0;
  TFG_GL(glGetIntegerv(GL_ACTIVE_TEXTURE, &active));
  TFG_GL(glActiveTexture(GL_TEXTURE0));
  TFG_GL(glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous));
  // Binding a texture made for another target (cube map, array, 3D,
  // external) is GL_INVALID_OPERATION: the one way GLES 3.1 tells the target.
  gl::ClearGlErrors();
  glBindTexture(GL_TEXTURE_2D, texture);
  const bool is_2d = glGetError() == GL_NO_ERROR;
  TextureFacts facts;
  GLint format = 0;
  GLint immutable = 0;
  if (is_2d) {
    TFG_GL(glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_WIDTH, &facts.width));
    TFG_GL(glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_HEIGHT, &facts.height));
    TFG_GL(glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_INTERNAL_FORMAT, &format));
    TFG_GL(glGetTexParameteriv(GL_TEXTURE_2D, GL_TEXTURE_IMMUTABLE_FORMAT, &immutable));
  }
  TFG_GL(glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous)));
  TFG_GL(glActiveTexture(static_cast<GLenum>(active)));
  const std::string name = "texture " + std::to_string(texture);
  if (!is_2d) {
    return Status::Error(what + ": " + name +
                         " is not a GL_TEXTURE_2D (a cube map, array, 3D or external "
                         "texture); bind a 2D texture");
  }
  facts.internal_format = static_cast<GLenum>(format);
  if (facts.width == 0 || facts.height == 0) {
    return Status::Error(what + ": " + name + " has no image at level 0 (allocate it "
                         "with glTexStorage2D or glTexImage2D first)");
  }
  const bool known = format == GL_RGBA8 || format == GL_RGBA16F || format == GL_RGBA32F ||
                     (!output && format == GL_RGBA);
  if (!known) {
    return Status::Error(what + ": " + name + " has internal format " +
                         TextureFormatName(facts.internal_format) + "; " +
                         (output ? "an output texture must be GL_RGBA8, GL_RGBA16F or "
                                   "GL_RGBA32F"
                                 : "an input texture must be GL_RGBA8, GL_RGBA16F or "
                                   "GL_RGBA32F (sRGB, integer and other formats would "
                                   "read as other values)"));
  }
  if (output && immutable == GL_FALSE) {
    return Status::Error(what + ": " + name +
                         " is not immutable; GLES 3.1 writes only textures allocated "
                         "with glTexStorage2D (image units), not glTexImage2D");
  }
  if (facts.width != width || facts.height != height) {
    return Status::Error(what + ": " + name + " is " + std::to_string(facts.width) + "x" +
                         std::to_string(facts.height) + " but the tensor is " +
                         std::to_string(width) + "x" + std::to_string(height) +
                         " (width x height); the delegate does not resize: give it a "
                         "texture of the tensor's size (e.g. draw the frame into one)");
  }
  return facts;
}

StatusOr<Sampler> Sampler::Create() {
  Sampler sampler;
  sampler.context_ = eglGetCurrentContext();
  TFG_GL(glGenSamplers(1, &sampler.id_));
  TFG_GL(glSamplerParameteri(sampler.id_, GL_TEXTURE_MIN_FILTER, GL_NEAREST));
  TFG_GL(glSamplerParameteri(sampler.id_, GL_TEXTURE_MAG_FILTER, GL_NEAREST));
  TFG_GL(glSamplerParameteri(sampler.id_, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE));
  TFG_GL(glSamplerParameteri(sampler.id_, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE));
  return sampler;
}

Sampler& Sampler::operator=(Sampler&& other) noexcept {
  if (this != &other) {
    Reset();
    id_ = other.id_;
    context_ = other.context_;
    other.id_ = 0;
  }
  return *this;
}

void Sampler::Reset() {
  if (id_ != 0) {
    if (eglGetCurrentContext() == context_) glDeleteSamplers(1, &id_);
    id_ = 0;
  }
}

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

Status SetUniforms(const gl::Program& program, const TextureParams& params) {
  TFG_GL(glProgramUniform4fv(program.id(), 0, 1, params.scale));
  TFG_GL(glProgramUniform4fv(program.id(), 1, 1, params.offset));
  TFG_GL(glProgramUniform4iv(program.id(), 2, 1, params.channels));
  return Status::Ok();
}

class TextureProducer final : public GpuProducer {
 public:
  TextureProducer(const TextureParams& params, const Shape4& shape, std::string what,
                  TextureFacts facts, TextureProgram program, Sampler sampler)
      : params_(params), shape_(shape), what_(std::move(what)), facts_(facts),
        program_(program), sampler_(std::move(sampler)) {}

  std::string Describe() const override {
    return "texture " + std::to_string(params_.texture) + " (" +
           TextureFormatName(facts_.internal_format) + ", " + std::to_string(facts_.width) +
           "x" + std::to_string(facts_.height) + ")";
  }

  Status Produce(const GpuBufferRef& target, ProgramCache&) override {
    TFG_RETURN_IF_ERROR(CheckTexture(params_.texture, shape_.w, shape_.h, false, what_).status());
    if (target.layout != GpuLayout::kBhwcFloat32) {
      return Status::Error(what_ + ": a texture fills BHWC float32 bindings only");
    }
    TFG_RETURN_IF_ERROR(SetUniforms(*program_.program, params_));
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
  TextureFacts facts_;
  TextureProgram program_;
  Sampler sampler_;
};

class TextureSink final : public GpuSink {
 public:
  TextureSink(const TextureParams& params, const Shape4& shape, std::string what,
              TextureFacts facts, TextureProgram program)
      : params_(params), shape_(shape), what_(std::move(what)), facts_(facts),
        program_(program) {}

  std::string Describe() const override {
    return "texture " + std::to_string(params_.texture) + " (" +
           TextureFormatName(facts_.internal_format) + ", " + std::to_string(facts_.width) +
           "x" + std::to_string(facts_.height) + ")";
  }

  Status Consume(const GpuBufferRef& source, ProgramCache&) override {
    TFG_ASSIGN_OR_RETURN(TextureFacts now,
                         CheckTexture(params_.texture, shape_.w, shape_.h, true, what_));
    if (now.internal_format != facts_.internal_format) {
      // The program was compiled for the image format it had at bind.
      return Status::Error(what_ + ": texture " + std::to_string(params_.texture) +
                           " was reallocated as " + TextureFormatName(now.internal_format) +
                           " after binding as " + TextureFormatName(facts_.internal_format) +
                           "; bind it again");
    }
    if (source.layout != GpuLayout::kBhwcFloat32) {
      return Status::Error(what_ + ": a texture reads BHWC float32 bindings only");
    }
    TFG_RETURN_IF_ERROR(SetUniforms(*program_.program, params_));
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
  TextureFacts facts_;
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
  TFG_ASSIGN_OR_RETURN(TextureFacts facts, CheckTexture(params.texture, shape.w, shape.h,
                                                        false, what));
  TFG_ASSIGN_OR_RETURN(TextureProgram program,
                       BuildProgram("TEXTURE_TO_BHWC", 0, shape, what, programs));
  TFG_ASSIGN_OR_RETURN(Sampler sampler, Sampler::Create());
  return std::shared_ptr<GpuProducer>(
      new TextureProducer(params, shape, what, facts, program, std::move(sampler)));
}

StatusOr<std::shared_ptr<GpuSink>> MakeTextureSink(const TextureParams& params,
                                                   const Shape4& shape,
                                                   const std::string& what,
                                                   ProgramCache& programs) {
  TFG_RETURN_IF_ERROR(CheckParams(params, shape, true, what));
  TFG_ASSIGN_OR_RETURN(TextureFacts facts, CheckTexture(params.texture, shape.w, shape.h,
                                                        true, what));
  TFG_ASSIGN_OR_RETURN(TextureProgram program,
                       BuildProgram("BHWC_TO_TEXTURE", facts.internal_format, shape, what,
                                    programs));
  return std::shared_ptr<GpuSink>(new TextureSink(params, shape, what, facts, program));
}

}  // namespace tflite_gles
