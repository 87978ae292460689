#include "egl/shader_source.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cctype>
#include <mutex>
#include <set>
#include <unordered_map>
#include <string>
#include <vector>
#include <sstream>

// kElementwiseOps: shaders/elementwise_ops.glsl, embedded by CMake.
#include "elementwise_ops_glsl.h"
// kShaderParts: the shaders/*.glsl parts that `// @include` lines name.
#include "shader_parts_glsl.h"

namespace tflite_gles::gl {
namespace {

// Storage macros every shader can use. Why macros: GLSL ES has no #include,
// and the storage (fp32/fp16, samplerBuffer/SSBO reads) is chosen per device
// at run time, so the shader text names operations, not storage.
// TENSOR_IN(name, binding, Block) declares a PHWC4 input read with
// LOAD(name, index); TENSOR_OUT(name, binding, Block) an output written with
// STORE(name, index, vec4). FLOATS_IN/FLOATS_OUT are plain float arrays
// (BHWC staging). `Block` names the SSBO block: GLSL ES has no token
// pasting, so it cannot be derived from `name`.
constexpr const char kStorageMacros[] = R"GLSL(
vec4 unpack_half4(uvec2 packed_value) {
  return vec4(unpackHalf2x16(packed_value.x), unpackHalf2x16(packed_value.y));
}
uvec2 pack_half4(vec4 v) {
  return uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw));
}
#if READ_TEXBUF || STAGING_TEXBUF
#define FLOATS_IN(name, b, Block) layout(binding = b) uniform highp samplerBuffer name
#define LOAD_FLOAT(name, i) texelFetch(name, int(i)).x
#else
#define FLOATS_IN(name, b, Block) layout(std430, binding = b) readonly buffer Block { float name[]; }
#define LOAD_FLOAT(name, i) name[int(i)]
#endif
// WORDS_IN: a staging buffer of packed 8-bit values (a quantized partition
// input's raw bytes, 4 per uint; R32UI view or uint SSBO). LOAD_BYTE(name, i)
// is byte i of it as a uint 0..255: byte 0 of a uint is its low 8 bits, as
// the bytes the CPU wrote read on a little-endian GPU (every GLES GPU the
// delegate targets).
#if READ_TEXBUF || STAGING_TEXBUF
#define WORDS_IN(name, b, Block) layout(binding = b) uniform highp usamplerBuffer name
#define LOAD_WORD(name, i) texelFetch(name, int(i)).x
#else
#define WORDS_IN(name, b, Block) layout(std430, binding = b) readonly buffer Block { uint name[]; }
#define LOAD_WORD(name, i) name[int(i)]
#endif
#define LOAD_BYTE(name, i) bitfieldExtract(LOAD_WORD(name, (i) >> 2), ((i) & 3) * 8, 8)
// Texel (i % width, i / width): where RGBA textures (RGBA_TEXTURES,
// egl/tensor_texture.h) keep vec4 i, with the texture's own width, so that
// views and textures shared by tensors of other shapes read the same vec4s;
// and where shaders/texture_io.comp finds pixel i of an application's image,
// which is why a <= 4-channel tensor's texture is texel for texel such an
// image. A float quotient and one correction step (as div_mod): float(i)
// and the division are each within a few 2^-24 of exact, so the estimate is
// within 0.75 of the row while the row is below 2^21 (any texture: rows are
// below GL_MAX_TEXTURE_SIZE), for every i < 2^31.
ivec2 tensor_texel(int i, int width) {
  int row = int(float(i) / float(width));
  int column = i - row * width;
  int step = (column < 0 ? -1 : 0) + (column >= width ? 1 : 0);
  return ivec2(column - step * width, row + step);
}
// With rows of 2^TEXTURE_ROW_SHIFT texels in every texture, a mask and a
// shift (a texture of fewer texels is one row of them).
#if TEXTURE_ROW_SHIFT > 0
#define TEXEL_IN(name, i) \
  ivec2(int(i) & ((1 << TEXTURE_ROW_SHIFT) - 1), int(i) >> TEXTURE_ROW_SHIFT)
