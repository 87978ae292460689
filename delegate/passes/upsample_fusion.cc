#include "delegate/passes/upsample_fusion.h"

#include <string>

#include "delegate/passes/fusion.h"

namespace tflite_gles {

long long NearestUpsampleFactor(const std::vector<Value>& values, const Dispatch& d) {
  if (d.shader != "resize" || !HasDefine(d, "NEAREST") || HasDefine(d, "ALIGN_CORNERS") ||
      d.outputs.size() != 1 || d.inputs.size() != 1 || !d.read_write.empty()) {
    return 0;
  }
  const Shape4& in = values[d.inputs[0]].shape;
  const Shape4& out = values[d.outputs[0]].shape;
  if (in.b != out.b || in.c != out.c || in.h < 1 || in.w < 1) return 0;
  const long long f = out.h / in.h;
  if ((f != 1 && f != 2 && f != 4) || out.h != f * in.h || out.w != f * in.w) return 0;
  if (IntDefine(d, "IN_H") != in.h || IntDefine(d, "IN_W") != in.w ||
      IntDefine(d, "OUT_H") != out.h || IntDefine(d, "OUT_W") != out.w) {
    return 0;
  }
  return f;
}

int FuseUpsampleIntoConv(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                         std::vector<Dispatch>* dispatches) {
  std::vector<Dispatch>& list = *dispatches;
  std::vector<bool> removed(list.size(), false);
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  int fused = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const long long f = NearestUpsampleFactor(values, list[i]);
    if (f == 0) continue;
    const ValueId resized = list[i].outputs[0];
    const ValueId source = list[i].inputs[0];
    if (pinned[resized] || values[resized].storage_of >= 0) continue;
    // Its one reader, after it.
    const int reader = SoleReader(values, list, removed, resized);
    if (reader <= static_cast<int>(i)) continue;
    Dispatch& conv = list[reader];
    if (conv.shader != "conv2d" || !HasDefine(conv, "GENERIC") || conv.inputs.empty() ||
        conv.inputs[0] != resized || HasDefine(conv, "GATHER_UPSAMPLE") ||
        HasDefine(conv, "PROLOGUE_IN") ||
        HasDefine(conv, "BHWC_INPUT") || HasDefine(conv, "BHWC_BYTES_INPUT") ||
        HasDefine(conv, "TEXTURE_INPUT")) {
      continue;
    }
    const Shape4& out = values[resized].shape;
    const Shape4& in = values[source].shape;
    if (IntDefine(conv, "IN_H") != out.h || IntDefine(conv, "IN_W") != out.w ||
        IntDefine(conv, "IN_HW") != 1LL * out.h * out.w) {
      continue;
    }
    conv.inputs[0] = source;
    conv.defines["IN_HW"] = std::to_string(1LL * in.h * in.w);
    conv.defines["GATHER_UPSAMPLE"] = std::to_string(f);
    conv.label = list[i].label + " + " + conv.label;
    removed[i] = true;
    ++fused;
  }
  EraseRemoved(removed, &list);
  return fused;
}

}  // namespace tflite_gles
