// What a linked compute program uses, checked against the limits of a GPU
// (GpuInfo, possibly clamped to a device profile): a program that would
// fail, or silently misbehave, on a GPU at those limits is an error before
// its first dispatch, naming the resource, its use and the limit.
#pragma once

#include <GLES3/gl31.h>

#include <string>

#include "egl/egl_environment.h"
#include "egl/status.h"

namespace tflite_gles::gl {

struct ProgramResources {
  int workgroup_size[3] = {1, 1, 1};  // GL_COMPUTE_WORK_GROUP_SIZE
  int ssbo_blocks = 0;                // active shader storage blocks
  int max_ssbo_binding = -1;          // their highest binding index
  int samplers = 0;                   // active sampler uniforms
  int max_texture_unit = -1;          // their highest texture unit
  int images = 0;                     // active image uniforms
  int uniform_components = 0;         // default-block, non-opaque
};

// Reads the program's interface (glGetProgramiv, glGetProgramResourceiv).
StatusOr<ProgramResources> QueryProgramResources(GLuint program);

// OK when `used` fits `gpu`; otherwise the first limit it exceeds.
Status CheckProgramResources(const ProgramResources& used, const egl::GpuInfo& gpu);

}  // namespace tflite_gles::gl
