// MIRROR_PAD folded into the convolution that reads it: the convolution
// gathers from the unpadded tensor and mirrors every tap that falls outside
// it (shaders/conv2d.comp GATHER_MIRROR), so neither the padding dispatch
// nor its padded copy exists. Style transfer pads (REFLECT) before each of
// its 16 VALID convolutions: 16 dependent dispatches of 5-14 µs each on an
// H100 (docs/perf/log.md, "style, session 10").
//
// What fuses: a relayout dispatch of MIRROR_PAD (PAD_REFLECT or
// PAD_SYMMETRIC, MODE_AFFINE, unit strides, padding on H and W only) whose
// output is read by exactly one dispatch, a GENERIC conv2d with zero
// padding of its own (VALID) that reads it as its input, and is no partition
// output, write-back or view. The convolution then reads the pad's input
// with the pad's top and left amounts as its PAD_TOP / PAD_LEFT; every
// coordinate it reaches lies within one reflection of the input (MIRROR_PAD
// limits the paddings to that), which conv2d.comp's mirror_coord handles.
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Fuses in place; returns how many pad dispatches were removed.
int FuseMirrorPadIntoConv(const std::vector<Value>& values,
                          const std::vector<ValueId>& keep,
                          std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
