#include "delegate/runtime/readback_resize.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "delegate/runtime/transfer_layout.h"

namespace tflite_gles {
namespace {

// kernels::FloatLiteral's "float(%.9e)", which gives the float back exactly.
bool ParseFloatLiteral(const std::string& text, float* value) {
  const size_t open = text.find('(');
  if (open == std::string::npos) return false;
  const char* start = text.c_str() + open + 1;
  char* end = nullptr;
  *value = std::strtof(start, &end);
  return end != start && *end == ')' && std::isfinite(*value) && *value > 0.0f;
}

}  // namespace

ResizeSpan SourceSpan(int o, float scale, int size, bool half_pixel) {
  const float source = half_pixel ? (static_cast<float>(o) + 0.5f) * scale - 0.5f
                                  : static_cast<float>(o) * scale;
  ResizeSpan span;
  span.lo = std::max(static_cast<int>(std::floor(source)), 0);
  span.hi = std::min(static_cast<int>(std::ceil(source)), size - 1);
  span.frac = source - static_cast<float>(span.lo);
  return span;
}

ReadbackResize ReadbackResizeOf(const Dispatch& dispatch, const Shape4& source) {
  ReadbackResize resize;
  const auto& d = dispatch.defines;
  if (dispatch.shader != "resize" || d.count("BILINEAR") == 0 || d.count("SCALE_H") == 0 ||
      d.count("SCALE_W") == 0 || d.count("IN_H") == 0 || d.count("IN_W") == 0) {
    return resize;
  }
  if (d.at("IN_H") != std::to_string(source.h) || d.at("IN_W") != std::to_string(source.w)) {
    return resize;
  }
  if (!ParseFloatLiteral(d.at("SCALE_H"), &resize.scale_h) ||
      !ParseFloatLiteral(d.at("SCALE_W"), &resize.scale_w)) {
    return resize;
  }
  resize.source = source;
  resize.half_pixel = d.count("HALF_PIXEL") > 0;
  resize.active = true;
  return resize;
}

void ResizeBilinearPhwc4ToBhwc(const float* phwc4, const ReadbackResize& resize,
                               const Shape4& out, float* bhwc,
                               std::vector<float>* scratch, CopyWorkers* workers) {
  const Shape4& in = resize.source;
  const size_t c = static_cast<size_t>(in.c);
  const size_t row = static_cast<size_t>(in.w) * c;
  const size_t source_floats = static_cast<size_t>(in.elements());
  const int threads = workers == nullptr ? 1 : workers->threads();
  scratch->resize(source_floats + row * static_cast<size_t>(threads));
  float* source = scratch->data();
  // The source in BHWC first (a few thousand vec4s): then both passes below
  // walk contiguous channel runs, which the compiler vectorises.
  Phwc4ToBhwc(phwc4, in, source);
  std::vector<ResizeSpan> columns(static_cast<size_t>(out.w));
  for (int x = 0; x < out.w; ++x) {
    columns[x] = SourceSpan(x, resize.scale_w, in.w, resize.half_pixel);
  }
  // Output rows (batch-major) [begin, end), with `blended` one source row.
  auto rows = [&](int begin, int end, float* blended) {
    for (int r_index = begin; r_index < end; ++r_index) {
      const int b = r_index / out.h;
      const int y = r_index % out.h;
      const float* image = source + static_cast<size_t>(b) * in.h * row;
      float* o = bhwc + static_cast<size_t>(r_index) * out.w * c;
      // Along y, the whole source row at once; then along x per pixel.
      // Separable: the same weights as TFLite's four-term sum, rounded in
      // another order (a few ulp).
      const ResizeSpan r = SourceSpan(y, resize.scale_h, in.h, resize.half_pixel);
      const float* top = image + static_cast<size_t>(r.lo) * row;
      const float* bottom = image + static_cast<size_t>(r.hi) * row;
      for (size_t i = 0; i < row; ++i) {
        blended[i] = top[i] * (1.0f - r.frac) + bottom[i] * r.frac;
      }
      for (int x = 0; x < out.w; ++x, o += c) {
        const ResizeSpan& s = columns[x];
        const float* left = blended + static_cast<size_t>(s.lo) * c;
        const float* right = blended + static_cast<size_t>(s.hi) * c;
        for (size_t k = 0; k < c; ++k) {
          o[k] = left[k] * (1.0f - s.frac) + right[k] * s.frac;
        }
      }
    }
  };
  const int total_rows = out.b * out.h;
  if (workers == nullptr) {
    rows(0, total_rows, source + source_floats);
    return;
  }
  // On real GPUs the copy threads share the rows: DeepLab's 257x257x21
  // output is 5.5 MB of writes, which one core does at memcpy speed at best.
  const size_t out_bytes = static_cast<size_t>(out.elements()) * sizeof(float);
  workers->ForParts(out_bytes, [&](int part, int parts) {
    const int begin = static_cast<int>(static_cast<long long>(total_rows) * part / parts);
    const int end = static_cast<int>(static_cast<long long>(total_rows) * (part + 1) / parts);
    rows(begin, end, source + source_floats + row * static_cast<size_t>(part));
  });
}

}  // namespace tflite_gles
