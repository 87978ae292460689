// Checks every node must pass before any kernel looks at it: the structure
// all GPU kernels rely on and the device's storage limits. The registry runs
// them first, so a kernel added tomorrow cannot forget them.
#pragma once

#include "delegate/graph/graph.h"
#include "delegate/abi/node_view.h"
#include "egl/status.h"

namespace tflite_gles {

// OK, or why the node cannot run on this device whatever its op:
//  * an output that is also an input (an in-place op) has no place in a
//    dataflow partition;
//  * a tensor larger than the device can bind (GL_MAX_SHADER_STORAGE_BLOCK_SIZE
//    for writes and SSBO reads, GL_MAX_TEXTURE_BUFFER_SIZE for texture-buffer
//    reads) would be read or written only in part: a wrong answer, not an
//    error, on drivers that do not enforce the limit.
Status CheckNodeForDevice(const NodeView& node, const GraphContext& graph,
                          const DeviceProfile& device);

}  // namespace tflite_gles
