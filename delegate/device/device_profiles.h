// Device profiles: the limits the delegate plans its shaders and storage for
// (docs/device_profiles.md). `native` is what the GPU reports; the others
// clamp those limits to a weaker GPU's, so that a model's partitioning,
// programs and results on that GPU can be seen (and tested) here. A profile
// never raises a limit: on a GPU weaker than the profile the GPU's own
// limits stay in force.
#pragma once

#include <string>

#include "egl/egl_environment.h"
#include "egl/status.h"

namespace tflite_gles {

// TfLiteGlesDeviceProfile values (tflite_gles/delegate.h).
// "native", "gles31-minimum" or "mali-g52".
Status ParseDeviceProfile(const std::string& text, int* profile);
const char* DeviceProfileName(int profile);

// The profile in force: `env_text` (TFLITE_GLES_DEVICE_PROFILE, read with
// the developer overrides; empty when unset) overrides `option`. A bad
// value is an error naming the variable.
StatusOr<int> ChooseDeviceProfile(int option, const std::string& env_text);

// `native` with every limit the delegate reads clamped to `profile`'s
// (alignments raised to the largest the specification allows).
egl::GpuInfo ApplyDeviceProfile(const egl::GpuInfo& native, int profile);

}  // namespace tflite_gles
