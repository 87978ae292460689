#include "gpu_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "delegate/device/device_profiles.h"
#include "delegate/device/device_tuning.h"
#include "tflite_gles/delegate.h"
#include "delegate/abi/half.h"
#include "delegate/kernels/registry.h"
#include "delegate/runtime/runtime.h"
#include "delegate/abi/tflite_builtin.h"

namespace tflite_gles::testing {

struct OpTester::TensorData {
  std::vector<int> dims;  // IntArray storage: size, then dims
  std::vector<float> floats;
  std::vector<int32_t> ints;
};

const egl::GlEnvironment& TestEnvironment() {
  static std::unique_ptr<egl::GlEnvironment> env = [] {
    auto acquired = egl::GlEnvironment::Acquire(egl::DisplayPlatform::kAuto);
    if (!acquired.ok()) {
      // A missing GPU is a failure in this project, never a skip.
      std::fprintf(stderr, "FATAL: no GLES 3.1 context: %s\n",
                   acquired.status().message().c_str());
      std::abort();
    }
    return std::move(*acquired);
  }();
  return *env;
}

const egl::GpuInfo& TestGpuInfo() {
  static const egl::GpuInfo gpu = [] {
    auto profile = ChooseDeviceProfile(TFLITE_GLES_DEVICE_PROFILE_NATIVE,
                                       ReadDeveloperOverrides().device_profile);
    if (!profile.ok()) {
      std::fprintf(stderr, "FATAL: %s\n", profile.status().message().c_str());
      std::abort();
    }
    return ApplyDeviceProfile(TestEnvironment().info(), *profile);
  }();
  return gpu;
}

namespace {
std::vector<int> IntArrayStorage(const std::vector<int>& values) {
  std::vector<int> storage(values.size() + 1);
  storage[0] = static_cast<int>(values.size());
  std::copy(values.begin(), values.end(), storage.begin() + 1);
  return storage;
}

abi::IntArray* AsArray(std::vector<int>& storage) {
  return reinterpret_cast<abi::IntArray*>(storage.data());
}

abi::Status GetPlan(abi::Context* context, abi::IntArray** plan);
abi::Status GetNode(abi::Context* context, int index, abi::Node** node,
                    abi::Registration** registration);

struct TesterAccess {
  abi::Node* node;
  abi::Registration* registration;
  abi::IntArray* plan;
};
}  // namespace

OpTester::OpTester(int builtin_op, int version) {
  registration_.builtin_code = builtin_op;
  registration_.version = version;
  tensors_.reserve(64);
}

OpTester::~OpTester() = default;

int OpTester::AddInput(const std::vector<int>& dims,
                       const std::vector<float>& data) {
  auto tensor_data = std::make_unique<TensorData>();
  tensor_data->dims = IntArrayStorage(dims);
  tensor_data->floats = data;
  abi::Tensor tensor{};
  tensor.type = abi::kFloat32;
  tensor.allocation_type = abi::kArenaRw;
  tensors_.push_back(tensor);
  data_.push_back(std::move(tensor_data));
  inputs_.push_back(static_cast<int>(tensors_.size() - 1));
  return inputs_.back();
}

int OpTester::AddConstInput(const std::vector<int>& dims,
                            const std::vector<float>& data) {
  int index = AddInput(dims, data);
  tensors_[index].allocation_type = abi::kMmapRo;
  return index;
}

int OpTester::AddConstIntInput(const std::vector<int>& dims,
                               const std::vector<int32_t>& data) {
  int index = AddInput(dims, {});
  data_[index]->ints = data;
  tensors_[index].type = abi::kInt32;
  tensors_[index].allocation_type = abi::kMmapRo;
  return index;
}

void OpTester::AddOptionalInput() { inputs_.push_back(abi::kOptionalTensor); }

int OpTester::AddOutput(const std::vector<int>& dims) {
  auto tensor_data = std::make_unique<TensorData>();
  tensor_data->dims = IntArrayStorage(dims);
  long long count = 1;
  for (int d : dims) count *= d;
  tensor_data->floats.assign(static_cast<size_t>(count),
                             std::numeric_limits<float>::quiet_NaN());
  abi::Tensor tensor{};
  tensor.type = abi::kFloat32;
  tensor.allocation_type = abi::kArenaRw;
  tensors_.push_back(tensor);
  data_.push_back(std::move(tensor_data));
  outputs_.push_back(static_cast<int>(tensors_.size() - 1));
  return outputs_.back();
}

void OpTester::SetCustom(const std::string& name,
                         const std::vector<uint8_t>& data) {
  registration_.builtin_code = abi::kTfLiteBuiltinCustom;
  custom_name_ = name;
  custom_data_ = data;
}

// The context's callbacks find the tester through impl_.
namespace {
abi::Status GetPlan(abi::Context* context, abi::IntArray** plan) {
  *plan = static_cast<TesterAccess*>(context->impl_)->plan;
  return abi::kOk;
}
abi::Status GetNode(abi::Context* context, int, abi::Node** node,
                    abi::Registration** registration) {
  auto* access = static_cast<TesterAccess*>(context->impl_);
  *node = access->node;
  *registration = access->registration;
  return abi::kOk;
}
}  // namespace

Status OpTester::Setup(bool fp16, DeviceProfile* device) {
  for (size_t i = 0; i < tensors_.size(); ++i) {
    abi::Tensor& tensor = tensors_[i];
    TensorData& data = *data_[i];
    tensor.dims = AsArray(data.dims);
    if (tensor.type == abi::kInt32) {
      tensor.data = data.ints.data();
      tensor.bytes = data.ints.size() * sizeof(int32_t);
    } else {
      tensor.data = data.floats.data();
      tensor.bytes = data.floats.size() * sizeof(float);
    }
  }
  input_array_ = IntArrayStorage(inputs_);
  output_array_ = IntArrayStorage(outputs_);
  plan_array_ = IntArrayStorage({0});
  node_.inputs = AsArray(input_array_);
  node_.outputs = AsArray(output_array_);
  node_.builtin_data = params_.empty() ? nullptr : params_.data();
  node_.custom_initial_data = custom_data_.empty() ? nullptr : custom_data_.data();
  node_.custom_initial_data_size = static_cast<int>(custom_data_.size());
  registration_.custom_name = custom_name_.empty() ? nullptr : custom_name_.c_str();
  context_.tensors = tensors_.data();
  context_.tensors_size = tensors_.size();
  context_.GetExecutionPlan = GetPlan;
  context_.GetNodeAndRegistration = GetNode;
  const egl::GlEnvironment& env = TestEnvironment();
  const egl::GpuInfo& gpu = TestGpuInfo();
  device->gpu = &gpu;
  device->fp16 = fp16;
  // storage=auto, as the delegate chooses it, or the storage
  // TFLITE_GLES_X_STORAGE forces (ctest op_tests_rgba_textures).
  ChooseStorage(device, ReadDeveloperOverrides().storage.value_or(TFLITE_GLES_STORAGE_AUTO));
  TuneForDevice(device);
  if (tune_) {
    tune_(device);
    FitDeviceLimits(device);  // a test's choice stays within the limits too
  }
  if (specialize_shapes_ >= 0) device->specialize_shapes = specialize_shapes_ == 1;
  return env.EnsureCurrent();
}

Status OpTester::Check(bool fp16) {
  DeviceProfile device;
  TesterAccess access{&node_, &registration_, nullptr};
  TFG_RETURN_IF_ERROR(Setup(fp16, &device));
  access.plan = AsArray(plan_array_);
  context_.impl_ = &access;
  GraphContext graph(&context_);
  NodeView view(&context_, 0, &node_, &registration_);
  auto kernel = KernelRegistry::Global().Find(view, graph, device);
  context_.impl_ = nullptr;
  return kernel.ok() ? Status::Ok() : kernel.status();
}

Status OpTester::Run(bool fp16) { return Execute(fp16, 1, nullptr); }

Status OpTester::RunRepeated(bool fp16, int runs) { return Execute(fp16, runs, nullptr); }

void OpTester::SetInputData(int index, const std::vector<float>& data) {
  std::vector<float>& floats = data_[static_cast<size_t>(index)]->floats;
  // In place: the tensor's data pointer stays valid.
  std::copy(data.begin(), data.begin() + std::min(data.size(), floats.size()), floats.begin());
}

Status OpTester::Profile(bool fp16, int runs, std::vector<double>* kernel_ms) {
  return Execute(fp16, runs, kernel_ms);
}

Status OpTester::Execute(bool fp16, int runs, std::vector<double>* kernel_ms) {
  DeviceProfile device;
  TesterAccess access{&node_, &registration_, nullptr};
  TFG_RETURN_IF_ERROR(Setup(fp16, &device));
  access.plan = AsArray(plan_array_);
  context_.impl_ = &access;
  GraphContext graph(&context_);
  NodeView view(&context_, 0, &node_, &registration_);
  auto kernel = KernelRegistry::Global().Find(view, graph, device);
  if (!kernel.ok()) return kernel.status();
  GraphBuilder builder(graph, device);
  TFG_RETURN_IF_ERROR((*kernel)->build(view, builder));
  std::vector<int> inputs;
  for (int index : inputs_) {
    if (index >= 0 && !graph.IsConstant(index)) inputs.push_back(index);
  }
  ProgramCache programs;
  TFG_ASSIGN_OR_RETURN(auto runtime,
                       PartitionRuntime::Create(builder, inputs, outputs_,
                                                device, programs));
  for (int run = 0; run < runs; ++run) {
    if (hook_) TFG_RETURN_IF_ERROR(hook_(*runtime, programs, run, false));
    TFG_RETURN_IF_ERROR(runtime->Run(&context_, kernel_ms != nullptr));
    if (hook_) TFG_RETURN_IF_ERROR(hook_(*runtime, programs, run, true));
    if (kernel_ms == nullptr) continue;
    double total = 0;
    for (const DispatchTiming& timing : runtime->timings()) {
      if (timing.shader != "layout_convert") total += timing.milliseconds;
    }
    kernel_ms->push_back(total);
  }
  context_.impl_ = nullptr;
  return Status::Ok();
}

const std::vector<float>& OpTester::output(int i) const {
  return data_[outputs_[i]]->floats;
}

size_t Count(const std::vector<int>& dims) {
  size_t n = 1;
  for (int d : dims) n *= static_cast<size_t>(d);
  return n;
}

std::vector<float> AsStored(std::vector<float> data, bool fp16) {
  if (fp16) {
    for (float& v : data) v = HalfToFloat(FloatToHalf(v));
  }
  return data;
}

std::vector<float> RandomData(size_t count, uint32_t seed, float low,
                              float high) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> data(count);
  for (float& v : data) {
    do {
      v = dist(rng);
    } while (std::fabs(v) < 1e-3f);
  }
  return data;
}

