// Helpers the prologue fusions share (delegate/passes/dw_fusion.cc,
// delegate/passes/prologue_fusion.cc): who reads and writes a Value among
// the dispatches not folded away yet, and whether a GEMM reads a tensor as
// a 1x1 convolution does.
#pragma once

#include <vector>

#include "delegate/graph/graph.h"
#include "delegate/passes/fusion.h"

namespace tflite_gles {

// The GEMM reads `shape` as a 1x1 convolution does: one row per pixel, the
// depth over its channel slices.
inline bool ReadsAsPointwise(const Dispatch& gemm, const Shape4& shape) {
  const long long pixels = 1LL * shape.h * shape.w;
  return IntDefine(gemm, "ROWS") == shape.b * pixels &&
         IntDefine(gemm, "ROW_PIXELS") == pixels &&
         IntDefine(gemm, "DEPTH_STEPS") == shape.slices() &&
         IntDefine(gemm, "DEPTH_STRIDE") == pixels &&
         IntDefine(gemm, "IN_BATCH_STRIDE") == shape.slices() * pixels;
}

// A mean over the whole H x W map (mean.comp, KEEP_C, no activation): a
// global average pool, or MEAN over H and W.
inline bool IsWholeMapMean(const Dispatch& d) {
  if (d.shader != "mean" || !d.defines.count("KEEP_C") || !d.defines.count("REDUCE_H") ||
      !d.defines.count("REDUCE_W") || d.outputs.size() != 1 || d.inputs.size() != 1) {
    return false;
  }
  for (const auto& [name, value] : d.defines) {
    if (name.rfind("ACT_", 0) == 0) return false;
  }
  return IntDefine(d, "COUNT") == IntDefine(d, "IN_H") * IntDefine(d, "IN_W") &&
         IntDefine(d, "COUNT") > 0;
}

// Who reads and writes a Value's storage (its root: views included) among
// the dispatches not folded away yet; the prologue fusions walk the list
// this way.
struct DispatchScan {
  const std::vector<Value>& values;
  const std::vector<Dispatch>& list;
  std::vector<bool> removed;

  DispatchScan(const std::vector<Value>& v, const std::vector<Dispatch>& l)
      : values(v), list(l), removed(l.size(), false) {}

  int Readers(ValueId root) const {
    int count = 0;
    for (size_t j = 0; j < list.size(); ++j) {
      if (removed[j]) continue;
      for (ValueId read : list[j].inputs) count += StorageRoot(values, read) == root;
    }
    return count;
  }
  bool Writes(size_t j, ValueId root) const {
    if (removed[j]) return false;
    for (ValueId id : list[j].outputs) {
      if (StorageRoot(values, id) == root) return true;
    }
    return false;
  }
  // The last dispatch before `before` that writes `root`; -1 if none.
  int LatestWriter(size_t before, ValueId root) const {
    for (size_t j = before; j-- > 0;) {
      if (Writes(j, root)) return static_cast<int>(j);
    }
    return -1;
  }
  // Whether a dispatch strictly between `after` and `before` writes `root`.
  bool WrittenBetween(size_t after, size_t before, ValueId root) const {
    for (size_t j = after + 1; j < before; ++j) {
      if (Writes(j, root)) return true;
    }
    return false;
  }
};

}  // namespace tflite_gles
