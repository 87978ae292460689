// An instance norm's apply step folded into the gather of the convolution
// that alone reads it (shaders/conv2d.comp PROLOGUE_IN): the convolution
// reads the tensor before the norm and normalizes each vec4 it gathers, so
// the apply's dispatch and its full write + read of the map go. Style
// transfer applies 13 norms as x * scale + shift (+ ReLU), each one
// elementwise dispatch after its statistics; where the result only feeds a
// convolution (through a MIRROR_PAD that mirror_pad_fusion.h folded into it:
// the downsampling layers and every residual block's first convolution),
// the dispatch goes (docs/perf/log.md, "style2, session 11").
//
// What folds: an elementwise dispatch MUL(x, s) (x of the output's shape,
// s a 1x1x1xC vector, no splat, literal or activation of its own) whose
// epilogue (delegate/passes/fusion.h) uses only per-channel operands
// (`slice`, not `index`: the shift) and whose output one GENERIC conv2d
// reads as its input, with no epilogue operand, prologue or staged input
// of its own, and which is no partition output, write-back or view. The
// convolution then binds x as its input, s and the shift at 4 and 5
// (within DeviceProfile::max_dispatch_buffers), and expands the apply's
// epilogue as PROLOGUE(x,slice). DeviceProfile::fuse_norm_prologue
// (TFLITE_GLES_X_NORM_PROLOGUE=0/1).
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Folds in place; returns how many apply dispatches were removed.
int FuseNormApplyIntoConv(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                          int max_dispatch_buffers, std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
