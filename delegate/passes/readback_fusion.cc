#include "delegate/passes/readback_fusion.h"

#include "delegate/passes/fusion.h"

namespace tflite_gles {

bool FusedReadbackVariant(const Dispatch& producer, ValueId staging, const Shape4& shape,
                          Dispatch* fused) {
  if (producer.shader != "transpose_conv" || HasDefine(producer, "TEXTURE_OUTPUT") ||
      HasDefine(producer, "BHWC_OUTPUT") || producer.outputs.size() != 1 ||
      !producer.read_write.empty() || shape.c < 1 || shape.c > 2 ||
      IntDefine(producer, "OUT_S") != 1 || IntDefine(producer, "OUT_C") != shape.c ||
      IntDefine(producer, "TILE_SLICES") != 1) {
    return false;
  }
  *fused = producer;
  fused->outputs[0] = staging;
  fused->defines["BHWC_OUTPUT"] = "";
  fused->label += " (writes the readback staging)";
  return true;
}

bool PlanReadbackFusion(const std::vector<Value>& values,
                        const std::vector<const Dispatch*>& steps, int conversion,
                        ReadbackFusion* fusion) {
  const Dispatch& c = *steps[static_cast<size_t>(conversion)];
  if (c.shader != "layout_convert" || !HasDefine(c, "TO_BHWC") || c.inputs.size() != 1 ||
      c.outputs.size() != 1) {
    return false;
  }
  const ValueId tensor = c.inputs[0];
  if (values[static_cast<size_t>(tensor)].storage_of >= 0) return false;
  int producer = -1;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Dispatch& d = *steps[i];
    for (ValueId id : d.read_write) {
      if (StorageRoot(values, id) == tensor) return false;
    }
    for (ValueId id : d.outputs) {
      if (StorageRoot(values, id) != tensor) continue;
      if (producer >= 0 || id != tensor) return false;  // written twice, or through a view
      producer = static_cast<int>(i);
    }
    if (static_cast<int>(i) == conversion) continue;
    for (ValueId id : d.inputs) {
      if (StorageRoot(values, id) == tensor) return false;  // another reader
    }
  }
  if (producer < 0 || producer > conversion ||
      steps[static_cast<size_t>(producer)]->outputs[0] != tensor) {
    return false;
  }
  fusion->producer = producer;
  fusion->conversion = conversion;
  return FusedReadbackVariant(*steps[static_cast<size_t>(producer)], c.outputs[0],
                              values[static_cast<size_t>(tensor)].shape, &fusion->fused);
}

}  // namespace tflite_gles
