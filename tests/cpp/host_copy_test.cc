// The streaming-store copies (delegate/runtime/host_copy.h) against plain memcpy and
// FloatsToHalves on random bytes, at every alignment of source and
// destination and lengths around the 16- and 64-byte steps: a misaligned
// head, a short tail or an off-by-one in the bulk loop shows as a mismatch
// or as a write past the end (guard bytes).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <vector>

#include "delegate/runtime/half_convert.h"
#include "delegate/runtime/host_copy.h"

namespace tflite_gles {
namespace {

constexpr unsigned char kGuard = 0xA5;

TEST(HostCopy, StreamingCopyMatchesMemcpyAtEveryAlignment) {
  std::mt19937 rng(7);
  std::vector<unsigned char> src(4096 + 64);
  for (auto& b : src) b = static_cast<unsigned char>(rng());
  for (size_t bytes : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 127u, 200u, 1000u, 4096u}) {
    for (size_t src_off = 0; src_off < 16; src_off += 3) {
      for (size_t dst_off = 0; dst_off < 16; ++dst_off) {
        std::vector<unsigned char> dst(bytes + 48, kGuard);
        StreamingCopy(dst.data() + dst_off, src.data() + src_off, bytes);
        ASSERT_EQ(std::memcmp(dst.data() + dst_off, src.data() + src_off, bytes), 0)
            << bytes << " bytes, src +" << src_off << ", dst +" << dst_off;
        for (size_t i = 0; i < dst_off; ++i) ASSERT_EQ(dst[i], kGuard) << "before, " << bytes;
        for (size_t i = dst_off + bytes; i < dst.size(); ++i) {
          ASSERT_EQ(dst[i], kGuard) << "past the end, " << bytes << " bytes, dst +" << dst_off;
        }
      }
    }
  }
}

TEST(HostCopy, StreamingHalvesMatchFloatsToHalves) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-70000.0f, 70000.0f);
  std::vector<float> in(1100);
  for (auto& v : in) v = value(rng) * (rng() % 4 == 0 ? 1e-6f : 1.0f);
  for (size_t count : {0u, 1u, 7u, 8u, 9u, 31u, 100u, 1024u, 1099u}) {
    for (size_t out_off = 0; out_off < 8; ++out_off) {  // in halves: 2-byte steps
      std::vector<uint16_t> expected(count);
      FloatsToHalves(in.data() + 1, expected.data(), count);
      std::vector<uint16_t> out(count + 24, 0xA5A5);
      FloatsToHalvesStreaming(in.data() + 1, out.data() + out_off, count);
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(out[out_off + i], expected[i]) << "half " << i << " of " << count << " at +"
                                                 << out_off;
      }
      for (size_t i = 0; i < out_off; ++i) ASSERT_EQ(out[i], 0xA5A5);
      for (size_t i = out_off + count; i < out.size(); ++i) {
        ASSERT_EQ(out[i], 0xA5A5) << "past the end, " << count << " at +" << out_off;
      }
    }
  }
}

// CopyWorkers (megabyte copies on threads): every byte of sizes around the
// split threshold, odd lengths and misaligned ends, streaming or not, on 1-5
// threads, and the same object reused (its workers sleep between copies).
TEST(HostCopy, CopyWorkersMatchMemcpyAroundTheSplit) {
  std::mt19937 rng(13);
  const size_t min_part = CopyWorkers::kMinPartBytes;
  std::vector<unsigned char> src(5 * min_part + 4096);
  for (auto& b : src) b = static_cast<unsigned char>(rng());
  for (int threads : {1, 2, 3, 5}) {
    CopyWorkers workers(threads);
    for (size_t bytes : {size_t{0}, size_t{100}, min_part, 2 * min_part - 1, 2 * min_part,
                         2 * min_part + 7, 3 * min_part + 33, 5 * min_part + 1001}) {
      for (bool streaming : {false, true}) {
        for (size_t off : {size_t{0}, size_t{5}}) {
          std::vector<unsigned char> dst(bytes + 64, kGuard);
          workers.Copy(dst.data() + off, src.data() + 3, bytes, streaming);
          ASSERT_EQ(std::memcmp(dst.data() + off, src.data() + 3, bytes), 0)
              << bytes << " bytes on " << threads << " threads";
          for (size_t i = 0; i < off; ++i) ASSERT_EQ(dst[i], kGuard);
          for (size_t i = off + bytes; i < dst.size(); ++i) {
            ASSERT_EQ(dst[i], kGuard) << "past the end, " << bytes << " on " << threads;
          }
        }
      }
    }
  }
}

TEST(HostCopy, CopyWorkersHalvesMatchFloatsToHalves) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> value(-70000.0f, 70000.0f);
  const size_t floats = 3 * CopyWorkers::kMinPartBytes / sizeof(float) + 77;
  std::vector<float> in(floats);
  for (auto& v : in) v = value(rng);
  std::vector<uint16_t> expected(floats);
  FloatsToHalves(in.data(), expected.data(), floats);
  CopyWorkers workers(4);
  for (size_t out_off : {0u, 3u}) {
    std::vector<uint16_t> out(floats + 16, 0xA5A5);
    workers.ConvertToHalves(in.data(), out.data() + out_off, floats);
    for (size_t i = 0; i < floats; ++i) ASSERT_EQ(out[out_off + i], expected[i]) << i;
    for (size_t i = out_off + floats; i < out.size(); ++i) ASSERT_EQ(out[i], 0xA5A5);
  }
}

// CopyWorkers::Banded (runtime_bands.cc's pipelining): every part of a band
// runs after the caller's before(band), after(band) sees the whole band
// done, and a failed step ends the transfer without running later bands.
TEST(HostCopy, BandedPartsRunBetweenTheirBandsSteps) {
  const int bands = 5;
  const size_t band_bytes = 3000;
  for (int threads : {1, 3}) {
    CopyWorkers workers(threads, 256);
    std::vector<std::atomic<int>> started(bands), parts_done(bands);
    for (int b = 0; b < bands; ++b) started[b] = 0, parts_done[b] = 0;
    std::vector<int> released_log, after_log;
    std::atomic<bool> order_broken{false};
    std::atomic<int> parts_seen{0};
    bool ok = workers.Banded(
        bands * band_bytes, bands,
        [&](int band) {
          released_log.push_back(band);
          started[band] = 1;
          return true;
        },
        [&](int band, int, int parts) {
          if (!started[band]) order_broken = true;
          parts_seen = parts;
          ++parts_done[band];
        },
        [&](int band) {
          if (parts_done[band] != parts_seen) order_broken = true;
          after_log.push_back(band);
          return true;
        });
    EXPECT_TRUE(ok);
    EXPECT_FALSE(order_broken) << threads << " threads";
    EXPECT_EQ(parts_seen.load(), threads);
    EXPECT_EQ(released_log, (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_EQ(after_log, (std::vector<int>{0, 1, 2, 3, 4}));
    // A failed before(2): bands 2.. run no part, and the call says so.
    for (int b = 0; b < bands; ++b) parts_done[b] = 0;
    ok = workers.Banded(
        bands * band_bytes, bands, [&](int band) { return band < 2; },
        [&](int band, int, int) { ++parts_done[band]; }, nullptr);
    EXPECT_FALSE(ok);
    EXPECT_EQ(parts_done[1].load(), threads);
    EXPECT_EQ(parts_done[2].load() + parts_done[3].load() + parts_done[4].load(), 0);
  }
}

}  // namespace
}  // namespace tflite_gles
