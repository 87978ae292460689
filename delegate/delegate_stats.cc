// What a delegate reports: the stats structs of the C API
// (TfLiteGlesDelegate*Stats, the dispatch profile) and the INFO lines of a
// Prepare. Kept apart from delegate.cc, which partitions the graph and owns
// the GL environment; everything here only reads what that left behind.
#include <cstdio>
#include <cstring>

#include "delegate/delegate.h"

namespace tflite_gles {
namespace {

// The display description without the reasons earlier displays were passed
// over: which device ran the delegate, for the INFO line.
std::string DeviceUsed(const std::string& description) {
  return description.substr(0, description.find(" (passed over"));
}

}  // namespace

void GlesDelegate::LogPrepareInfo(const ProgramCacheCounts& programs_before,
                                  const ModelDataCounts& data_before) const {
  std::fprintf(stderr,
               "INFO: tflite-gles: delegated %d of %d nodes in %d partition%s "
               "on %s, %s (%s%s%s%s)\n",
               nodes_delegated_, nodes_total_, partitions_,
               partitions_ == 1 ? "" : "s", env_->info().renderer.c_str(),
               DeviceUsed(env_->display_description()).c_str(),
               device_.fp16 ? "fp16" : "fp32",
               device_.rgba_textures ? ", RGBA textures" : "",
               gpu_.profile == "native" ? "" : ", device profile ",
               gpu_.profile == "native" ? "" : gpu_.profile.c_str());
  if (!quantized_.constants.empty() || quantized_.simulated > 0 ||
      quantized_.transfers > 0) {
    std::fprintf(stderr,
                 "INFO: tflite-gles: quantized model in its float view: %d "
                 "quantized constant%s dequantized at init, %d activation%s "
                 "%s on the GPU (quantization_simulator=%s), "
                 "%d quantized partition input%s/output%s converted per invoke\n",
                 static_cast<int>(quantized_.constants.size()),
                 quantized_.constants.size() == 1 ? "" : "s", quantized_.simulated,
                 quantized_.simulated == 1 ? "" : "s",
                 options_.quantization_simulator ? "rounded to their grid"
                                                 : "clamped to their range",
                 options_.quantization_simulator ? "true" : "false",
                 quantized_.transfers, quantized_.transfers == 1 ? "" : "s",
                 quantized_.transfers == 1 ? "" : "s");
  }
  if (programs_->serialization_enabled()) {
    const ProgramCacheCounts& now = programs_->counts();
    const ModelDataCounts data = programs_->model_data()->counts();
    std::fprintf(stderr,
                 "INFO: tflite-gles: serialization cache '%s': %d program%s "
                 "loaded from the cache, %d compiled, %d entr%s written; "
                 "model data: %d constant%s loaded, %d converted, %d entr%s written; "
                 "driver shader cache: %s\n",
                 options_.serialization_dir.c_str(),
                 now.loaded - programs_before.loaded,
                 now.loaded - programs_before.loaded == 1 ? "" : "s",
                 now.compiled - programs_before.compiled,
                 now.written - programs_before.written,
                 now.written - programs_before.written == 1 ? "y" : "ies",
                 data.loaded - data_before.loaded,
                 data.loaded - data_before.loaded == 1 ? "" : "s",
                 data.converted - data_before.converted, data.written - data_before.written,
                 data.written - data_before.written == 1 ? "y" : "ies",
                 env_->driver_cache().empty() ? "not redirected"
                                              : env_->driver_cache().c_str());
  }
}

void GlesDelegate::FillStats(TfLiteGlesDelegateStats* stats) const {
  std::memset(stats, 0, sizeof(*stats));
  stats->nodes_total = nodes_total_;
  stats->nodes_delegated = nodes_delegated_;
  stats->partitions = partitions_;
  stats->programs = programs_ ? programs_->size() : 0;
  stats->dispatches = dispatches_;
  stats->gpu_bytes = gpu_bytes_;
  stats->invokes = invokes_;
  if (env_) {
    std::snprintf(stats->renderer, sizeof(stats->renderer), "%s",
                  env_->info().renderer.c_str());
    std::snprintf(stats->gl_version, sizeof(stats->gl_version), "%s",
                  env_->info().version.c_str());
    std::snprintf(stats->egl_display, sizeof(stats->egl_display), "%s",
                  env_->display_description().c_str());
  }
}

void GlesDelegate::FillProgramCacheStats(TfLiteGlesProgramCacheStats* stats) const {
  std::memset(stats, 0, sizeof(*stats));
  if (!programs_) return;
  const ProgramCacheCounts& counts = programs_->counts();
  stats->enabled = programs_->serialization_enabled() ? 1 : 0;
  stats->binary_formats = programs_->binary_formats();
  stats->programs_loaded = counts.loaded;
  stats->programs_compiled = counts.compiled;
  stats->entries_written = counts.written;
  stats->entries_rejected = counts.rejected;
  std::snprintf(stats->note, sizeof(stats->note), "%s", programs_->note().c_str());
}

void GlesDelegate::FillMemoryStats(TfLiteGlesMemoryStats* stats) const {
  std::memset(stats, 0, sizeof(*stats));
  for (const auto& [partition, memory] : memory_) {
    stats->arena_tensors += memory.arena_tensors;
    stats->arena_bytes += memory.arena_bytes;
    stats->tensors_sum_bytes += memory.sum_bytes;
    stats->lower_bound_bytes += memory.lower_bound_bytes;
    stats->other_bytes += memory.other_bytes;
  }
}

int GlesDelegate::FillProfile(TfLiteGlesDispatchProfile* entries,
                              int capacity) const {
  int count = 0;
  for (const auto& [partition, timings] : profiles_) {
    for (const DispatchTiming& timing : timings) {
      if (count < capacity) {
        TfLiteGlesDispatchProfile& entry = entries[count];
        std::memset(&entry, 0, sizeof(entry));
        std::snprintf(entry.label, sizeof(entry.label), "%s", timing.label.c_str());
        std::snprintf(entry.shader, sizeof(entry.shader), "%s", timing.shader.c_str());
        entry.milliseconds = timing.milliseconds;
        entry.flops = timing.flops;
        entry.partition = partition;
        entry.gpu_timer = timing.gpu_timer ? 1 : 0;
      }
      ++count;
    }
  }
  return count;
}

}  // namespace tflite_gles
