#include "egl/driver_shader_cache.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tflite_gles::egl {
namespace {

// Two delegates acquiring displays on two threads must not see each other's
// variables as "set by the user", nor remove them under each other.
std::mutex g_driver_cache_mutex;

struct Driver {
  const char* name;
  const char* directory_variable;  // what we set
  // Any of these set by the user: the driver's cache is theirs (a folder
  // chosen, or the cache disabled); leave it alone.
  std::vector<const char*> user_variables;
};

const std::vector<Driver>& Drivers() {
  static const auto* drivers = new std::vector<Driver>{
      {"Mesa", "MESA_SHADER_CACHE_DIR",
       {"MESA_SHADER_CACHE_DIR", "MESA_GLSL_CACHE_DIR", "MESA_SHADER_CACHE_DISABLE",
        "MESA_GLSL_CACHE_DISABLE"}},
      {"NVIDIA", "__GL_SHADER_DISK_CACHE_PATH",
       {"__GL_SHADER_DISK_CACHE_PATH", "__GL_SHADER_DISK_CACHE"}},
  };
  return *drivers;
}

}  // namespace

ScopedDriverShaderCache::ScopedDriverShaderCache(const std::string& folder) {
  if (folder.empty()) return;
  lock_ = std::unique_lock<std::mutex>(g_driver_cache_mutex);
  if (::mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST) {
    description_ = "driver shader cache left where it was: cannot create " + folder +
                   ": " + std::strerror(errno);
    return;
  }
  std::string left;
  for (const Driver& driver : Drivers()) {
    const char* user = nullptr;
    for (const char* variable : driver.user_variables) {
      if (std::getenv(variable) != nullptr) user = variable;
    }
    if (user != nullptr) {
      left += std::string(left.empty() ? "" : ", ") + driver.name + "'s (" + user +
              " is set)";
      continue;
    }
    if (::setenv(driver.directory_variable, folder.c_str(), 0) == 0) {
      set_.push_back(driver.directory_variable);
    }
  }
  for (const std::string& variable : set_) {
    description_ += (description_.empty() ? "" : " and ") + variable;
  }
  if (!description_.empty()) description_ += " -> " + folder;
  if (!left.empty()) {
    description_ += std::string(description_.empty() ? "" : "; ") +
                    "left to the user: " + left;
  }
}

ScopedDriverShaderCache::~ScopedDriverShaderCache() {
  for (const std::string& variable : set_) ::unsetenv(variable.c_str());
}

}  // namespace tflite_gles::egl
