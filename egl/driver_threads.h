// How many worker threads Mesa's llvmpipe starts, while a display that the
// delegate owns is initialized.
//
// Why: llvmpipe runs a compute dispatch on one worker per core by default
// (LP_NUM_THREADS) and returns when the slowest worker is done. On a 2-core
// box the scheduler sometimes leaves both workers on one core after the
// calling thread wakes them, for tens of dispatches at a time: DeepLab's
// back-to-back invokes fell into two modes, ~40 and ~58 ms, with a core
// idle a third of the time in the slow one. Two workers per core keep a
// runnable worker on each core: 41-46 ms flat, and MobileNet and selfie as
// fast or faster (docs/perf/log.md, "Lead, session 19").
//
// Like egl/driver_shader_cache.h: Mesa reads the variable at screen creation
// (eglInitialize); it is process-wide, so this sets it only when the user has
// not, and removes it again when it goes out of scope. Other drivers do not
// read it. Knows nothing of TFLite.
#pragma once

#include <mutex>
#include <string>

namespace tflite_gles::egl {

class ScopedDriverThreads {
 public:
  ScopedDriverThreads();
  ~ScopedDriverThreads();
  ScopedDriverThreads(const ScopedDriverThreads&) = delete;
  ScopedDriverThreads& operator=(const ScopedDriverThreads&) = delete;

  // For the INFO line: "LP_NUM_THREADS=4", "LP_NUM_THREADS left to the
  // user (3)", or empty when nothing was set.
  const std::string& description() const { return description_; }

  // Two per online core (at least 2).
  static int Workers();

 private:
  std::unique_lock<std::mutex> lock_;  // held while the variable is ours
  bool set_ = false;
  std::string description_;
};

}  // namespace tflite_gles::egl
