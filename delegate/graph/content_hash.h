// A fast 128-bit content hash (two independent 64-bit lanes over 8-byte
// words), for keys that must change whenever data changes: the model-data
// entries of the serialization cache are named and checked by it
// (delegate/runtime/model_data_cache.h). Not cryptographic: it guards
// against changed or damaged files, not against an attacker who can write
// the cache directory (who could write any program binary there anyway).
// About 1 byte per cycle: a 17 MB model hashes in a few ms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace tflite_gles {

class ContentHash {
 public:
  void Add(const void* data, size_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      Mix(word);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, p + i, bytes - i);
    Mix(tail ^ (static_cast<uint64_t>(bytes - i) << 56));
    Mix(static_cast<uint64_t>(bytes));  // lengths are part of the content
  }
  void Add(const std::string& text) { Add(text.data(), text.size()); }

  // 32 hex digits.
  std::string Hex() const {
    char text[33];
    std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(Final(a_)),
                  static_cast<unsigned long long>(Final(b_)));
    return text;
  }

 private:
  void Mix(uint64_t word) {
    a_ = Rotate((a_ ^ word) * 0x9E3779B97F4A7C15ull, 29);
    b_ = Rotate((b_ + word) * 0xC2B2AE3D27D4EB4Full, 31) ^ a_;
  }
  static uint64_t Rotate(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static uint64_t Final(uint64_t x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    return x ^ (x >> 33);
  }
  uint64_t a_ = 0x243F6A8885A308D3ull;
  uint64_t b_ = 0x13198A2E03707344ull;
};

}  // namespace tflite_gles
