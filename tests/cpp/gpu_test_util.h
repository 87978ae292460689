// Runs one TFLite node through a kernel on the real GPU (llvmpipe in CI),
// without an interpreter: the test lays out the node's tensors in TFLite's
// C structs, the kernel checks and builds it, and the partition runtime
// uploads, dispatches and reads back exactly as inside the delegate.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "delegate/graph/graph.h"
#include "delegate/runtime/runtime.h"
#include "delegate/abi/tflite_abi.h"
#include "delegate/abi/tflite_builtin.h"
#include "egl/egl_environment.h"
#include "egl/status.h"

namespace tflite_gles::testing {

// The GL environment shared by all tests of the process (created once).
const egl::GlEnvironment& TestEnvironment();
// Its GPU's limits clamped to the device profile TFLITE_GLES_DEVICE_PROFILE
// names (native when unset), as the delegate clamps them: the op tests run
// under a profile with that variable set (ctest's *_gles31_minimum entries).
const egl::GpuInfo& TestGpuInfo();

class OpTester {
 public:
  explicit OpTester(int builtin_op, int version = 1);
  ~OpTester();

  // Adds a tensor; returns its TFLite index. Inputs and outputs are linked
  // to the node in the order they are added.
  int AddInput(const std::vector<int>& dims, const std::vector<float>& data);
  int AddConstInput(const std::vector<int>& dims, const std::vector<float>& data);
  int AddConstIntInput(const std::vector<int>& dims, const std::vector<int32_t>& data);
  void AddOptionalInput();
  int AddOutput(const std::vector<int>& dims);
  // builtin_data; the tester keeps a copy of `params`.
  template <typename Params>
  void SetParams(const Params& params) {
    params_.assign(reinterpret_cast<const char*>(&params),
                   reinterpret_cast<const char*>(&params) + sizeof(Params));
  }
  void SetCustom(const std::string& name, const std::vector<uint8_t>& data);
  // Runs after the device is tuned as the delegate tunes it (TuneForDevice,
  // environment overrides included), e.g. to force a kernel path.
  void TuneDevice(std::function<void(DeviceProfile*)> tune) {
    tune_ = std::move(tune);
  }

  // Called before (`after` false) and after each run of Run/RunRepeated
  // with the partition's runtime, e.g. to bind GPU buffers to its inputs
  // and outputs (delegate/runtime/gpu_binding.h) and check them.
  using RunHook = std::function<Status(PartitionRuntime& runtime, ProgramCache& programs,
                                       int run, bool after)>;
  void SetRunHook(RunHook hook) { hook_ = std::move(hook); }
  // New values for the input tensor `index` (same count), e.g. between runs.
  void SetInputData(int index, const std::vector<float>& data);
  // Run, `runs` times on one built partition.
  Status RunRepeated(bool fp16, int runs);

  // Checks the node with the kernel registry (OK or the decline reason).
  Status Check(bool fp16 = false);
  // Checks, builds and runs; outputs are pre-filled with NaN so an element
  // left unwritten fails the comparison.
  Status Run(bool fp16 = false);
  // Builds once (programs compiled once) and runs `runs` times with
  // per-dispatch profiling; `kernel_ms` gets each run's milliseconds in the
  // node's own dispatches, layout conversions excluded. For benchmarks.
  Status Profile(bool fp16, int runs, std::vector<double>* kernel_ms);
  const std::vector<float>& output(int i = 0) const;
  // Compile shapes into the programs (true) or pass them as uniforms
  // (false), whatever the device's default (DeviceProfile::specialize_shapes).
  void SetSpecializeShapes(bool specialize) {
    specialize_shapes_ = specialize ? 1 : 0;
  }

 private:
  struct TensorData;
  Status Setup(bool fp16, DeviceProfile* device);
  Status Execute(bool fp16, int runs, std::vector<double>* kernel_ms);
  abi::Context context_{};
  abi::Node node_{};
  abi::Registration registration_{};
  std::vector<abi::Tensor> tensors_;
  std::vector<std::unique_ptr<TensorData>> data_;
  std::vector<int> inputs_, outputs_;
  std::vector<int> input_array_, output_array_, plan_array_;
  std::vector<char> params_;
  std::string custom_name_;
  std::vector<uint8_t> custom_data_;
  std::function<void(DeviceProfile*)> tune_;
  RunHook hook_;
  int specialize_shapes_ = -1;  // -1: the device's default
};

// Uniform random floats in [low, high], never zero (a zero hides sign and
// scale bugs). Deterministic per seed.
std::vector<float> RandomData(size_t count, uint32_t seed, float low = -2.0f,
                              float high = 2.0f);

// Max |a - b| / max(1, |b|) over elements; +inf on NaN or size mismatch.
double MaxRelativeError(const std::vector<float>& actual,
                        const std::vector<float>& expected);

// Number of elements of a tensor with `dims`.
size_t Count(const std::vector<int>& dims);

// `data` as fp16 storage holds it (rounded to half and back) when `fp16`:
// references fed the stored values cannot fail on ties the rounding made.
std::vector<float> AsStored(std::vector<float> data, bool fp16);

// A fused activation applied to a float64 reference value (NONE, RELU,
// RELU6, RELU_N1_TO_1, TANH, SIGMOID).
double Activate(double x, abi::FusedActivation act);

// out[r][o] = act(bias[o] + sum_k x[r][k] * w[o][k]) in float64: the
// reference of FULLY_CONNECTED and of a 1x1 CONV_2D read as `rows` rows of
// `depth` (no bias when `bias` is empty).
std::vector<float> FullyConnectedReference(const std::vector<float>& x, int rows,
                                           int depth, const std::vector<float>& w,
                                           int outputs, const std::vector<float>& bias,
                                           abi::FusedActivation act);

// Tolerances: fp32 storage and arithmetic vs a float64 reference; fp16
// storage (10-bit mantissa, a few roundings).
constexpr double kFp32Tolerance = 1e-5;
constexpr double kFp16Tolerance = 1e-2;
inline double Tolerance(bool fp16) {
  return fp16 ? kFp16Tolerance : kFp32Tolerance;
}

}  // namespace tflite_gles::testing
