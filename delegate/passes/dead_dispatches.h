// Dispatches whose results nothing reads, dropped: what a kernel left
// behind when it read around a tensor (DeviceProfile::broadcast_concat_bias:
// the 1x1 convolution reads a concat's input instead of the concat, whose
// dispatch and the resize before it then write for no reader).
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Removes, until none is left, every dispatch without read-write buffers
// whose outputs' storage roots no other dispatch reads and none is a
// partition output's root or in `keep` (write-back sources). Returns how
// many were removed.
int RemoveDeadDispatches(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                         std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
