// Prints the kernel registry's support table, one JSON object per line:
//   {"op": "ADD", "quantized_max_version": 2, "kernels": [{"name":
//    "elementwise", "max_version": 5, "summary": "...", "declines": "..."}]}
// quantized_max_version is the newest version of the op's quantized form
// (uint8/int8 tensors or hybrid int8 weights) that runs in the float view,
// 0 for none (delegate/graph/quantization.h).
// tools/gen_ops_doc.py turns it into docs/ops.md, so the op table is made
// from the code that decides support (one source of truth).
#include <cstdio>
#include <string>

#include "delegate/abi/tflite_builtin.h"
#include "delegate/graph/quantization.h"
#include "delegate/kernels/registry.h"

namespace {

// A JSON string literal for `text` (null -> JSON null).
std::string JsonString(const char* text) {
  if (text == nullptr) return "null";
  std::string out = "\"";
  for (const char* p = text; *p != '\0'; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// The quantized form's newest version for a registry op name ("CONV_2D");
// custom ops ("CUSTOM name") have none.
int QuantizedMaxVersionOf(const std::string& op) {
  for (int32_t code = 0; code <= tflite_gles::abi::kMaxKnownBuiltinOperator; ++code) {
    if (op == tflite_gles::abi::BuiltinOperatorName(code)) {
      return tflite_gles::QuantizedMaxVersion(code);
    }
  }
  return 0;
}

}  // namespace

int main() {
  using tflite_gles::KernelRegistry;
  for (const auto& entry : KernelRegistry::Global().Table()) {
    std::string line = "{\"op\": " + JsonString(entry.op.c_str()) +
                       ", \"quantized_max_version\": " +
                       std::to_string(QuantizedMaxVersionOf(entry.op)) +
                       ", \"kernels\": [";
    bool first = true;
    for (const auto* candidate : entry.candidates) {
      line += std::string(first ? "" : ", ") + "{\"name\": " +
              JsonString(candidate->name) +
              ", \"max_version\": " + std::to_string(candidate->max_version) +
              ", \"summary\": " + JsonString(candidate->summary) +
              ", \"declines\": " + JsonString(candidate->declines) + "}";
      first = false;
    }
    line += "]}";
    std::printf("%s\n", line.c_str());
  }
  return 0;
}