#define TEXEL_OUT(name, i) TEXEL_IN(name, i)
#else
#define TEXEL_IN(name, i) tensor_texel(int(i), textureSize(name, 0).x)
#define TEXEL_OUT(name, i) tensor_texel(int(i), imageSize(name).x)
#endif
#if RGBA_TEXTURES
#define TENSOR_IN(name, b, Block) layout(binding = b) uniform highp sampler2D name
#define LOAD(name, i) texelFetch(name, TEXEL_IN(name, i), 0)
#elif READ_TEXBUF
#define TENSOR_IN(name, b, Block) layout(binding = b) uniform highp samplerBuffer name
#define LOAD(name, i) texelFetch(name, int(i))
#else
#if STORAGE_FP16
#define TENSOR_IN(name, b, Block) layout(std430, binding = b) readonly buffer Block { uvec2 name[]; }
#define LOAD(name, i) unpack_half4(name[int(i)])
#else
#define TENSOR_IN(name, b, Block) layout(std430, binding = b) readonly buffer Block { vec4 name[]; }
#define LOAD(name, i) name[int(i)]
#endif
#endif
// Image stores need the format qualifier in GLES 3.1 (and rgba32f / rgba16f
// images are either written or read in one shader, never both: outputs are
// writeonly, inputs go through samplers).
#if RGBA_TEXTURES && STORAGE_FP16
// Rounded to half here: GL leaves the rounding of a float stored into a
// 16-bit float image to the implementation, and llvmpipe's is not to
// nearest (SSD's fp16 class scores ended 0.018 from the CPU's, three times
// the buffers' 0.006), while packHalf2x16 rounds as the buffer path does.
#define TENSOR_OUT(name, b, Block) layout(rgba16f, binding = b) writeonly uniform highp image2D name
#define STORE(name, i, v) imageStore(name, TEXEL_OUT(name, i), unpack_half4(pack_half4(v)))
#elif RGBA_TEXTURES
#define TENSOR_OUT(name, b, Block) layout(rgba32f, binding = b) writeonly uniform highp image2D name
#define STORE(name, i, v) imageStore(name, TEXEL_OUT(name, i), (v))
#elif STORAGE_FP16
#define TENSOR_OUT(name, b, Block) layout(std430, binding = b) writeonly buffer Block { uvec2 name[]; }
#define STORE(name, i, v) name[int(i)] = pack_half4(v)
#else
#define TENSOR_OUT(name, b, Block) layout(std430, binding = b) writeonly buffer Block { vec4 name[]; }
#define STORE(name, i, v) name[int(i)] = (v)
#endif
#define FLOATS_OUT(name, b, Block) layout(std430, binding = b) writeonly buffer Block { float name[]; }
#define STORE_FLOAT(name, i, v) name[int(i)] = (v)
// One invocation index over a grid that may be split across x and y when it
// exceeds the per-dimension workgroup count limit.
uint global_index() {
  return gl_GlobalInvocationID.x +
         gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * uint(LOCAL_X));
}
// (n / d, n % d) for 0 <= n < 2^21 (kExactDivModLimit) and d >= 1. With
// shapes in a uniform block the divisor is not a constant, and llvmpipe
// turns an integer division by a variable into 8 scalar divisions per
// 8-lane vector (as much as the whole GEMM of a small layer); a float
// quotient is one vector division. GLSL ES allows it 2.5 ULP, so the
// estimate is within 0.7 of n / d below 2^21 and one correction step makes
// it exact. A compiled-in divisor (SPECIALIZED) divides as integers, which
// the compiler turns into a multiply.
ivec2 div_mod(int n, int d) {
#if SPECIALIZED
  return ivec2(n / d, n - (n / d) * d);
#else
  int q = int(float(n) / float(d));
  int r = n - q * d;
  int step = (r < 0 ? -1 : 0) + (r >= d ? 1 : 0);
  return ivec2(q + step, r - step * d);
#endif
}
// `v` with the lanes of channels >= `channels` set to zero. Every kernel
// stores through this on a tensor's last slice: padded lanes hold zeros, so
// reductions over channels and GEMMs with zero-padded weights stay exact.
vec4 zero_padded(vec4 v, int slice, int channels) {
  return mix(vec4(0.0), v,
             lessThan(ivec4(slice * 4) + ivec4(0, 1, 2, 3), ivec4(channels)));
}
)GLSL";

