// Turns a shader file from shaders/ plus its constants into the exact GLSL
// text that is compiled: the same code runs at build time (tools/shader_tool,
// which validates every variant with glslangValidator) and at run time, so
// what was validated is what ships.
//
// A shader file declares, in comment lines, what its preamble may define:
//   // @axis OP_ADD OP_SUB OP_MUL      exactly one of these names is defined
//   // @axis - ACT_RELU ACT_RELU6      "-" means: none of them
//   // @const N=64 M=3                 constants the kernel supplies (the
//                                      values here are used only to validate)
//   // @uniform ROWS=16 IN_W=4         integers the kernel supplies like
//                                      constants, but which reach the shader
//                                      as members of a uniform block, so
//                                      dispatches that differ only in them
//                                      share one program (one compile, one
//                                      JIT); see ShaderUniformValues
//   // @include gemm_splitk.glsl    (a line of its own) replaced by that
//                                      part's text: a shaders/*.glsl file
//                                      in CMakeLists.txt's shader_parts,
//                                      which declares nothing itself
// The preamble also selects the storage: STORAGE_FP16 (fp16 tensors packed in
// uvec2, read as RGBA16F) and READ_TEXBUF (reads through samplerBuffer views
// instead of SSBO loads) or RGBA_TEXTURES (tensors in 2D textures), and
// defines the TENSOR_IN/LOAD/TENSOR_OUT/STORE
// macros the shaders use, so one source serves every storage choice.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "egl/status.h"

namespace tflite_gles::gl {

struct StorageChoice {
  bool fp16 = false;         // tensors stored as half floats
  bool texture_buffer_reads = true;  // reads through samplerBuffer views
  // Tensors in 2D RGBA textures (egl/tensor_texture.h): TENSOR_IN is a
  // sampler2D, TENSOR_OUT an image2D; takes precedence over
  // texture_buffer_reads for tensors (FLOATS_IN staging keeps its own path).
  bool rgba_textures = false;
  // Their rows: 0 = the texture's own width (textureSize / imageSize and a
  // division per access); k > 0 = rows of 2^k texels in every texture (a
  // mask and a shift; egl/tensor_texture.h, TensorTextureExtent).
  int texture_row_shift = 0;
  // FLOATS_IN (the BHWC staging of uploads) through a samplerBuffer even
  // when tensors are read as SSBOs: a buffer the driver never sees bound as
  // an SSBO stays in host memory, where glBufferSubData is a plain copy
  // (docs/perf/log.md: 87 -> ~38 us for MobileNet's input on an H200).
  bool staging_texture_reads = false;
  // Shaders are GLSL ES 3.10, where samplerBuffer needs an extension even
  // on ES 3.2 contexts: "GL_EXT_texture_buffer" or "GL_OES_texture_buffer".
  std::string texture_buffer_extension = "GL_EXT_texture_buffer";
};

// What a shader file declares in its @axis / @const comment lines.
struct ShaderDeclaration {
  std::vector<std::vector<std::string>> axes;  // "-" is the empty choice
  std::map<std::string, std::string> constants;  // name -> validation value
  std::vector<std::string> uniforms;  // in block order (@uniform lines)
  // name -> validation value of each @uniform (shader_tool also validates
  // the shader with them compiled in, see AssembleShader's `specialize`)
  std::map<std::string, std::string> uniform_examples;
};

// The uniform block of a shader with @uniform lines: std140, one highp int
// per name in declaration order (4 bytes each), at uniform-buffer binding
// kShaderUniformBinding. The runtime writes every dispatch's values once at
// init and binds that dispatch's range before it runs.
constexpr unsigned kShaderUniformBinding = 0;

StatusOr<ShaderDeclaration> ParseShaderDeclaration(const std::string& source);

// Builds the final source: `#version` line, storage preamble, `defines`, the
// uniform block of the @uniform names, then the body with a #line directive
// so compiler messages name file lines. Values of @uniform names in
// `defines` are left out of the text (ShaderUniformValues reads them), so
// the source depends only on what is compiled in. With `specialize` they
// are compiled in as #defines instead and there is no block: one program
// per shape, as before uniforms existed, for indices beyond what the
// preamble's div_mod() computes exactly (kExactDivModLimit) and for A/B
// measurements. Fails when `defines` sets a name the file does not declare,
// or more than one name of an axis.
StatusOr<std::string> AssembleShader(const std::string& name,
                                     const std::string& source,
                                     const StorageChoice& storage,
                                     const std::map<std::string, std::string>& defines,
                                     bool specialize = false);

// GLSL ES 3.10 (section 8.15) allows barrier() only directly in main(), not
// inside any control flow and not after a return; both drivers we run on
// accept violations silently, and llvmpipe even computes them right (two
// reductions that were wrong only on NVIDIA broke that rule or came close).
// Checks `preprocessed`, a compute shader after the preprocessor (macros
// expanded: glslangValidator -E), and names the first violation.
Status CheckBarrierPlacement(const std::string& preprocessed);

// div_mod(n, d) in the preamble is exact for 0 <= n < this, d >= 1, when
// the divisor is a uniform (it divides in float, see shader_source.cc).
constexpr long long kExactDivModLimit = 1LL << 21;

// The values of the shader's @uniform names, in block order, from
// `defines` (decimal integers). Empty for a shader without @uniform lines
// or when `specialize`; an error naming the first missing or non-integer
// value.
StatusOr<std::vector<int32_t>> ShaderUniformValues(
    const std::string& name, const std::string& source,
    const std::map<std::string, std::string>& defines, bool specialize = false);

// The embedded source of shaders/<name>.comp, or an error naming it.
StatusOr<std::string> EmbeddedShader(const std::string& name);

}  // namespace tflite_gles::gl
