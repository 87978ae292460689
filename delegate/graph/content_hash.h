// A fast 128-bit content hash, for keys that must change whenever data
// changes: the model-data entries of the serialization cache are named,
// keyed and checked by it (delegate/runtime/model_data_cache.h). Not
// cryptographic: it guards against changed or damaged files, not against an
// attacker who can write the cache directory (who could write any program
// binary there anyway).
//
// Four independent lanes each take every fourth 8-byte word (multiply,
// rotate, multiply), so the CPU runs four multiply chains at once: about
// 4 bytes per cycle, at or near memory bandwidth, where the one serial
// chain it replaces did about 1 (a filled start hashes every cached weight
// twice: the key reads the model's tensors, the check reads the entry;
// docs/perf/log.md, "cold2"). Every word of the input reaches one lane and
// every lane both halves of the result, so a change of any byte changes it.
//
// Two ways to feed it: Add(data, n) hashes a field (its length, then its
// bytes: "ab"+"c" and "a"+"bc" differ), AddBytes(data, n) a stream (chunks
// of any size hash like the concatenation: what a file read piece by piece
// needs).
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
    const uint64_t length = bytes;
    AddBytes(&length, sizeof(length));
    AddBytes(data, bytes);
  }
  void Add(const std::string& text) { Add(text.data(), text.size()); }

  void AddBytes(const void* data, size_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    total_ += bytes;
    if (pending_ > 0) {  // complete the stripe an earlier call began
      const size_t take = bytes < kStripe - pending_ ? bytes : kStripe - pending_;
      std::memcpy(stripe_ + pending_, p, take);
      pending_ += take;
      p += take;
      bytes -= take;
      if (pending_ < kStripe) return;
      Stripe(stripe_);
      pending_ = 0;
    }
    for (; bytes >= kStripe; p += kStripe, bytes -= kStripe) Stripe(p);
    std::memcpy(stripe_, p, bytes);
    pending_ = bytes;
  }

  // 32 hex digits.
  std::string Hex() const {
    uint64_t a = 0, b = 0;
    Digest(&a, &b);
    char text[33];
    std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return text;
  }
  // The same 128 bits as 16 bytes (a in little-endian order, then b).
  void Raw(uint8_t out[16]) const {
    uint64_t a = 0, b = 0;
    Digest(&a, &b);
    for (int i = 0; i < 8; ++i) {
      out[i] = static_cast<uint8_t>(a >> (8 * i));
      out[8 + i] = static_cast<uint8_t>(b >> (8 * i));
    }
  }

 private:
  static constexpr size_t kStripe = 32;
  static constexpr uint64_t kM1 = 0x9E3779B185EBCA87ull;
  static constexpr uint64_t kM2 = 0xC2B2AE3D27D4EB4Full;

  static uint64_t Rotate(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static uint64_t Round(uint64_t lane, uint64_t word) {
    return Rotate(lane + word * kM2, 31) * kM1;
  }
  static uint64_t Word(const uint8_t* p) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    return word;
  }
  void Stripe(const uint8_t* p) {
    lane_[0] = Round(lane_[0], Word(p));
    lane_[1] = Round(lane_[1], Word(p + 8));
    lane_[2] = Round(lane_[2], Word(p + 16));
    lane_[3] = Round(lane_[3], Word(p + 24));
  }
  static uint64_t Avalanche(uint64_t x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    return x ^ (x >> 33);
  }
  // Folds the lanes, the unfinished stripe and the length into two words;
  // the state itself is left as it is (more bytes may follow).
  void Digest(uint64_t* a, uint64_t* b) const {
    uint64_t lane[4] = {lane_[0], lane_[1], lane_[2], lane_[3]};
    uint8_t tail[kStripe] = {};
    std::memcpy(tail, stripe_, pending_);
    for (int i = 0; i < 4; ++i) lane[i] = Round(lane[i], Word(tail + 8 * i));
    const uint64_t length = total_ * kM1;
    uint64_t x = Rotate(lane[0], 1) + Rotate(lane[1], 7) + Rotate(lane[2], 12) +
                 Rotate(lane[3], 18) + length;
    uint64_t y = Rotate(lane[0], 41) ^ Rotate(lane[1], 29) ^ Rotate(lane[2], 53) ^
                 Rotate(lane[3], 5) ^ ~length;
    for (int i = 0; i < 4; ++i) {
      x = Round(x, lane[i]);
      y = Round(y ^ x, lane[3 - i]);
    }
    *a = Avalanche(x);
    *b = Avalanche(y + x);
  }

  uint64_t lane_[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
                       0x082EFA98EC4E6C89ull};
  uint8_t stripe_[kStripe] = {};
  size_t pending_ = 0;
  uint64_t total_ = 0;
};

}  // namespace tflite_gles