// `body` (a shader file's lines from its second on) with each `// @include
// NAME` line replaced by part NAME's text, between #line directives: the
// part's lines count from 1, the file's keep their numbers after it.
StatusOr<std::string> ExpandIncludes(const std::string& name, const std::string& body) {
  static const std::string kInclude = "// @include ";
  std::istringstream lines(body);
  std::ostringstream out;
  std::string line;
  for (int number = 2; std::getline(lines, line); ++number) {
    if (line.compare(0, kInclude.size(), kInclude) != 0) {
      out << line << "\n";
      continue;
    }
    const std::string part = line.substr(kInclude.size());
    const ShaderPart* found = nullptr;
    for (const ShaderPart& p : kShaderParts) {
      if (part == p.name) found = &p;
    }
    if (found == nullptr) {
      return Status::Error("shader '" + name + "' includes unknown part '" + part + "'");
    }
    out << "#line 1\n" << found->text << "\n#line " << number + 1 << "\n";
  }
  return out.str();
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

}  // namespace

namespace {

StatusOr<ShaderDeclaration> ParseUncached(const std::string& source) {
  ShaderDeclaration declaration;
  std::istringstream lines(source);
  std::string line;
  while (std::getline(lines, line)) {
    auto pos = line.find("// @");
    if (pos == std::string::npos) continue;
    std::vector<std::string> words = Words(line.substr(pos + 4));
    if (words.empty()) continue;
    const std::string keyword = words[0];
    words.erase(words.begin());
    if (keyword == "axis") {
      if (words.size() < 2) {
        return Status::Error("@axis needs at least two choices: " + line);
      }
      declaration.axes.push_back(words);
    } else if (keyword == "const") {
      for (const std::string& word : words) {
        auto eq = word.find('=');
        if (eq == std::string::npos || eq == 0) {
          return Status::Error("@const entries are NAME=VALUE: " + line);
        }
        declaration.constants[word.substr(0, eq)] = word.substr(eq + 1);
      }
    } else if (keyword == "include") {
      continue;  // a part's text (ExpandIncludes), no declaration
    } else if (keyword == "uniform") {
      for (const std::string& word : words) {
        auto eq = word.find('=');
        if (eq == std::string::npos || eq == 0) {
          return Status::Error("@uniform entries are NAME=VALUE: " + line);
        }
        declaration.uniforms.push_back(word.substr(0, eq));
        declaration.uniform_examples[word.substr(0, eq)] = word.substr(eq + 1);
      }
    } else {
      return Status::Error("unknown shader declaration '@" + keyword + "'");
    }
  }
  return declaration;
}

}  // namespace

StatusOr<ShaderDeclaration> ParseShaderDeclaration(const std::string& source) {
  // Every dispatch's assembly and uniform values read the declaration of
  // one of a few files: parsed once per file text, not twice per dispatch
  // (a line-by-line scan of the whole file each time).
  static std::mutex mutex;
  static auto* parsed = new std::unordered_map<std::string, ShaderDeclaration>();
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = parsed->find(source);
    if (it != parsed->end()) return it->second;
  }
  TFG_ASSIGN_OR_RETURN(ShaderDeclaration declaration, ParseUncached(source));
  std::lock_guard<std::mutex> lock(mutex);
  parsed->emplace(source, declaration);
  return declaration;
}

