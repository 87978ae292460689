// Copies into memory the GPU reads over the bus (persistently mapped upload
// staging) with non-temporal stores: the CPU writes whole cache lines
// straight to memory instead of reading each line in first (read for
// ownership) and leaving it dirty in its caches, where the GPU's reads
// would then have to snoop it out. Chosen per device
// (DeviceProfile::streaming_upload); docs/perf/log.md has the measurement.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tflite_gles {

// memcpy with non-temporal stores for the 16-byte-aligned bulk (memcpy for
// a misaligned head and the tail), then a store fence: the bytes are in
// memory, visible to commands issued after the call. Falls back to memcpy
// where the CPU has no streaming stores.
void StreamingCopy(void* dst, const void* src, size_t bytes);

// A pause in a spin-wait loop (x86's pause; nothing elsewhere).
void SpinPause();

// FloatsToHalves (delegate/runtime/half_convert.h) whose stores stream the same way.
void FloatsToHalvesStreaming(const float* in, uint16_t* out, size_t count);

// Megabyte copies split among threads (DeviceProfile::host_copy_threads).
// One core copies host memory at ~11-13 GB/s (H100 host: 5.5 MB in 0.47
// ms), so DeepLab's 257x257x21 output spent ~0.49 ms in one memcpy after
// the GPU had finished (docs/perf/log.md, "perf, session 9"). Waking a
// sleeping worker costs tens of microseconds ("Lead, session 5": the
// MobileNet input's 22 us copy got slower on threads), so only copies of
// at least kMinPartBytes per part are split; smaller ones stay on the
// calling thread, as before. Workers start at the first split copy and
// sleep on a condition variable between copies; one object per partition.
class CopyWorkers {
 public:
  static constexpr size_t kMinPartBytes = 1024 * 1024;

  // `threads`: the most threads a copy uses, the caller's included (<= 1:
  // never split).
  // `min_part_bytes`: the smallest part (DeviceProfile::host_copy_min_part_bytes).
  explicit CopyWorkers(int threads = 1, size_t min_part_bytes = kMinPartBytes)
      : threads_(threads < 1 ? 1 : threads),
        min_part_bytes_(min_part_bytes < 64 ? 64 : min_part_bytes) {}
  ~CopyWorkers();
  CopyWorkers(const CopyWorkers&) = delete;
  CopyWorkers& operator=(const CopyWorkers&) = delete;

  // memcpy, or StreamingCopy with `streaming`, in parts of whole 64-byte
  // lines (the last takes the rest); returns once every part is done (and,
  // streaming, fenced by the thread that wrote it).
  void Copy(void* dst, const void* src, size_t bytes, bool streaming);
  // FloatsToHalvesStreaming likewise.
  void ConvertToHalves(const float* in, uint16_t* out, size_t count);
  // fn(part, parts) for the parts a copy of `bytes` would be split into,
  // part 0 on the caller; returns once every part is done. For work that
  // writes `bytes` of output in independent ranges (readback_resize.h).
  void ForParts(size_t bytes, const std::function<void(int part, int parts)>& fn);
  // A transfer of `bytes` in `bands` consecutive bands, pipelined with the
  // GPU (runtime_bands.cc): the threads a copy of `bytes` would use wake
  // once; each runs work(band, part, parts) for every band in order, band b
  // only after the caller's before(b) (if given); the caller runs after(b)
  // (if given) once every part of band b is done, then goes on with its
  // part of band b + 1. GL calls go in before/after (the caller's thread
  // holds the context). A failed before/after ends the transfer (the
  // workers skip what is left); false then.
  using BandStep = std::function<bool(int band)>;
  bool Banded(size_t bytes, int bands, const BandStep& before,
              const std::function<void(int band, int part, int parts)>& work,
              const BandStep& after);
  int threads() const { return threads_; }

 private:
  // Runs part(0..parts-1), part 0 on the caller.
  void Run(int parts, const std::function<void(int)>& part);
  // Starts workers for up to parts - 1 other parts; how many parts run at once.
  int StartWorkers(int parts);
  void Work(int index);

  const int threads_;
  const size_t min_part_bytes_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int)>* task_ = nullptr;
  int parts_ = 0;
  int pending_ = 0;
  unsigned long generation_ = 0;
  bool stop_ = false;
};

}  // namespace tflite_gles
