#include "delegate/runtime/shader_dump.h"

#include <cctype>
#include <cstdio>

namespace tflite_gles {

void DumpStep(const std::string& folder, const uint32_t (&groups)[3],
              const Dispatch& dispatch, const std::string& source,
              const std::vector<int32_t>& uniforms) {
  static int counter = 0;
  std::string name = dispatch.label.substr(0, 40);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%04d_", counter++);
  const std::string path = folder + "/" + prefix + name + ".comp";
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return;
  std::fprintf(file, "%s\n// @dump label %s\n// @dump shader %s\n", source.c_str(),
               dispatch.label.c_str(), dispatch.shader.c_str());
  std::fprintf(file, "// @dump groups %u %u %u\n// @dump flops %lld\n// @dump uniforms",
               groups[0], groups[1], groups[2], static_cast<long long>(dispatch.flops));
  for (int32_t value : uniforms) std::fprintf(file, " %d", value);
  std::fprintf(file, "\n// @dump bindings outputs %zu inputs %zu read_write %zu\n",
               dispatch.outputs.size(), dispatch.inputs.size(), dispatch.read_write.size());
  std::fclose(file);
}

}  // namespace tflite_gles
