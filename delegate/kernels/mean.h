// The mean over height and width that MEAN uses, for other kernels whose
// op reduces to it (global average pooling).
#pragma once

#include <string>

#include "delegate/graph/graph.h"
#include "egl/status.h"

namespace tflite_gles::kernels {

// OK if a mean over the whole H x W map of `in` fits the GPU's limits.
Status CheckSpatialMean(const Shape4& in);

// Emits the dispatches writing the mean over H and W of `in` to `out`
// (b x 1 x 1 x c), with the fused activation define `activation` ("" for
// none) applied to the result.
Status BuildSpatialMean(const std::string& label, ValueId in, ValueId out,
                        const std::string& activation, GraphBuilder& builder);

}  // namespace tflite_gles::kernels
