// Helpers shared by the data-movement kernels (concat.cc, reshape.cc,
// slice.cc, pad.cc, transpose.cc, lstm.cc): TFLite axes in Shape4 terms and
// the two shaders that move data, shaders/relayout.comp and
// shaders/concat.comp.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "delegate/graph/graph.h"
#include "delegate/kernels/common.h"

namespace tflite_gles::kernels {

// Shape4 axes: 0 = batch, 1 = height, 2 = width, 3 = channels.
using Int4 = std::array<int, 4>;

// The Shape4 axis of TFLite axis `axis` (negative counts from the back) of a
// tensor of rank `rank` (see Shape4: rank 3 [b,w,c], rank 2 [b,c], ...), or
// an error if the axis is out of range.
StatusOr<int> Shape4Axis(int rank, int axis);

// Shape4 dims as an array (b, h, w, c).
Int4 DimsOf(const Shape4& shape);

// Reads a constant int32/int64 operand (input `i`), with a message naming
// `what` when it is absent, not constant or of another type.
StatusOr<std::vector<int64_t>> ConstantIntsOf(const NodeView& node,
                                              const GraphContext& graph, int i,
                                              const char* what);

// How relayout.comp maps output coordinates to input coordinates.
struct RelayoutSpec {
  enum class Mode { kAffine, kFlat, kDepthToSpace, kSpaceToDepth };
  enum class Pad { kNone, kConstant, kReflect, kSymmetric };
  Mode mode = Mode::kAffine;
  // kAffine: input[k] = begin[k] + stride[k] * output[src_axis[k]].
  Int4 src_axis = {0, 1, 2, 3};
  Int4 begin = {0, 0, 0, 0};
  Int4 stride = {1, 1, 1, 1};
  Pad pad = Pad::kNone;
  float pad_value = 0.0f;
  int block = 1;  // kDepthToSpace / kSpaceToDepth
};

// The affine spec of a slice: input TFLite axis j becomes output axis
// out_axis[j] (of an output of rank out_rank), reading input[j] = begin[j] +
// stride[j] * output[out_axis[j]]; an axis with out_axis -1 is dropped
// (STRIDED_SLICE's shrink_axis_mask) and reads begin[j] only. Output axes
// no input axis maps to have size 1. Vectors are per input axis.
StatusOr<RelayoutSpec> SliceSpec(int in_rank, int out_rank,
                                 const std::vector<int>& begin,
                                 const std::vector<int>& stride,
                                 const std::vector<int>& out_axis);

// Emits one relayout.comp dispatch writing `out` from `in`.
void EmitRelayout(GraphBuilder& builder, ValueId in, ValueId out,
                  const RelayoutSpec& spec, const std::string& label);

// Emits concat.comp dispatches writing `out` = `inputs` joined along Shape4
// axis `axis4`, with the fused activation define `activation` ("" for none).
// Inputs must match `out` on every other axis.
void EmitConcat(GraphBuilder& builder, const std::vector<ValueId>& inputs,
                int axis4, ValueId out, const std::string& activation,
                const std::string& label);

}  // namespace tflite_gles::kernels
