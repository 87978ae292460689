// Bulk float <-> half conversion for tensors crossing to and from fp16 GPU
// storage (inputs staged as halves, outputs read straight from fp16
// tensors). Round-to-nearest-even like FloatToHalf (delegate/abi/half.h), with
// bit-identical results but for the payload bits of NaNs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tflite_gles {

// Uses the CPU's F16C instructions where it has them (8 values per
// instruction), the portable FloatToHalf/HalfToFloat elsewhere.
void FloatsToHalves(const float* in, uint16_t* out, size_t count);
void HalvesToFloats(const uint16_t* in, float* out, size_t count);

// Whether the conversions above run on F16C (for benchmarks and tests).
bool HasF16c();

}  // namespace tflite_gles
