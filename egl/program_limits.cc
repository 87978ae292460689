#include "egl/program_limits.h"

#include <algorithm>

#include "egl/gl_call.h"

namespace tflite_gles::gl {
namespace {

// GLSL ES 3.10 image types lie in this enum range (GL_IMAGE_2D ..
// GL_UNSIGNED_INT_IMAGE_2D_MULTISAMPLE_ARRAY, plus the buffer variants).
bool IsImageType(GLint type) { return type >= 0x904C && type <= 0x906C; }

// Sampler types: GLSL ES 3.10's and EXT_texture_buffer's.
bool IsSamplerType(GLint type) {
  switch (type) {
    case GL_SAMPLER_2D: case GL_SAMPLER_3D: case GL_SAMPLER_CUBE:
    case GL_SAMPLER_2D_SHADOW: case GL_SAMPLER_2D_ARRAY:
    case GL_SAMPLER_2D_ARRAY_SHADOW: case GL_SAMPLER_CUBE_SHADOW:
    case GL_INT_SAMPLER_2D: case GL_INT_SAMPLER_3D: case GL_INT_SAMPLER_CUBE:
    case GL_INT_SAMPLER_2D_ARRAY: case GL_UNSIGNED_INT_SAMPLER_2D:
    case GL_UNSIGNED_INT_SAMPLER_3D: case GL_UNSIGNED_INT_SAMPLER_CUBE:
    case GL_UNSIGNED_INT_SAMPLER_2D_ARRAY: case GL_SAMPLER_2D_MULTISAMPLE:
    case GL_INT_SAMPLER_2D_MULTISAMPLE: case GL_UNSIGNED_INT_SAMPLER_2D_MULTISAMPLE:
    case 0x8DC2:  // GL_SAMPLER_BUFFER_EXT
    case 0x8DD0:  // GL_INT_SAMPLER_BUFFER_EXT
    case 0x8DD8:  // GL_UNSIGNED_INT_SAMPLER_BUFFER_EXT
      return true;
    default:
      return false;
  }
}

// Components a default-block uniform of `type` takes (scalars and vectors;
// the delegate's shaders keep their numbers in a uniform block).
int Components(GLint type) {
  switch (type) {
    case GL_FLOAT_VEC2: case GL_INT_VEC2: case GL_UNSIGNED_INT_VEC2: case GL_BOOL_VEC2: return 2;
    case GL_FLOAT_VEC3: case GL_INT_VEC3: case GL_UNSIGNED_INT_VEC3: case GL_BOOL_VEC3: return 3;
    case GL_FLOAT_VEC4: case GL_INT_VEC4: case GL_UNSIGNED_INT_VEC4: case GL_BOOL_VEC4:
    case GL_FLOAT_MAT2: return 4;
    case GL_FLOAT_MAT3: return 9;
    case GL_FLOAT_MAT4: return 16;
    default: return 1;
  }
}

Status Exceeds(const std::string& what, long long used, const char* limit, long long value) {
  return Status::Error(what + " " + std::to_string(used) + " exceeds " + limit + " " +
                       std::to_string(value));
}

}  // namespace

StatusOr<ProgramResources> QueryProgramResources(GLuint program) {
  ProgramResources r;
  TFG_GL(glGetProgramiv(program, GL_COMPUTE_WORK_GROUP_SIZE, r.workgroup_size));
  GLint blocks = 0;
  TFG_GL(glGetProgramInterfaceiv(program, GL_SHADER_STORAGE_BLOCK, GL_ACTIVE_RESOURCES,
                                 &blocks));
  r.ssbo_blocks = blocks;
  for (GLint i = 0; i < blocks; ++i) {
    const GLenum property = GL_BUFFER_BINDING;
    GLint binding = 0;
    TFG_GL(glGetProgramResourceiv(program, GL_SHADER_STORAGE_BLOCK, static_cast<GLuint>(i),
                                  1, &property, 1, nullptr, &binding));
    r.max_ssbo_binding = std::max(r.max_ssbo_binding, static_cast<int>(binding));
  }
  GLint uniforms = 0;
  TFG_GL(glGetProgramInterfaceiv(program, GL_UNIFORM, GL_ACTIVE_RESOURCES, &uniforms));
  for (GLint i = 0; i < uniforms; ++i) {
    const GLenum properties[4] = {GL_BLOCK_INDEX, GL_TYPE, GL_ARRAY_SIZE, GL_LOCATION};
    GLint values[4] = {0, 0, 0, -1};
    TFG_GL(glGetProgramResourceiv(program, GL_UNIFORM, static_cast<GLuint>(i), 4, properties,
                                  4, nullptr, values));
    if (values[0] != -1) continue;  // a uniform block member
    const int count = std::max(1, values[2]);
    if (IsSamplerType(values[1])) {
      r.samplers += count;
      GLint unit = 0;
      if (values[3] >= 0) TFG_GL(glGetUniformiv(program, values[3], &unit));
      r.max_texture_unit = std::max(r.max_texture_unit, static_cast<int>(unit) + count - 1);
    } else if (IsImageType(values[1])) {
      r.images += count;
    } else {
      r.uniform_components += Components(values[1]) * count;
    }
  }
  return r;
}

Status CheckProgramResources(const ProgramResources& r, const egl::GpuInfo& gpu) {
  static const char* const kAxes[3] = {"x", "y", "z"};
  long long invocations = 1;
  for (int i = 0; i < 3; ++i) {
    invocations *= r.workgroup_size[i];
    if (gpu.max_workgroup_size[i] > 0 && r.workgroup_size[i] > gpu.max_workgroup_size[i]) {
      return Exceeds(std::string("workgroup size along ") + kAxes[i], r.workgroup_size[i],
                     "GL_MAX_COMPUTE_WORK_GROUP_SIZE", gpu.max_workgroup_size[i]);
    }
  }
  if (gpu.max_workgroup_invocations > 0 && invocations > gpu.max_workgroup_invocations) {
    return Exceeds("workgroup of", invocations, "GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS",
                   gpu.max_workgroup_invocations);
  }
  if (gpu.max_ssbo_bindings > 0 && r.ssbo_blocks > gpu.max_ssbo_bindings) {
    return Exceeds("shader storage blocks:", r.ssbo_blocks,
                   "GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS", gpu.max_ssbo_bindings);
  }
  if (gpu.max_ssbo_binding_points > 0 && r.max_ssbo_binding >= gpu.max_ssbo_binding_points) {
    return Exceeds("shader storage binding", r.max_ssbo_binding,
                   "the last index below GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS",
                   gpu.max_ssbo_binding_points - 1);
  }
  if (gpu.max_texture_units > 0 && r.samplers > gpu.max_texture_units) {
    return Exceeds("samplers:", r.samplers, "GL_MAX_COMPUTE_TEXTURE_IMAGE_UNITS",
                   gpu.max_texture_units);
  }
  if (gpu.max_texture_units > 0 && r.max_texture_unit >= gpu.max_texture_units) {
    return Exceeds("texture unit", r.max_texture_unit,
                   "the last unit below GL_MAX_COMPUTE_TEXTURE_IMAGE_UNITS",
                   gpu.max_texture_units - 1);
  }
  if (r.images > gpu.max_image_uniforms) {
    return Exceeds("image uniforms:", r.images, "GL_MAX_COMPUTE_IMAGE_UNIFORMS",
                   gpu.max_image_uniforms);
  }
  if (gpu.max_uniform_components > 0 && r.uniform_components > gpu.max_uniform_components) {
    return Exceeds("default-block uniform components:", r.uniform_components,
                   "GL_MAX_COMPUTE_UNIFORM_COMPONENTS", gpu.max_uniform_components);
  }
  return Status::Ok();
}

}  // namespace tflite_gles::gl
