// Delegate options: defaults, validation and the string key/value form used
// by load_delegate() and benchmark_model --external_delegate_options.
#pragma once

#include <string>
#include <vector>

#include "egl/status.h"
#include "tflite_gles/delegate.h"

namespace tflite_gles {

// Options as the delegate keeps them (strings owned, enums checked).
struct Options {
  bool precision_loss_allowed = false;
  int inference_preference = TFLITE_GLES_PREFERENCE_FAST_SINGLE_ANSWER;
  int priorities[3] = {TFLITE_GLES_PRIORITY_AUTO, TFLITE_GLES_PRIORITY_AUTO,
                       TFLITE_GLES_PRIORITY_AUTO};
  int max_delegated_partitions = 1;
  std::string serialization_dir;
  std::string model_token;
  int egl_platform = TFLITE_GLES_EGL_PLATFORM_AUTO;
  int storage = TFLITE_GLES_STORAGE_AUTO;
  bool enable_profiling = false;
  uint64_t experimental_flags = 0;
  bool log_info = true;  // INFO lines (partition summary); warnings always
  // false (default): the graph is delegated with the shapes in the model and
  // the runtime is told so (kTfLiteDelegateFlagsAllowDynamicTensors), which
  // lets models with custom ops that only we implement (MediaPipe's
  // Convolution2DTransposeBias...) load; resizing an input afterwards fails
  // Prepare with a message. true: the runtime prepares every node on the CPU
  // first and re-applies the delegate after each resize (such custom ops then
  // fail to load).
  bool reapply_on_resize = false;
  // Quantized models (uint8/int8 tensors) run in the float view
  // (delegate/graph/quantization.h); false: quantized tensors stay on the CPU.
  bool quantized_models_allowed = true;
  // Activations rounded to their quantization grid after every op, so that
  // the float view follows the integer model; false: only clamped to their
  // range (which TFLite's integer kernels always saturate to).
  bool quantization_simulator = true;
  // The limits shaders and storage are planned for (TfLiteGlesDeviceProfile;
  // delegate/device/device_profiles.h); TFLITE_GLES_DEVICE_PROFILE overrides.
  int device_profile = TFLITE_GLES_DEVICE_PROFILE_NATIVE;
  // Which EGL device (index, or DRM device file / render node); empty: the
  // first that initializes (egl::GlEnvironment::Acquire).
  std::string egl_device;

  // fp16 storage is allowed when precision loss is allowed and no priority
  // asks for max precision (whether it is used is the device's choice:
  // DeviceProfile::fp16, GlesDelegate::AcquireEnvironment).
  bool UseFp16() const;
  // The first priority that is not AUTO is MIN_MEMORY_USAGE.
  bool MemoryFirst() const;
};

// Checks and copies the C struct.
StatusOr<Options> OptionsFromC(const TfLiteGlesDelegateOptions& c_options);
// The same for the V2 struct: its fields up to `size` bytes, defaults for
// any field past them (a caller built against a shorter V2).
StatusOr<Options> OptionsFromCV2(const TfLiteGlesDelegateOptionsV2& c_options);

// Parses key/value strings. Unknown keys and bad values fail with a message
// naming the valid keys and each one's valid values.
StatusOr<Options> OptionsFromKeyValues(
    const std::vector<std::pair<std::string, std::string>>& pairs);

// "key: values" lines describing every option, for messages and docs.
std::string DescribeOptionKeys();

}  // namespace tflite_gles
