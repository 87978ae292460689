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

// `tensor` itself, or a view of it with its shape (a QUANTIZE of a float
// input is such a view in the float view: kernels/quantize.cc).
bool SameTensor(const std::vector<Value>& values, ValueId id, ValueId tensor) {
  return id == tensor ||
         (values[id].storage_of == tensor && values[id].shape == values[tensor].shape);
}

bool ReadsImageStraight(const std::vector<Value>& values, const Dispatch& d,
                        ValueId tensor) {
  return d.shader == "conv2d" && d.defines.count("GENERIC") != 0 &&
         d.defines.count("ONE_INPUT_SLICE") != 0 && d.defines.count("BHWC_INPUT") == 0 &&
         d.defines.count("BHWC_BYTES_INPUT") == 0 &&
         !d.inputs.empty() && SameTensor(values, d.inputs[0], tensor);
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
      bool viewed = false;  // through a view that reads other elements
      for (ValueId id = 0; id < static_cast<ValueId>(values.size()); ++id) {
        viewed |= values[id].storage_of == tensor && !SameTensor(values, id, tensor);
      }
      if (value.storage_of < 0 && !viewed && value.shape.slices() == 1 &&
          Readers(values, tensor, *kernels, readbacks) == 1) {
        for (Dispatch& d : *kernels) {
          if (ReadsImageStraight(values, d, tensor)) consumer = &d;
        }
      }
    }
    if (consumer == nullptr) {
      ++it;
      continue;
    }
    consumer->inputs[0] = it->inputs[0];  // the BHWC staging buffer
    // Raw uint8/int8 bytes (runtime.cc): the convolution dequantizes them
    // as it reads, with the conversion's constants.
    const bool bytes = it->defines.count("STAGED_BYTES") != 0;
    consumer->defines[bytes ? "BHWC_BYTES_INPUT" : "BHWC_INPUT"] = "";
    for (const char* name : {"STAGED_SCALE", "STAGED_ZERO_POINT", "STAGED_FLIP"}) {
      auto constant = it->defines.find(name);
      if (constant != it->defines.end()) consumer->defines[name] = constant->second;
    }
    consumer->defines["IN_C"] = std::to_string(values[it->outputs[0]].shape.c);
    // The conversion's rounding of an input that only QUANTIZE reads
    // (runtime.cc) moves with it into the convolution's read.
    auto rounding = it->defines.find("INPUT_QUANT(x)");
    if (rounding != it->defines.end()) consumer->defines[rounding->first] = rounding->second;
    it = uploads->erase(it);
    ++fused;
  }
  return fused;
}

}  // namespace tflite_gles
