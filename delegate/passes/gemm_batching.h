// Independent GEMMs of one shared input in one dispatch: style transfer
// computes each conditional instance norm's gamma and beta from its style
// vector by a 1x1 convolution, 26 GEMMs of 1 row x 100 deep, 3-32 outputs,
// each a dispatch of its own (about 0.24 ms of an H100's time at the start
// of an invoke, docs/perf/log.md, "style, session 10"). One split-K GEMM
// computes them all into one tensor, and the norms' statistics dispatches
// (shaders/norm_stats.comp AFFINE) read their gamma and beta from it at an
// offset (GAMMA_BASE, BETA_BASE).
//
// What batches: gemm.comp SPLIT_K dispatches of one row (batch 1, a 1x1
// output) with no prologue or epilogue, that read the same input Value and
// agree on every define but their output width (OUT_S, OUT_C,
// WEIGHT_SLICES), whose output is read only by norm_stats AFFINE
// dispatches as gamma or beta and is no partition output, write-back or
// view. Their packed weights ([step][WEIGHT_SLICES][4] vec4) are joined
// along the slices, step by step, and their biases one after the other;
// each keeps its own padding slices (zero weights and bias: zeros), so
// every original output starts at a whole slice of the joined one.
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Batches in place (new Values are appended to `values`; the replaced
// weights and biases are emptied); returns how many dispatches were saved.
int BatchSharedInputGemms(std::vector<Value>* values, const std::vector<ValueId>& keep,
                          std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
