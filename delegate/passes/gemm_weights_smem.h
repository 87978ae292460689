// gemm.comp's WEIGHTS_SMEM / WEIGHTS_SMEM_HALF (DeviceProfile::gemm_weights_smem): a plain
// tiled GEMM (no prologue, not split-K) stages its workgroup's weights, every depth step of
// its slices, in shared memory once, behind one barrier, and its depth loop reads them there
// instead of loading each weight vec4 from memory in each of the THREADS_R invocations that
// use it. For DeepLab's 1x1 layers in fp16, whose kernels ran at ~20 us against ~11 for their
// FMAs alone (docs/perf/log.md, "peak5, session 16": their loads); "half6, session 17" has
// the measurement. Chosen after the fusions, since a GEMM given a prologue keeps its loads,
// and only where the weights fit beside the partial sums in the shared memory gemm.comp may
// use (kernels::SharedGemmVec4Limit): no depth chunks, which would need a barrier() in the
// depth loop (GLSL ES 3.10 allows none in control flow).
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Sets WEIGHTS_SMEM (1: vec4s in `scratch`, which the partial sums then reuse) or
// WEIGHTS_SMEM_HALF (2: packed halves beside it; fp16 storage only, whose weights are
// halves already) on every GEMM that takes it; returns how many did.
int StageGemmWeights(const DeviceProfile& device, std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