StatusOr<std::string> AssembleShader(
    const std::string& name, const std::string& source,
    const StorageChoice& storage,
    const std::map<std::string, std::string>& defines, bool specialize) {
  const std::string version_line = "#version 310 es";
  if (source.compare(0, version_line.size(), version_line) != 0) {
    return Status::Error("shader '" + name +
                         "' must start with '#version 310 es'");
  }
  TFG_ASSIGN_OR_RETURN(ShaderDeclaration declaration,
                       ParseShaderDeclaration(source));
  std::set<std::string> allowed;
  // Constants a kernel leaves out fail at compile time with the driver's
  // message; an undeclared name is caught here, where it is cheaper.
  for (const auto& [constant, unused] : declaration.constants) {
    allowed.insert(constant);
  }
  for (const std::string& uniform : declaration.uniforms) {
    if (allowed.count(uniform) != 0) {
      return Status::Error("shader '" + name + "' declares '" + uniform +
                           "' both as @const and as @uniform");
    }
    allowed.insert(uniform);
  }
  for (const auto& axis : declaration.axes) {
    int chosen = 0;
    for (const std::string& choice : axis) {
      if (choice == "-") continue;
      allowed.insert(choice);
      chosen += static_cast<int>(defines.count(choice));
    }
    if (chosen > 1) {
      return Status::Error("shader '" + name +
                           "': more than one choice of an @axis defined");
    }
  }
  for (const auto& [define, unused] : defines) {
    if (allowed.count(define) == 0) {
      return Status::Error("shader '" + name + "' does not declare '" +
                           define + "' in an @axis or @const line");
    }
  }

  std::ostringstream out;
  out << version_line << "\n";
  const bool any_texture_reads =
      storage.texture_buffer_reads || storage.staging_texture_reads;
  if (any_texture_reads) {
    out << "#extension " << storage.texture_buffer_extension << " : require\n";
  }
  out << "precision highp float;\nprecision highp int;\n";
  if (any_texture_reads) {
    out << "precision highp samplerBuffer;\nprecision highp usamplerBuffer;\n";
  }
  out << "#define STORAGE_FP16 " << (storage.fp16 ? 1 : 0) << "\n";
  out << "#define READ_TEXBUF " << (storage.texture_buffer_reads ? 1 : 0)
      << "\n";
  out << "#define RGBA_TEXTURES " << (storage.rgba_textures ? 1 : 0) << "\n";
  out << "#define TEXTURE_ROW_SHIFT " << storage.texture_row_shift << "\n";
  out << "#define STAGING_TEXBUF " << (storage.staging_texture_reads ? 1 : 0)
      << "\n";
  out << "#define SPECIALIZED " << (specialize ? 1 : 0) << "\n";
  // The kernel's defines come before the shared helpers, which read them
  // (activate(), in elementwise_ops.glsl, picks its fused activation from
  // ACT_*).
  std::set<std::string> uniforms;
  if (!specialize) {
    uniforms.insert(declaration.uniforms.begin(), declaration.uniforms.end());
  }
  for (const auto& [define, value] : defines) {
    if (uniforms.count(define)) continue;  // a block member, not text
    out << "#define " << define << " " << (value.empty() ? "1" : value) << "\n";
  }
  if (!uniforms.empty()) {
    out << "layout(std140, binding = " << kShaderUniformBinding
        << ") uniform DispatchUniforms {\n";
    for (const std::string& uniform : declaration.uniforms) {
      out << "  highp int " << uniform << ";\n";
    }
    out << "};\n";
  }
  out << kStorageMacros;
  // The elementwise ops and activate(), written once for every shader.
  out << kElementwiseOps;
  out << "#line 2\n";
  TFG_ASSIGN_OR_RETURN(std::string body,
                       ExpandIncludes(name, source.substr(source.find('\n') + 1)));
  out << body;
  return out.str();
}

StatusOr<std::vector<int32_t>> ShaderUniformValues(
    const std::string& name, const std::string& source,
    const std::map<std::string, std::string>& defines, bool specialize) {
  TFG_ASSIGN_OR_RETURN(ShaderDeclaration declaration,
                       ParseShaderDeclaration(source));
  std::vector<int32_t> values;
  if (specialize) return values;
  for (const std::string& uniform : declaration.uniforms) {
    auto it = defines.find(uniform);
    if (it == defines.end()) {
      return Status::Error("shader '" + name + "' needs a value for its uniform '" +
                           uniform + "'");
    }
    const std::string& text = it->second;
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || value < INT32_MIN ||
        value > INT32_MAX) {
      return Status::Error("shader '" + name + "': uniform '" + uniform +
                           "' = '" + text + "' is not a 32-bit integer");
    }
    values.push_back(static_cast<int32_t>(value));
  }
  return values;
}

