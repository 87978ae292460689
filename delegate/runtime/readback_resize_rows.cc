#include "delegate/runtime/readback_resize_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "delegate/runtime/half_convert.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define TFG_ROWS_SSE 1  // SSE2 is part of x86-64
#else
#define TFG_ROWS_SSE 0
#endif

namespace tflite_gles {
namespace {

// Source row `y` of batch `b` interpolated along x into `row` (out_w * c
// floats, plus 4 of slack): per output pixel the source's slices are
// blended as whole vec4s and stored at the pixel's channel offset; a last
// partial slice's extra lanes land on the next pixel's first channels,
// which that pixel then overwrites (the slack takes the last pixel's).
void InterpolateRow(const float* phwc4, const Shape4& in, int b, int y,
                    const std::vector<ResizeSpan>& columns, float* row) {
  const int slices = in.slices();
  const size_t plane = static_cast<size_t>(in.h) * in.w * 4;  // one slice
  const float* base = phwc4 + (static_cast<size_t>(b) * slices * in.h + y) * in.w * 4;
  const size_t c = static_cast<size_t>(in.c);
  float* o = row;
  for (const ResizeSpan& s : columns) {
    const float* left = base + static_cast<size_t>(s.lo) * 4;
    const float* right = base + static_cast<size_t>(s.hi) * 4;
    const float wl = 1.0f - s.frac;
    const float wr = s.frac;
#if TFG_ROWS_SSE
    const __m128 vl = _mm_set1_ps(wl);
    const __m128 vr = _mm_set1_ps(wr);
    for (int k = 0; k < slices; ++k) {
      const __m128 a = _mm_loadu_ps(left + k * plane);
      const __m128 d = _mm_loadu_ps(right + k * plane);
      _mm_storeu_ps(o + 4 * k, _mm_add_ps(_mm_mul_ps(a, vl), _mm_mul_ps(d, vr)));
    }
#else
    for (int k = 0; k < slices; ++k) {
      for (int l = 0; l < 4; ++l) {
        o[4 * k + l] = left[k * plane + l] * wl + right[k * plane + l] * wr;
      }
    }
#endif
    o += c;
  }
}

#if TFG_ROWS_SSE
// BlendRows in 8-float AVX vectors (same multiplies and add, so the same
// results): the rows sit in L1, so the loop is bound by its instructions
// until the stores reach the memory's rate (twice SSE's floats per store).
__attribute__((target("avx"))) size_t BlendRowsAvx(const float* __restrict top,
                                                  const float* __restrict bottom, float frac,
                                                  size_t n, float* __restrict out,
                                                  bool streaming) {
  const __m256 vt = _mm256_set1_ps(1.0f - frac);
  const __m256 vb = _mm256_set1_ps(frac);
  size_t i = 0;
  if (streaming) {
    for (; i < n && (reinterpret_cast<uintptr_t>(out + i) & 31) != 0; ++i) {
      out[i] = top[i] * (1.0f - frac) + bottom[i] * frac;
    }
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(top + i), vt),
                                   _mm256_mul_ps(_mm256_loadu_ps(bottom + i), vb));
    if (streaming) {
      _mm256_stream_ps(out + i, v);
    } else {
      _mm256_storeu_ps(out + i, v);
    }
  }
  return i;  // the caller blends the rest
}

bool HasAvx() {
  static const bool has = __builtin_cpu_supports("avx");
  return has;
}
#endif

// One output row: top * (1 - frac) + bottom * frac over `n` floats.
void BlendRows(const float* __restrict top, const float* __restrict bottom, float frac,
               size_t n, float* __restrict out, bool streaming) {
  const float wt = 1.0f - frac;
  size_t i = 0;
#if TFG_ROWS_SSE
  if (HasAvx()) {
    i = BlendRowsAvx(top, bottom, frac, n, out, streaming);
  } else if (streaming) {
    const __m128 vt = _mm_set1_ps(wt);
    const __m128 vb = _mm_set1_ps(frac);
    // Plain stores up to the output's first 16-byte boundary, then whole vec4s.
    for (; i < n && (reinterpret_cast<uintptr_t>(out + i) & 15) != 0; ++i) {
      out[i] = top[i] * wt + bottom[i] * frac;
    }
    for (; i + 4 <= n; i += 4) {
      const __m128 v = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(top + i), vt),
                                  _mm_mul_ps(_mm_loadu_ps(bottom + i), vb));
      _mm_stream_ps(out + i, v);
    }
  }
#else
  (void)streaming;
#endif
  for (; i < n; ++i) out[i] = top[i] * wt + bottom[i] * frac;
}

