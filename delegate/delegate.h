// The TfLiteDelegate of tflite-gles: partitions a graph into GPU-supported
// node subsets and runs each subset as one delegate kernel.
#pragma once

#include <map>
#include <set>
#include <memory>
#include <vector>
#include <string>

#include "delegate/device/developer_overrides.h"
#include "delegate/graph/graph.h"
#include "delegate/options.h"
#include "delegate/runtime/runtime.h"
#include "delegate/abi/tflite_abi.h"
#include "egl/egl_environment.h"
#include "tflite_gles/delegate.h"

namespace tflite_gles {

class GlesDelegate {
 public:
  explicit GlesDelegate(Options options);
  ~GlesDelegate();

  abi::Delegate* abi_delegate() { return &delegate_; }
  static GlesDelegate* FromAbi(abi::Delegate* delegate);
  static const GlesDelegate* FromAbi(const abi::Delegate* delegate);

  void FillStats(TfLiteGlesDelegateStats* stats) const;
  // Delegates alive in the process (leak checks).
  static long LiveCount();
  // Copies up to `capacity` entries of the last profile; returns how many
  // it holds.
  int FillProfile(TfLiteGlesDispatchProfile* entries, int capacity) const;
  void FillMemoryStats(TfLiteGlesMemoryStats* stats) const;
  void FillProgramCacheStats(TfLiteGlesProgramCacheStats* stats) const;
  const std::string& last_error() const { return last_error_; }

 private:
  friend struct DelegateCallbacks;

  // Delegate::Prepare: acquire the GL context, check nodes, partition.
  abi::Status Prepare(abi::Context* context);
  Status AcquireEnvironment(const DeveloperOverrides& overrides);
  // Reports an error through TFLite and remembers it for LastError().
  void Report(abi::Context* context, const std::string& message);

  abi::Delegate delegate_{};
  Options options_;
  std::unique_ptr<egl::GlEnvironment> env_;
  std::unique_ptr<ProgramCache> programs_;
  DeviceProfile device_;
  // The GPU's limits clamped to the device profile in force; device_.gpu
  // points here (delegate/device/device_profiles.h).
  egl::GpuInfo gpu_;
  std::unique_ptr<GraphContext> graph_;  // during Prepare and kernel Init

  int nodes_total_ = 0;
  int nodes_delegated_ = 0;
  int partitions_ = 0;
  int dispatches_ = 0;
  long long gpu_bytes_ = 0;
  long long invokes_ = 0;
  // Timings of the last profiled invoke of each live partition, keyed by
  // the order partitions were created in (TFLite runs them in that order).
  std::map<int, std::vector<DispatchTiming>> profiles_;
  int partitions_created_ = 0;
  // Memory of each allocated live partition, by creation order.
  std::map<int, MemoryStats> memory_;
  std::string last_error_;
  std::string init_error_;  // first partition build failure of a Prepare
  // Quantized models (delegate/graph/quantization.h), for the INFO line of a
  // Prepare: constants dequantized at init, activations with a simulator
  // step, and partition inputs/outputs converted at every invoke.
  struct QuantizedCounts {
    std::set<int> constants;
    int simulated = 0;
    int transfers = 0;
  } quantized_;
};

}  // namespace tflite_gles
