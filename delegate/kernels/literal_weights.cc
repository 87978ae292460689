#include "delegate/kernels/literal_weights.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace tflite_gles::kernels {

std::optional<std::vector<float>> SmallConstantData(const Value& value, long long max_vec4) {
  if (value.kind != Value::Kind::kConstant || value.vec4_count() > max_vec4) return std::nullopt;
  std::vector<float> data = value.lazy ? value.lazy->make() : value.constant_data;
  if (data.size() % 4 != 0) return std::nullopt;
  for (float v : data) {
    if (!std::isfinite(v)) return std::nullopt;
  }
  return data;
}

std::string Vec4Literals(const std::vector<float>& data) {
  std::string out;
  out.reserve(data.size() * 16);
  char number[32];
  for (size_t i = 0; i < data.size(); ++i) {
    // %.9g may print an integer ("1") or an exponent ("1e-05"): both are
    // float literals only with a '.' or an exponent, so "1" becomes "1.0".
    std::string text;
    if (std::isfinite(data[i])) {
      std::snprintf(number, sizeof(number), "%.9g", static_cast<double>(data[i]));
      text = number;
      if (text.find_first_of(".e") == std::string::npos) text += ".0";
    } else {  // GLSL has no inf/nan literal: the bits, a constant expression all the same
      uint32_t bits;
      std::memcpy(&bits, &data[i], sizeof(bits));
      std::snprintf(number, sizeof(number), "uintBitsToFloat(0x%08xu)", bits);
      text = number;
    }
    out += (i % 4 == 0 ? (i ? "),vec4(" : "vec4(") : ",") + text;
  }
  if (!data.empty()) out += ")";
  return out;
}

}  // namespace tflite_gles::kernels
