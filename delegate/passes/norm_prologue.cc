#include "delegate/passes/norm_prologue.h"

#include <string>

#include "delegate/passes/fusion.h"

namespace tflite_gles {
namespace {

// MUL(x, s) with the apply's epilogue over per-channel operands only; its
// epilogue text with the operand renamed to the convolution's binding in
// *prologue ("x" when it has none).
bool IsPerChannelApply(const std::vector<Value>& values, const Dispatch& d,
                       std::string* prologue) {
  if (d.shader != "elementwise" || !HasDefine(d, "OP_MUL") || d.outputs.size() != 1 ||
      !d.read_write.empty() || HasDefine(d, "A_SPLAT") || HasDefine(d, "B_SPLAT") ||
      HasDefine(d, "B_LITERAL")) {
    return false;
  }
  // Only the binary step: a unary step or activation of the MUL itself
  // would run before the epilogue.
  for (const auto& [name, value] : d.defines) {
    if ((name.rfind("ACT_", 0) == 0 || name.rfind("OP_", 0) == 0) && name != "OP_MUL") {
      return false;
    }
  }
  const bool operand = HasDefine(d, "EPILOGUE_IN");
  if (d.inputs.size() != (operand ? 3u : 2u)) return false;
  const Shape4& out = values[d.outputs[0]].shape;
  const Shape4& x = values[d.inputs[0]].shape;
  const Shape4& s = values[d.inputs[1]].shape;
  if (!(x == out) || s.b != 1 || s.h != 1 || s.w != 1 || s.c != out.c) return false;
  auto epilogue = d.defines.find(kEpilogueDefine);
  std::string text = epilogue == d.defines.end() ? "x" : epilogue->second;
  if (text.find("index") != std::string::npos) return false;
  if (operand) {
    const Shape4& shift = values[d.inputs[2]].shape;
    if (shift.b != 1 || shift.h != 1 || shift.w != 1 || shift.c != out.c) return false;
    const std::string from = "LOAD(epilogue_in, slice)";
    if (text.find(from) == std::string::npos) return false;
    text = Replaced(text, from, "LOAD(prologue_shift, slice)");
    if (text.find("epilogue_in") != std::string::npos) return false;
  } else if (text.find("LOAD(") != std::string::npos) {
    return false;
  }
  *prologue = text;
  return true;
}

}  // namespace

int FuseNormApplyIntoConv(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                          int max_dispatch_buffers, std::vector<Dispatch>* dispatches) {
  std::vector<Dispatch>& list = *dispatches;
  std::vector<bool> removed(list.size(), false);
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  int fused = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string prologue;
    if (!IsPerChannelApply(values, list[i], &prologue)) continue;
    const Dispatch& apply = list[i];
    const ValueId applied = apply.outputs[0];
    if (pinned[applied] || values[applied].storage_of >= 0) continue;
    // Its one reader, after it.
    const int reader = SoleReader(values, list, removed, applied);
    if (reader <= static_cast<int>(i)) continue;
    Dispatch& conv = list[reader];
    if (conv.shader != "conv2d" || !HasDefine(conv, "GENERIC") || conv.inputs.size() != 3 ||
        conv.inputs[0] != applied || HasDefine(conv, "EPILOGUE_IN") ||
        HasDefine(conv, "PROLOGUE_IN") ||
        HasDefine(conv, "BHWC_INPUT") || HasDefine(conv, "BHWC_BYTES_INPUT") ||
        HasDefine(conv, "TEXTURE_INPUT") || !conv.read_write.empty() ||
        static_cast<int>(conv.outputs.size()) + 5 > max_dispatch_buffers) {
      continue;
    }
    conv.inputs[0] = apply.inputs[0];
    conv.inputs.push_back(apply.inputs[1]);
    // Without a shift the scale binds twice (binding 5 is declared, unread).
    conv.inputs.push_back(apply.inputs.size() == 3 ? apply.inputs[2] : apply.inputs[1]);
    conv.defines["PROLOGUE_IN"] = "";
    conv.defines["PROLOGUE(x,slice)"] = prologue;
    conv.label = apply.label + " + " + conv.label;
    conv.flops += apply.flops;
    removed[i] = true;
    ++fused;
  }
  EraseRemoved(removed, &list);
  return fused;
}

}  // namespace tflite_gles