double Activate(double x, abi::FusedActivation act) {
  switch (act) {
    case abi::kActRelu: return std::max(0.0, x);
    case abi::kActRelu6: return std::min(6.0, std::max(0.0, x));
    case abi::kActReluN1To1: return std::min(1.0, std::max(-1.0, x));
    case abi::kActTanh: return std::tanh(x);
    case abi::kActSigmoid: return 1.0 / (1.0 + std::exp(-x));
    default: return x;
  }
}

std::vector<float> FullyConnectedReference(const std::vector<float>& x, int rows,
                                           int depth, const std::vector<float>& w,
                                           int outputs, const std::vector<float>& bias,
                                           abi::FusedActivation act) {
  std::vector<float> out;
  for (int r = 0; r < rows; ++r) {
    for (int o = 0; o < outputs; ++o) {
      double sum = bias.empty() ? 0.0 : bias[o];
      for (int k = 0; k < depth; ++k) {
        sum += static_cast<double>(x[static_cast<size_t>(r) * depth + k]) *
               w[static_cast<size_t>(o) * depth + k];
      }
      out.push_back(static_cast<float>(Activate(sum, act)));
    }
  }
  return out;
}

double MaxRelativeError(const std::vector<float>& actual,
                        const std::vector<float>& expected) {
  if (actual.size() != expected.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(actual[i]) != std::isnan(expected[i])) return INFINITY;
    if (std::isnan(expected[i])) continue;
    double error = std::fabs(static_cast<double>(actual[i]) - expected[i]) /
                   std::max(1.0, std::fabs(static_cast<double>(expected[i])));
    worst = std::max(worst, error);
  }
  return worst;
}

}  // namespace tflite_gles::testing