// Both entry points: the source is `floats`, or with `halves` fp16 PHWC4
// whose rows are converted per thread as they are needed.
void ResizeRows(const float* floats, const uint16_t* halves, const ReadbackResize& resize,
                const Shape4& out, float* bhwc, std::vector<float>* scratch,
                CopyWorkers* workers, bool streaming) {
  const Shape4& in = resize.source;
  const size_t n = static_cast<size_t>(out.w) * in.c;  // floats per output row
  const size_t slot = n + 4;                           // + InterpolateRow's slack
  // Halves: one source row's slices in floats, read by InterpolateRow as a
  // PHWC4 tensor of one row.
  const size_t source_row = static_cast<size_t>(in.slices()) * in.w * 4;
  const size_t per_thread = slot * 2 + (halves != nullptr ? source_row : 0);
  Shape4 one_row = in;
  one_row.b = 1;
  one_row.h = 1;
  const int threads = workers == nullptr ? 1 : workers->threads();
  scratch->resize(per_thread * static_cast<size_t>(threads));
  std::vector<ResizeSpan> columns(static_cast<size_t>(out.w));
  for (int x = 0; x < out.w; ++x) {
    columns[x] = SourceSpan(x, resize.scale_w, in.w, resize.half_pixel);
  }
  // Output rows (batch-major) [begin, end); `rows` holds two interpolated
  // source rows, reused while consecutive output rows share them (~8 output
  // rows per source row for DeepLab).
  auto band = [&](int begin, int end, float* rows) {
    long long held[2] = {-1, -1};  // b * in.h + y of each slot
    float* slots[2] = {rows, rows + slot};
    float* converted = rows + 2 * slot;
    // The slot of row `key`, interpolated if not held, never evicting `keep`
    // (the other row this output row blends).
    auto get = [&](int b, int y, long long key, long long keep) -> const float* {
      for (int i = 0; i < 2; ++i) {
        if (held[i] == key) return slots[i];
      }
      const int i = held[0] == keep ? 1 : 0;
      if (halves == nullptr) {
        InterpolateRow(floats, in, b, y, columns, slots[i]);
      } else {
        const size_t row = static_cast<size_t>(in.w) * 4;
        for (int k = 0; k < in.slices(); ++k) {
          const size_t at = ((static_cast<size_t>(b) * in.slices() + k) * in.h + y) * row;
          HalvesToFloats(halves + at, converted + k * row, row);
        }
        InterpolateRow(converted, one_row, 0, 0, columns, slots[i]);
      }
      held[i] = key;
      return slots[i];
    };
    for (int r = begin; r < end; ++r) {
      const int b = r / out.h;
      const ResizeSpan s = SourceSpan(r % out.h, resize.scale_h, in.h, resize.half_pixel);
      const long long top_key = static_cast<long long>(b) * in.h + s.lo;
      const long long bottom_key = static_cast<long long>(b) * in.h + s.hi;
      const float* top = get(b, s.lo, top_key, bottom_key);
      const float* bottom = get(b, s.hi, bottom_key, top_key);
      BlendRows(top, bottom, s.frac, n, bhwc + static_cast<size_t>(r) * n, streaming);
    }
#if TFG_ROWS_SSE
    // Non-temporal stores are weakly ordered: each thread fences its own.
    if (streaming) _mm_sfence();
#endif
  };
  const int total = out.b * out.h;
  if (workers == nullptr) {
    band(0, total, scratch->data());
    return;
  }
  workers->ForParts(static_cast<size_t>(out.elements()) * sizeof(float), [&](int part, int parts) {
    const int begin = static_cast<int>(static_cast<long long>(total) * part / parts);
    const int end = static_cast<int>(static_cast<long long>(total) * (part + 1) / parts);
    band(begin, end, scratch->data() + per_thread * static_cast<size_t>(part));
  });
}

}  // namespace

void ResizeBilinearRowsPhwc4ToBhwc(const float* phwc4, const ReadbackResize& resize,
                                   const Shape4& out, float* bhwc, std::vector<float>* scratch,
                                   CopyWorkers* workers, bool streaming) {
  ResizeRows(phwc4, nullptr, resize, out, bhwc, scratch, workers, streaming);
}

void ResizeBilinearRowsHalfPhwc4ToBhwc(const uint16_t* phwc4, const ReadbackResize& resize,
                                       const Shape4& out, float* bhwc,
                                       std::vector<float>* scratch, CopyWorkers* workers,
                                       bool streaming) {
  ResizeRows(nullptr, phwc4, resize, out, bhwc, scratch, workers, streaming);
}

}  // namespace tflite_gles
