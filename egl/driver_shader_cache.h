// Where the GL driver keeps its own on-disk shader cache, while the display
// that the delegate owns is initialized.
//
// Why: a program binary (glGetProgramBinary) is not always the machine code.
// On Mesa it is the linked program as NIR plus metadata; llvmpipe compiles
// NIR to machine code at a program's first dispatch (its variant depends on
// the bound state) and keeps that code only in Mesa's disk cache
// (bench/program_binary_probe.py shows it: a loaded binary pays the whole
// LLVM compile at its first dispatch unless that cache holds it). So a
// serialization cache that must cut cold start needs the driver's cache too,
// and a driver cache that lives in ~/.cache is emptied, evicted or shared
// behind the application's back. Pointing it into the serialization
// directory keeps everything a second start needs in the one folder the
// application chose.
//
// The drivers read these variables when a display is initialized (Mesa:
// screen creation in eglInitialize). The variables are process-wide, so this
// sets only those the user has not set (nor disabled the cache with) and
// removes them again when it goes out of scope: an application's own GL work
// later in the process is not redirected. Knows nothing of TFLite.
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace tflite_gles::egl {

class ScopedDriverShaderCache {
 public:
  // `folder` empty: does nothing. Otherwise creates `folder` (its parent must
  // exist) and points every driver variable the user left unset at it.
  explicit ScopedDriverShaderCache(const std::string& folder);
  ~ScopedDriverShaderCache();
  ScopedDriverShaderCache(const ScopedDriverShaderCache&) = delete;
  ScopedDriverShaderCache& operator=(const ScopedDriverShaderCache&) = delete;

  // What was done, for the INFO line: e.g. "MESA_SHADER_CACHE_DIR and
  // __GL_SHADER_DISK_CACHE_PATH -> /dir/driver_shader_cache", or why not.
  const std::string& description() const { return description_; }

 private:
  std::unique_lock<std::mutex> lock_;  // held while the variables are ours
  std::vector<std::string> set_;  // the variables this object set
  std::string description_;
};

}  // namespace tflite_gles::egl
