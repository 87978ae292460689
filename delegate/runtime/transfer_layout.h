// BHWC -> PHWC4 on the CPU, for small inputs the CPU writes in the GPU's
// own layout (direct transfers, delegate/runtime/runtime_transfer.cc), where a conversion
// dispatch would cost more than the CPU's loop. Elements are copied as bits
// (float or half).
#pragma once

#include <cstddef>
#include <cstring>

#include "delegate/abi/node_view.h"

namespace tflite_gles {

// Bytes of one element of a type that crosses to the GPU through the float
// staging buffers (float32 as is, int32 and bool converted); 0 for any
// other type, which partitions refuse (runtime.cc, runtime_transfer.cc).
inline size_t ElementBytes(abi::Type type) {
  switch (type) {
    case abi::kFloat32: return sizeof(float);
    case abi::kInt32: return sizeof(int32_t);
    case abi::kBool: return 1;
    case abi::kUInt8: return 1;  // quantized: the float view on the GPU
    case abi::kInt8: return 1;
    default: return 0;
  }
}

// Writes every PHWC4 element of `shape` in order, the padded lanes of the
// last slice as zero bits: a write-combined mapping takes whole runs best.
template <typename T>
void BhwcToPhwc4(const T* bhwc, const Shape4& shape, T* phwc4) {
  const int slices = shape.slices();
  const size_t pixels = static_cast<size_t>(shape.h) * shape.w;
  T* out = phwc4;
  for (int b = 0; b < shape.b; ++b) {
    const T* batch = bhwc + static_cast<size_t>(b) * pixels * shape.c;
    for (int s = 0; s < slices; ++s) {
      const int lanes = shape.c - s * 4 < 4 ? shape.c - s * 4 : 4;
      for (size_t p = 0; p < pixels; ++p, out += 4) {
        const T* in = batch + p * shape.c + s * 4;
        for (int k = 0; k < 4; ++k) out[k] = k < lanes ? in[k] : T(0);
      }
    }
  }
}

// The inverse for readbacks (DeviceProfile::cpu_readback_relayout): every
// BHWC element of `shape` from its PHWC4 lane, written in BHWC order (one
// output stream, S input streams); padded lanes are skipped.
template <typename T>
void Phwc4ToBhwc(const T* phwc4, const Shape4& shape, T* bhwc) {
  const int slices = shape.slices();
  const size_t pixels = static_cast<size_t>(shape.h) * shape.w;
  const int whole = shape.c / 4;  // slices whose 4 lanes are all elements
  const int tail = shape.c - whole * 4;
  T* out = bhwc;
  for (int b = 0; b < shape.b; ++b) {
    const T* batch = phwc4 + static_cast<size_t>(b) * slices * pixels * 4;
    for (size_t p = 0; p < pixels; ++p) {
      const T* in = batch + p * 4;
      for (int s = 0; s < whole; ++s, out += 4) {
        std::memcpy(out, in + s * pixels * 4, 4 * sizeof(T));
      }
      for (int k = 0; k < tail; ++k) *out++ = in[whole * pixels * 4 + k];
    }
  }
}

}  // namespace tflite_gles
