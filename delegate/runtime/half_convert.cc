#include "delegate/runtime/half_convert.h"

#include "delegate/abi/half.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TFG_HAVE_X86 1
#else
#define TFG_HAVE_X86 0
#endif

namespace tflite_gles {
namespace {

void FloatsToHalvesPortable(const float* in, uint16_t* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = FloatToHalf(in[i]);
}

void HalvesToFloatsPortable(const uint16_t* in, float* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = HalfToFloat(in[i]);
}

#if TFG_HAVE_X86
// Compiled for F16C+AVX whatever the build's -march; only called after
// __builtin_cpu_supports says the CPU has them.
__attribute__((target("avx,f16c"))) void FloatsToHalvesF16c(const float* in,
                                                            uint16_t* out,
                                                            size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  FloatsToHalvesPortable(in + i, out + i, count - i);
}

__attribute__((target("avx,f16c"))) void HalvesToFloatsF16c(const uint16_t* in,
                                                            float* out,
                                                            size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  HalvesToFloatsPortable(in + i, out + i, count - i);
}
#endif

}  // namespace

bool HasF16c() {
#if TFG_HAVE_X86
  static const bool has = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return has;
#else
  return false;
#endif
}

void FloatsToHalves(const float* in, uint16_t* out, size_t count) {
#if TFG_HAVE_X86
  if (HasF16c()) return FloatsToHalvesF16c(in, out, count);
#endif
  FloatsToHalvesPortable(in, out, count);
}

void HalvesToFloats(const uint16_t* in, float* out, size_t count) {
#if TFG_HAVE_X86
  if (HasF16c()) return HalvesToFloatsF16c(in, out, count);
#endif
  HalvesToFloatsPortable(in, out, count);
}

}  // namespace tflite_gles
