#include "delegate/passes/mirror_pad_fusion.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "delegate/passes/fusion.h"

namespace tflite_gles {
namespace {

// The pad's BEGIN define, "ivec4(b,h,w,c)": minus the paddings before.
bool ParseIvec4(const std::string& text, int out[4]) {
  return std::sscanf(text.c_str(), "ivec4(%d,%d,%d,%d)", &out[0], &out[1], &out[2],
                     &out[3]) == 4;
}

// A MIRROR_PAD relayout over H and W only; its paddings before in *top,
// *left and the mirror mode (0 reflect, 1 symmetric) in *mode.
bool IsSpatialMirrorPad(const std::vector<Value>& values, const Dispatch& d, int* top,
                        int* left, int* mode) {
  if (d.shader != "relayout" || !HasDefine(d, "MODE_AFFINE") || d.outputs.size() != 1 ||
      d.inputs.size() != 1 || !d.read_write.empty()) {
    return false;
  }
  if (HasDefine(d, "PAD_REFLECT")) {
    *mode = 0;
  } else if (HasDefine(d, "PAD_SYMMETRIC")) {
    *mode = 1;
  } else {
    return false;
  }
  auto src = d.defines.find("SRC_AXIS"), begin = d.defines.find("BEGIN"),
       stride = d.defines.find("STRIDE");
  if (src == d.defines.end() || begin == d.defines.end() || stride == d.defines.end() ||
      src->second != "ivec4(0,1,2,3)" || stride->second != "ivec4(1,1,1,1)") {
    return false;
  }
  int b[4];
  if (!ParseIvec4(begin->second, b) || b[0] != 0 || b[3] != 0) return false;
  const Shape4& in = values[d.inputs[0]].shape;
  const Shape4& out = values[d.outputs[0]].shape;
  if (in.b != out.b || in.c != out.c) return false;
  *top = -b[1];
  *left = -b[2];
  return *top >= 0 && *left >= 0;
}

}  // namespace

int FuseMirrorPadIntoConv(const std::vector<Value>& values,
                          const std::vector<ValueId>& keep,
                          std::vector<Dispatch>* dispatches) {
  std::vector<Dispatch>& list = *dispatches;
  std::vector<bool> removed(list.size(), false);
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  int fused = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    int top = 0, left = 0, mode = 0;
    if (!IsSpatialMirrorPad(values, list[i], &top, &left, &mode)) continue;
    const ValueId padded = list[i].outputs[0];
    const ValueId source = list[i].inputs[0];
    if (pinned[padded] || values[padded].storage_of >= 0) continue;
    // Its one reader, after it.
    const int reader = SoleReader(values, list, removed, padded);
    if (reader <= static_cast<int>(i)) continue;
    Dispatch& conv = list[reader];
    if (conv.shader != "conv2d" || !HasDefine(conv, "GENERIC") || conv.inputs[0] != padded ||
        HasDefine(conv, "GATHER_MIRROR") || HasDefine(conv, "BHWC_INPUT") ||
        HasDefine(conv, "BHWC_BYTES_INPUT") || HasDefine(conv, "TEXTURE_INPUT") ||
        IntDefine(conv, "PAD_TOP") != 0 || IntDefine(conv, "PAD_LEFT") != 0) {
      continue;
    }
    const Shape4& in = values[source].shape;
    if (IntDefine(conv, "IN_H") != values[padded].shape.h ||
        IntDefine(conv, "IN_W") != values[padded].shape.w) {
      continue;
    }
    conv.inputs[0] = source;
    conv.defines["IN_H"] = std::to_string(in.h);
    conv.defines["IN_W"] = std::to_string(in.w);
    conv.defines["IN_HW"] = std::to_string(in.h * in.w);
    conv.defines["PAD_TOP"] = std::to_string(top);
    conv.defines["PAD_LEFT"] = std::to_string(left);
    conv.defines["GATHER_MIRROR"] = std::to_string(mode);
    conv.label = list[i].label + " + " + conv.label;
    removed[i] = true;
    ++fused;
  }
  EraseRemoved(removed, &list);
  return fused;
}

}  // namespace tflite_gles
