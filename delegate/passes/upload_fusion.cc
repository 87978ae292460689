#include "delegate/passes/upload_fusion.h"

#include <string>

namespace tflite_gles {
namespace {

// How many bindings of all dispatches read `id` (a view of it counts as it).
int Readers(const std::vector<Value>& values, ValueId id,
            const std::vector<Dispatch>& a, const std::vector<Dispatch>& b) {
  int readers = 0;
  for (const auto* list : {&a, &b}) {
    for (const Dispatch& d : *list) {
      for (ValueId input : d.inputs) {
        if (input == id || values[input].storage_of == id) ++readers;
      }
    }
  }
  return readers;
}

bool ReadsImageStraight(const Dispatch& d, ValueId tensor) {
  return d.shader == "conv2d" && d.defines.count("GENERIC") != 0 &&
         d.defines.count("ONE_INPUT_SLICE") != 0 && d.defines.count("BHWC_INPUT") == 0 &&
         !d.inputs.empty() && d.inputs[0] == tensor;
}

}  // namespace

int FuseUploadConversions(const std::vector<Value>& values,
                          std::vector<Dispatch>* uploads,
                          std::vector<Dispatch>* kernels,
                          const std::vector<Dispatch>& readbacks) {
  int fused = 0;
  for (auto it = uploads->begin(); it != uploads->end();) {
    const bool conversion = it->shader == "layout_convert" &&
                            it->defines.count("TO_PHWC4") != 0 &&
                            it->outputs.size() == 1 && it->inputs.size() == 1;
    Dispatch* consumer = nullptr;
    if (conversion) {
      const ValueId tensor = it->outputs[0];
      const Value& value = values[tensor];
      bool viewed = false;
      for (const Value& other : values) viewed |= other.storage_of == tensor;
      if (value.storage_of < 0 && !viewed && value.shape.slices() == 1 &&
          Readers(values, tensor, *kernels, readbacks) == 1) {
        for (Dispatch& d : *kernels) {
          if (ReadsImageStraight(d, tensor)) consumer = &d;
        }
      }
    }
    if (consumer == nullptr) {
      ++it;
      continue;
    }
    consumer->inputs[0] = it->inputs[0];  // the BHWC staging buffer
    consumer->defines["BHWC_INPUT"] = "";
    consumer->defines["IN_C"] = std::to_string(values[it->outputs[0]].shape.c);
    it = uploads->erase(it);
    ++fused;
  }
  return fused;
}

}  // namespace tflite_gles
