#include "egl/driver_threads.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace tflite_gles::egl {
namespace {

constexpr char kVariable[] = "LP_NUM_THREADS";

// Two delegates acquiring displays on two threads must not see each other's
// variable as "set by the user", nor remove it under each other.
std::mutex g_driver_threads_mutex;

}  // namespace

int ScopedDriverThreads::Workers() {
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  // llvmpipe caps the count itself (LP_MAX_THREADS); 2 is the floor so a
  // single-core machine still gets a runnable worker while one waits.
  return static_cast<int>(std::max(2L, 2 * std::max(1L, cores)));
}

ScopedDriverThreads::ScopedDriverThreads()
    : lock_(g_driver_threads_mutex) {
  if (const char* user = std::getenv(kVariable)) {
    description_ = std::string(kVariable) + " left to the user (" + user + ")";
    return;
  }
  const std::string workers = std::to_string(Workers());
  if (::setenv(kVariable, workers.c_str(), 0) == 0) {
    set_ = true;
    description_ = std::string(kVariable) + "=" + workers;
  }
}

ScopedDriverThreads::~ScopedDriverThreads() {
  if (set_) ::unsetenv(kVariable);
}

}  // namespace tflite_gles::egl
