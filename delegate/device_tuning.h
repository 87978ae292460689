// Per-device tuning, in one place: what DeviceProfile fields depend on the
// GPU (keyed on its renderer) rather than on the user's options.
#pragma once

#include "delegate/graph.h"

namespace tflite_gles {

// Fills the tuning fields of `device` for `device->gpu`. The environment
// variable TFLITE_GLES_MIN_INVOCATIONS (an integer >= 0) overrides
// DeviceProfile::min_invocations, for measuring sweeps (bench/nvidia_sweep.sh).
void TuneForDevice(DeviceProfile* device);

}  // namespace tflite_gles
