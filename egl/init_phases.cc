#include "egl/init_phases.h"

#include <atomic>
#include <cstdio>

namespace tflite_gles::gl {
namespace {

constexpr int kPhases = static_cast<int>(InitPhase::kCount);
// Nanoseconds; atomics because delegates may start on several threads.
std::atomic<int64_t> g_phase_ns[kPhases];

// In the order of InitPhase (init_phases.h says which phase each is part of).
constexpr const char* kNames[kPhases] = {
    "egl_display",   "egl_context",     "gpu_info",      "open_cache",
    "support_checks", "partition",      "kernel_builds", "runtime_create",
    "shader_assembly", "program_load",  "program_compile", "program_query",
    "allocate",      "model_data",      "first_invoke"};

}  // namespace

void AddInitPhase(InitPhase phase, std::chrono::steady_clock::duration elapsed) {
  g_phase_ns[static_cast<int>(phase)].fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count(),
      std::memory_order_relaxed);
}

std::string InitPhaseSummary() {
  std::string line;
  for (int i = 0; i < kPhases; ++i) {
    char item[64];
    std::snprintf(item, sizeof(item), "%s%s=%.2f", line.empty() ? "" : " ", kNames[i],
                  g_phase_ns[i].load(std::memory_order_relaxed) / 1e6);
    line += item;
  }
  return line;
}

void PrintInitPhases(const char* when) {
  std::fprintf(stderr, "INFO: tflite-gles: init phases ms (%s): %s\n", when,
               InitPhaseSummary().c_str());
}

}  // namespace tflite_gles::gl
