// GpuBinding's small helpers; the binding's work is runtime_gpu_io.cc.
#include "delegate/runtime/gpu_binding.h"

namespace tflite_gles {

const char* GpuLayoutName(GpuLayout layout) {
  return layout == GpuLayout::kPhwc4Float32 ? "PHWC4 float32" : "BHWC float32";
}

size_t GpuLayoutBytes(GpuLayout layout, const Shape4& shape) {
  const size_t floats = layout == GpuLayout::kPhwc4Float32
                            ? static_cast<size_t>(shape.vec4_count()) * 4
                            : static_cast<size_t>(shape.elements());
  return floats * sizeof(float);
}

std::string GpuBinding::Describe() const {
  std::string what = buffer != 0 ? "buffer " + std::to_string(buffer)
                     : producer ? producer->Describe()
                     : sink     ? sink->Describe()
                                : "nothing";
  return what + " (" + GpuLayoutName(layout) + ")";
}

}  // namespace tflite_gles
