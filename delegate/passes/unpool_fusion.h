// Unpooling fusion: MediaPipe's MaxUnpooling2D (shaders/max_unpooling.comp)
// folded into the one dispatch that reads its output, as a gather in that
// dispatch's epilogue operand. ENet's upsampling block adds the unpooled
// tensor to its main branch and nothing else reads it, so the unpooling's
// dispatch (~10 us each on the H100 for the hair stand-in's two, plus a
// full write and read of the tensor) goes: the reader's operand load at
// output vec4 `index` becomes the pooled vec4 of the window over it where
// the window's argmax names that position, zero elsewhere
// (docs/perf/log.md, "hair6, session 17").
//
// What fuses: an unpooling of windows that do not overlap (filter = stride,
// no padding, the output exactly the input times the stride), whose output
// is its own storage, no partition output, no write-back, and read by one
// dispatch alone, a gemm_chain (shaders/gemm_chain.comp UNPOOL_GATHER: the
// shader that reads ENet's residual operand after the GEMM passes), through
// one epilogue operand that its epilogue text reads only as
// LOAD(operand, index). The reader then reads the pooled values in the
// operand's binding and the indices in one more (UNPOOL_BINDING), within
// `max_dispatch_buffers`. Outputs are bit for bit the unfused pair's: the
// same values are selected, only not stored in between.
// Chosen per device: DeviceProfile::fuse_unpool (TFLITE_GLES_X_FUSE_UNPOOL).
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Folds in place; returns how many unpooling dispatches went.
int FuseUnpoolIntoEpilogues(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                            int max_dispatch_buffers, std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
