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
#include "delegate/runtime/texture_io.h"
#include "delegate/abi/tflite_abi.h"
#include "egl/context_identity.h"
#include "egl/egl_environment.h"
#include "tflite_gles/delegate.h"

namespace tflite_gles {

// TfLiteDelegate's buffer-handle callbacks (delegate/gpu_io.cc).
struct GpuIoCallbacks {
  static abi::Status CopyFromBufferHandle(abi::Context* context, abi::Delegate* delegate,
                                          int handle, abi::Tensor* tensor);
  static abi::Status CopyToBufferHandle(abi::Context* context, abi::Delegate* delegate,
                                        int handle, abi::Tensor* tensor);
  static void FreeBufferHandle(abi::Context* context, abi::Delegate* delegate, int* handle);
};

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

  // GPU bindings of partition inputs and outputs (delegate/gpu_io.cc,
  // docs/gpu_io.md). Each failure is also remembered for LastError().
  // BindBuffer: an application's float32 GL buffer of `layout`
  // (TfLiteGlesBufferLayout); `flags`: TFLITE_GLES_BIND_* bits.
  Status BindBuffer(int tensor_index, GLuint buffer, int layout, uint32_t flags);
  // Any binding (buffer, producer or sink, delegate/runtime/gpu_binding.h):
  // the entry point the texture bindings build on. `binding.buffer` is
  // checked (a buffer of this context, of the layout's size) when non-zero.
  Status BindGpu(int tensor_index, GpuBinding binding, uint32_t flags);
  Status Unbind(int tensor_index);
  // Bytes a buffer bound to `tensor_index` in `layout` must hold.
  StatusOr<size_t> BoundBufferBytes(int tensor_index, int layout);
  // An application's 2D texture as partition input (`output` false) or
  // output `tensor_index` (delegate/texture_binding.cc); Unbind ends it.
  Status BindTexture(int tensor_index, const TextureParams& params, bool output,
                     uint32_t flags);
  // The index of a TfLiteTensor* of the applied graph, or -1.
  int TensorIndex(const void* tensor) const;

 private:
  friend struct DelegateCallbacks;
  friend struct GpuIoCallbacks;

  // One bound tensor: what the callbacks of TfLiteDelegate's buffer handles
  // (CopyFromBufferHandle and friends) need, and the partitions holding it.
  struct BoundTensor {
    int handle = -1;  // the tensor's buffer_handle, -1 without one
    bool output = false;
    uint32_t flags = 0;
    GpuBinding binding;
    Shape4 shape;
    // The float32 buffer the values live in: the application's, or (for a
    // producer or sink) the runtime's own, which the buffer-handle copies
    // read and write as well.
    GpuBufferRef ref;
    std::vector<int> partitions;  // ids of the partitions it is bound in
  };
  // The checks every binding call starts with: applied, this thread's
  // context, the tensor index and role.
  // `need_current`: the delegate's context must be current on this thread.
  Status CheckBindable(int tensor_index, bool* output, Shape4* shape, bool need_current);
  Status ApiError(const std::string& message);
  // A partition was freed (re-applied, resized, interpreter destroyed):
  // its bindings end, with a message, and the tensors lose their handles.
  void DropBindingsOf(int partition_id, abi::Context* context);
  // After a partition's invoke: its bound outputs' host data is stale.
  void MarkBoundOutputsStale(int partition_id, abi::Context* context);
  void ClearHandle(const BoundTensor& bound, abi::Context* context);
  BoundTensor* FindHandle(int handle);
  // The bound buffer of `handle` into `tensor` (its float view converted to
  // its type), or `tensor` into the buffer.
  Status CopyBuffer(int handle, abi::Tensor* tensor, bool to_tensor);

  // Delegate::Prepare: acquire the GL context, check nodes, partition.
  abi::Status Prepare(abi::Context* context);
  Status AcquireEnvironment(const DeveloperOverrides& overrides);
  // Reports an error through TFLite and remembers it for LastError().
  void Report(abi::Context* context, const std::string& message);
  // The INFO lines of a Prepare (options_.log_info; delegate_stats.cc):
  // what ran where, quantized-model counts, and what the serialization
  // cache did since `programs_before` / `data_before`.
  void LogPrepareInfo(const ProgramCacheCounts& programs_before,
                      const ModelDataCounts& data_before) const;

  abi::Delegate delegate_{};
  Options options_;
  std::unique_ptr<egl::GlEnvironment> env_;
  // env_'s context, recognised beyond its handle: teardowns (the
  // delegate's, its partitions', a freed buffer handle's) run with it
  // current or delete nothing (egl/context_identity.h).
  std::shared_ptr<gl::ContextIdentity> identity_;
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
  bool report_init_phases_ = false;  // TFLITE_GLES_X_INIT_PHASES
  // Timings of the last profiled invoke of each live partition, keyed by
  // the order partitions were created in (TFLite runs them in that order).
  std::map<int, std::vector<DispatchTiming>> profiles_;
  int partitions_created_ = 0;
  // Memory of each allocated live partition, by creation order.
  std::map<int, MemoryStats> memory_;
  std::string last_error_;
  // The context of the last Prepare (tensor fields of bound outputs), the
  // live partitions' runtimes by id, and the bound tensors by index.
  abi::Context* context_ = nullptr;
  std::map<int, PartitionRuntime*> runtimes_;
  std::map<int, BoundTensor> bound_;
  int next_handle_ = 1;
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
