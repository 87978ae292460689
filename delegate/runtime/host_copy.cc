#include "delegate/runtime/host_copy.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "delegate/runtime/half_convert.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define TFG_STREAMING_STORES 1  // SSE2 is part of x86-64
#else
#define TFG_STREAMING_STORES 0
#endif

namespace tflite_gles {
namespace {

#if TFG_STREAMING_STORES
// Bytes until `p` is 16-byte aligned.
size_t HeadBytes(const void* p) {
  return (16 - (reinterpret_cast<uintptr_t>(p) & 15)) & 15;
}

__attribute__((target("avx,f16c"))) void FloatsToHalvesStreamingF16c(
    const float* in, uint16_t* out, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  _mm_sfence();
  FloatsToHalves(in + i, out + i, count - i);
}
#endif

}  // namespace

void SpinPause() {
#if TFG_STREAMING_STORES
  _mm_pause();
#endif
}

void StreamingCopy(void* dst, const void* src, size_t bytes) {
#if TFG_STREAMING_STORES
  char* out = static_cast<char*>(dst);
  const char* in = static_cast<const char*>(src);
  const size_t head = HeadBytes(out) < bytes ? HeadBytes(out) : bytes;
  std::memcpy(out, in, head);
  out += head;
  in += head;
  bytes -= head;
  // Four lines' worth per iteration: loads may be unaligned, stores are not.
  for (; bytes >= 64; bytes -= 64, in += 64, out += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(out), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + 48), d);
  }
  // Streaming stores are weakly ordered: fence them before the GL commands
  // that make the GPU read the bytes.
  _mm_sfence();
  std::memcpy(out, in, bytes);
#else
  std::memcpy(dst, src, bytes);
#endif
}

void FloatsToHalvesStreaming(const float* in, uint16_t* out, size_t count) {
#if TFG_STREAMING_STORES
  if (HasF16c()) {
    // Convert the elements before the first 16-byte boundary plainly.
    const size_t head = HeadBytes(out) / 2 < count ? HeadBytes(out) / 2 : count;
    FloatsToHalves(in, out, head);
    return FloatsToHalvesStreamingF16c(in + head, out + head, count - head);
  }
#endif
  FloatsToHalves(in, out, count);
}

CopyWorkers::~CopyWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void CopyWorkers::Work(int index) {
  unsigned long seen = 0;
  for (;;) {
    const std::function<void(int)>* task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= parts_) continue;  // this copy has fewer parts
      task = task_;
    }
    (*task)(index);
    std::lock_guard<std::mutex> lock(mutex_);
    if (--pending_ == 0) done_.notify_one();
  }
}

void CopyWorkers::Run(int parts, const std::function<void(int)>& part) {
  if (parts <= 1) {
    part(0);
    return;
  }
  const int threaded = StartWorkers(parts);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &part;
    parts_ = threaded;
    pending_ = threaded - 1;
    ++generation_;
  }
  wake_.notify_all();
  part(0);
  for (int i = threaded; i < parts; ++i) part(i);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
  task_ = nullptr;
}

int CopyWorkers::StartWorkers(int parts) {
  // Threads that cannot start leave their parts to the caller.
  while (static_cast<int>(workers_.size()) < parts - 1) {
    try {
      workers_.emplace_back(&CopyWorkers::Work, this, static_cast<int>(workers_.size()) + 1);
    } catch (...) {
      break;
    }
  }
  return std::min(parts, static_cast<int>(workers_.size()) + 1);
}

namespace {
// Parts of whole 64-byte lines, each at least `min_part`, at most `threads`.
int PartsFor(size_t bytes, int threads, size_t min_part) {
  const size_t parts = bytes / min_part;
  return parts < 1 ? 1 : static_cast<int>(std::min<size_t>(parts, threads));
}
}  // namespace

void CopyWorkers::Copy(void* dst, const void* src, size_t bytes, bool streaming) {
  const int parts = PartsFor(bytes, threads_, min_part_bytes_);
  const size_t step = (bytes / parts) & ~static_cast<size_t>(63);
  Run(parts, [&](int i) {
    const size_t begin = step * i;
    const size_t size = i + 1 == parts ? bytes - begin : step;
    char* out = static_cast<char*>(dst) + begin;
    const char* in = static_cast<const char*>(src) + begin;
    if (streaming) {
      StreamingCopy(out, in, size);
    } else {
      std::memcpy(out, in, size);
    }
  });
}

void CopyWorkers::ConvertToHalves(const float* in, uint16_t* out, size_t count) {
  const int parts = PartsFor(count * sizeof(float), threads_, min_part_bytes_);
  const size_t step = (count / parts) & ~static_cast<size_t>(31);  // 64-byte lines of halves
  Run(parts, [&](int i) {
    const size_t begin = step * i;
    const size_t size = i + 1 == parts ? count - begin : step;
    FloatsToHalvesStreaming(in + begin, out + begin, size);
  });
}

bool CopyWorkers::Banded(size_t bytes, int bands, const BandStep& before,
                         const std::function<void(int, int, int)>& work,
                         const BandStep& after) {
  // Every part waits for its band to be released: all at once, not the
  // caller's leftovers after its own (Run), or the caller would wait for
  // itself. The waits spin: a band lasts tens of microseconds, about what
  // a sleeping thread takes to wake. Without `before` every band is free
  // from the start; without `after` the caller waits for no band's parts.
  const int parts = StartWorkers(PartsFor(bytes, threads_, min_part_bytes_));
  std::atomic<int> released{before ? -1 : bands - 1};
  // The first band no part may run (a step failed): `bands` while none did.
  std::atomic<int> stop{bands};
  std::vector<std::atomic<int>> done(static_cast<size_t>(bands));
  for (auto& d : done) d.store(0, std::memory_order_relaxed);
  auto fail = [&](int band) {
    stop.store(band, std::memory_order_relaxed);
    released.store(bands, std::memory_order_release);
  };
  Run(parts, [&](int part) {
    for (int band = 0; band < bands; ++band) {
      if (part == 0 && before) {
        if (!before(band)) return fail(band);
        released.store(band, std::memory_order_release);
      }
      while (released.load(std::memory_order_acquire) < band) SpinPause();
      if (band >= stop.load(std::memory_order_relaxed)) return;
      work(band, part, parts);
      if (part != 0) {
        done[static_cast<size_t>(band)].fetch_add(1, std::memory_order_release);
        continue;
      }
      if (!after) continue;
      while (done[static_cast<size_t>(band)].load(std::memory_order_acquire) < parts - 1) {
        SpinPause();
      }
      if (!after(band)) return fail(band + 1);
    }
  });
  return stop.load() == bands;
}

void CopyWorkers::ForParts(size_t bytes, const std::function<void(int, int)>& fn) {
  const int parts = PartsFor(bytes, threads_, min_part_bytes_);
  Run(parts, [&](int i) { fn(i, parts); });
}

}  // namespace tflite_gles
