// Build-time shader tool.
//
//   shader_tool validate GLSLANG WORKDIR STAMP file.comp [LIMITS.conf]
//     Assembles every variant the file declares (each @axis choice, fp32 and
//     fp16 storage, samplerBuffer and SSBO reads) with the same code the
//     runtime uses, and runs glslangValidator on all of them. Any error fails
//     the build, as does a barrier() outside what GLSL ES 3.10 allows
//     (gl::CheckBarrierPlacement); the stamp file is written only on success.
//     LIMITS (tools/gles31_minimum.conf): glslang's resource limits set to
//     the GLES 3.1 minimums, so that a workgroup size, sampler or image
//     binding of a variant (with its declared example values) beyond them
//     fails the build, and the default workgroup must hold at most 128
//     invocations. What depends on run-time choices (the kernels' workgroup
//     sizes, the number of buffers a fused dispatch binds) is checked on the
//     linked program before its first dispatch (egl/program_limits.h).
//   shader_tool embed OUT.cc file.comp...
//     Writes the C++ source that embeds the files as raw strings, served by
//     gl::EmbeddedShader(name).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "egl/shader_source.h"

namespace {

using tflite_gles::gl::AssembleShader;
using tflite_gles::gl::CheckBarrierPlacement;
using tflite_gles::gl::ParseShaderDeclaration;
using tflite_gles::gl::StorageChoice;

bool ReadFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream out;
  out << in.rdbuf();
  *text = out.str();
  return true;
}

std::string BaseName(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  return name.substr(0, name.find('.'));
}

int Validate(const std::string& glslang, const std::string& workdir,
             const std::string& stamp, const std::string& path,
             const std::string& limits) {
  std::string source;
  if (!ReadFile(path, &source)) {
    std::cerr << "shader_tool: cannot read " << path << "\n";
    return 1;
  }
  const std::string name = BaseName(path);
  auto declaration = ParseShaderDeclaration(source);
  if (!declaration.ok()) {
    std::cerr << path << ": " << declaration.status().message() << "\n";
    return 1;
  }
  if (!limits.empty()) {
    // The example workgroup: GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS is 128 at
    // the GLES 3.1 minimum, and glslang checks each axis only.
    long long invocations = 1;
    for (const char* axis : {"LOCAL_X", "LOCAL_Y", "LOCAL_Z"}) {
      auto it = declaration->constants.find(axis);
      if (it != declaration->constants.end()) invocations *= std::atoll(it->second.c_str());
    }
    if (invocations > 128) {
      std::cerr << path << ": the example workgroup has " << invocations
                << " invocations; the GLES 3.1 minimum is 128\n";
      return 1;
    }
  }
  // Cartesian product of the axes.
  std::vector<std::map<std::string, std::string>> variants = {
      declaration->constants};
  for (const auto& axis : declaration->axes) {
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& variant : variants) {
      for (const std::string& choice : axis) {
        auto extended = variant;
        if (choice != "-") extended[choice] = "1";
        next.push_back(extended);
      }
    }
    variants.swap(next);
  }
  // Files go to glslangValidator in batches: one shell command line must
  // stay under Linux's 128 KiB limit per argument (MAX_ARG_STRLEN).
  std::vector<std::string> batches(1);
  int count = 0;
  // A shader with @uniform names is also validated with them compiled in
  // (AssembleShader's `specialize`), with their example values.
  const int modes = declaration->uniforms.empty() ? 1 : 2;
  for (const auto& variant : variants) {
    // fp16 x (SSBO reads, texture-buffer reads, SSBO reads with staging
    // through a texture buffer, RGBA textures with that staging), x shapes
    // as uniforms or compiled in.
    for (int index = 0; index < 8 * modes; ++index) {
      const int storage_index = index % 8;
      StorageChoice storage;
      storage.fp16 = storage_index & 1;
      storage.texture_buffer_reads = (storage_index & 6) == 2;
      storage.staging_texture_reads = (storage_index & 6) >= 4;
      storage.rgba_textures = (storage_index & 6) == 6;
      // Both addressings of RGBA textures: rows of the texture's own width
      // (fp32 here), rows of 2^11 texels (fp16).
      storage.texture_row_shift = storage_index == 7 ? 11 : 0;
      const bool specialize = index >= 8;
      auto defines = variant;
      if (specialize) {
        defines.insert(declaration->uniform_examples.begin(),
                       declaration->uniform_examples.end());
      }
      auto text = AssembleShader(name, source, storage, defines, specialize);
      if (!text.ok()) {
        std::cerr << path << ": " << text.status().message() << "\n";
        return 1;
      }
      const std::string file =
          workdir + "/" + name + "." + std::to_string(count++) + ".comp";
      std::ofstream(file) << *text;
      // Where barrier() is used, GLSL ES 3.10's placement rule on the
      // preprocessed text (macros expanded) of each axis combination; the
      // storage choice does not move barriers, so one storage suffices.
      if (index == 0 && source.find("barrier") != std::string::npos) {
        const std::string expanded = file + ".pre";
        const std::string command = "'" + glslang + "' -E '" + file + "' > '" +
                                    expanded + "' 2>&1";
        std::string preprocessed;
        if (std::system(command.c_str()) != 0 || !ReadFile(expanded, &preprocessed)) {
          std::cerr << "shader_tool: glslangValidator -E failed on " << file << "\n";
          return 1;
        }
        auto placement = CheckBarrierPlacement(preprocessed);
        if (!placement.ok()) {
          std::cerr << path << ": " << placement.message() << " of " << expanded
                    << " (GLSL ES 3.10 allows barrier() only directly in main, "
                       "outside control flow, before any return)\n";
          return 1;
        }
      }
      if (batches.back().size() > 64 * 1024) batches.emplace_back();
      batches.back() += " '" + file + "'";
    }
  }
  // All variants in one glslangValidator run; on failure show only the
  // first errors (every variant usually fails the same way).
  const std::string log = workdir + "/" + name + ".log";
  bool failed = false;
  for (size_t b = 0; b < batches.size() && !failed; ++b) {
    const std::string command =
        "'" + glslang + "' --quiet -S comp" + batches[b] +
        (limits.empty() ? "" : " '" + limits + "'") + (b == 0 ? " > '" : " >> '") + log +
        "' 2>&1";
    failed = std::system(command.c_str()) != 0;
  }
  if (failed) {
    std::string output;
    ReadFile(log, &output);
    std::cerr << output.substr(0, 3000)
              << "\nshader_tool: glslangValidator rejected variants of " << path
              << " (full log: " << log
              << "; the file named first holds the variant's full source)\n";
    return 1;
  }
  std::ofstream(stamp) << count << " variants validated\n";
  return 0;
}

