// One developer override applied to a DeviceProfile field (device_tuning.cc,
// conv_tuning.cc): where its variable is set, it replaces the device's choice.
#pragma once

#include <optional>

namespace tflite_gles {

template <typename T, typename U>
void Apply(const std::optional<T>& value, U* field) {
  if (value) *field = *value;
}

}  // namespace tflite_gles