namespace {

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Whether `word` starts at `at` as a whole identifier.
bool WordAt(const std::string& text, size_t at, const char* word) {
  const size_t length = std::char_traits<char>::length(word);
  if (text.compare(at, length, word) != 0) return false;
  if (at > 0 && IsIdentifierChar(text[at - 1])) return false;
  return at + length >= text.size() || !IsIdentifierChar(text[at + length]);
}

}  // namespace

Status CheckBarrierPlacement(const std::string& text) {
  // A token scan, not a parser: comments are gone after preprocessing, and
  // the shaders keep to simple statements. Inside main's body, depth 1 is
  // main's own block; control statements open a "controlled" region that
  // lasts until the end of their braced block or their single statement.
  int depth = 0;
  int main_depth = -1;            // depth of main's body, -1 outside main
  bool after_return = false;
  int pending_control = 0;        // control keywords awaiting their body
  int paren = 0;
  std::vector<bool> block_controlled;  // per open brace: a control body?
  int single_statement_controls = 0;   // unbraced control bodies open
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(') ++paren;
    if (c == ')') --paren;
    if (c == '{') {
      ++depth;
      if (main_depth < 0 && depth == 1) {
        // Is this the body of main()? Look back for "main" before "(...)".
        size_t back = text.rfind("main", i);
        const size_t void_at = text.rfind("void", i);
        if (back != std::string::npos && void_at != std::string::npos && void_at < back &&
            text.find(';', back) > i && WordAt(text, back, "main")) {
          main_depth = 1;
          block_controlled.clear();
          block_controlled.push_back(false);
          continue;
        }
      }
      block_controlled.push_back(pending_control > 0);
      if (pending_control > 0) --pending_control;
      continue;
    }
    if (c == '}') {
      if (!block_controlled.empty()) block_controlled.pop_back();
      if (main_depth > 0 && depth == main_depth) main_depth = -2;  // main done
      --depth;
      continue;
    }
    if (c == ';' && paren == 0 && single_statement_controls > 0) {
      --single_statement_controls;
      continue;
    }
    if (!IsIdentifierChar(c) || (i > 0 && IsIdentifierChar(text[i - 1]))) continue;
    if (main_depth == 1) {
      for (const char* keyword : {"if", "for", "while", "switch", "do", "else"}) {
        if (!WordAt(text, i, keyword)) continue;
        // The body starts after the condition: braced or one statement.
        size_t j = i + std::char_traits<char>::length(keyword);
        if (std::string(keyword) != "do" && std::string(keyword) != "else") {
          while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
          if (j < text.size() && text[j] == '(') {
            int level = 0;
            for (; j < text.size(); ++j) {
              if (text[j] == '(') ++level;
              if (text[j] == ')' && --level == 0) { ++j; break; }
            }
          }
        }
        while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        if (j < text.size() && text[j] == '{') {
          ++pending_control;
        } else {
          ++single_statement_controls;
        }
      }
      if (WordAt(text, i, "return")) after_return = true;
    }
    if (!WordAt(text, i, "barrier")) continue;
    size_t j = i + 7;
    while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j >= text.size() || text[j] != '(') continue;  // not a call
    const std::string where = "barrier() at offset " + std::to_string(i);
    if (main_depth != 1) {
      return Status::Error(where + " is outside main()");
    }
    bool controlled = single_statement_controls > 0;
    for (bool block : block_controlled) controlled = controlled || block;
    if (controlled || depth != 1) {
      return Status::Error(where + " is inside control flow");
    }
    if (after_return) return Status::Error(where + " follows a return in main()");
  }
  return Status::Ok();
}

}  // namespace tflite_gles::gl