int Embed(const std::string& out_path, const std::vector<std::string>& paths) {
  std::ostringstream out;
  out << "// Generated by tools/shader_tool from shaders/*.comp. Do not edit.\n"
         "#include <map>\n#include <string>\n#include \"egl/shader_source.h\"\n"
         "namespace tflite_gles::gl {\nnamespace {\n"
         "const std::map<std::string, const char*>& Shaders() {\n"
         "  static const auto* shaders = new std::map<std::string, const char*>{\n";
  for (const std::string& path : paths) {
    std::string source;
    if (!ReadFile(path, &source)) {
      std::cerr << "shader_tool: cannot read " << path << "\n";
      return 1;
    }
    if (source.find(")TFGSHADER\"") != std::string::npos) {
      std::cerr << path << ": contains the raw string delimiter\n";
      return 1;
    }
    out << "    {\"" << BaseName(path) << "\", R\"TFGSHADER(" << source
        << ")TFGSHADER\"},\n";
  }
  out << "  };\n  return *shaders;\n}\n}  // namespace\n"
         "StatusOr<std::string> EmbeddedShader(const std::string& name) {\n"
         "  auto it = Shaders().find(name);\n"
         "  if (it == Shaders().end())\n"
         "    return Status::Error(\"no embedded shader named '\" + name + \"'\");\n"
         "  return std::string(it->second);\n}\n"
         "}  // namespace tflite_gles::gl\n";
  std::ofstream file(out_path);
  file << out.str();
  return file ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if ((args.size() == 5 || args.size() == 6) && args[0] == "validate") {
    return Validate(args[1], args[2], args[3], args[4], args.size() == 6 ? args[5] : "");
  }
  if (args.size() >= 2 && args[0] == "embed") {
    return Embed(args[1], std::vector<std::string>(args.begin() + 2, args.end()));
  }
  std::cerr << "usage: shader_tool validate GLSLANG WORKDIR STAMP file.comp [LIMITS.conf]\n"
               "       shader_tool embed OUT.cc file.comp...\n";
  return 2;
}
