#include "egl/foreign_texture.h"

#include <GLES2/gl2ext.h>

#include <cstdio>

#include "egl/context_identity.h"
#include "egl/gl_call.h"

namespace tflite_gles::gl {

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

Status CheckTextureExists(GLuint texture, const std::string& what) {
  ClearGlErrors();
  if (texture == 0 || glIsTexture(texture) == GL_FALSE) {
    return Status::Error(what + ": " + std::to_string(texture) +
                         " is not a texture of the delegate's GL context (deleted, "
                         "never bound, or made in a context that shares no objects "
                         "with it)");
  }
  return Status::Ok();
}

StatusOr<TextureFacts> CheckTexture(GLuint texture, int width, int height,
                                    bool output, const std::string& what) {
  // glIsTexture is false for a deleted name, a name never bound, and a name
  // of a context that shares nothing with this one (it is not a texture
  // here, or it is another object).
  TFG_RETURN_IF_ERROR(CheckTextureExists(texture, what));
  GLint active = 0;
  GLint previous = 0;
  TFG_GL(glGetIntegerv(GL_ACTIVE_TEXTURE, &active));
  TFG_GL(glActiveTexture(GL_TEXTURE0));
  TFG_GL(glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous));
  // Binding a texture made for another target (cube map, array, 3D,
  // external) is GL_INVALID_OPERATION: the one way GLES 3.1 tells the target.
  ClearGlErrors();
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
  facts.immutable = immutable != GL_FALSE;
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
    if (MayDeleteIn(context_)) glDeleteSamplers(1, &id_);
    id_ = 0;
  }
}

}  // namespace tflite_gles::gl
