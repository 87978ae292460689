// A pass that rewrites a constant's data (e.g. repacking GEMM weights for
// another tile, delegate/passes/dw_fusion.cc) without making it: a lazy
// constant (Value::LazyConstant) stays lazy, so the serialization cache can
// still hold the rewritten bytes and a filled start never reads or repacks
// the weights. On NVIDIA, materializing MobileNet v1's fused pointwise
// weights for their repacking cost ~21 ms of every filled start plus their
// upload (docs/perf/log.md, "cold3").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// `value`'s data becomes transform(data), of `floats` floats. A lazy value's
// cache key gains `step`, which must name every parameter of the transform
// (its source's content hash is already in the key); an eager value is
// transformed now.
void TransformConstant(Value& value, const std::string& step, size_t floats,
                       std::function<std::vector<float>(const std::vector<float>&)> transform);

}  // namespace tflite_gles
