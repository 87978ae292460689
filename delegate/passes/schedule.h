// Dispatch order and memory barriers of a partition.
//
// A dispatch that reads what an earlier one wrote needs a glMemoryBarrier
// between them, and on NVIDIA's driver a barrier also makes the GPU drain
// before the next dispatch starts (a dependent dispatch costs ~4-6 us on an
// H200 even when empty; docs/perf/log.md). Dispatches that touch disjoint
// memory need none and then overlap on the GPU. Two passes make use of that:
//
//  - OrderByLevel (at PartitionRuntime::Create, after the fusion passes,
//    before memory planning): a stable sort of the dispatches by their
//    dependency level (1 + the deepest dispatch they depend on), so that
//    independent dispatches sit next to each other. Style transfer's 26
//    small 1x1 convolutions that turn the style vector into the instance
//    norms' scales and offsets depend on the style input alone: they become
//    one barrier-free run at the start instead of 26 dependent dispatches.
//    A chain (MobileNet) keeps its order.
//  - BarriersBefore (at Allocate, once the arena offsets are known): which
//    dispatches need a barrier before them. Checked on byte ranges, not on
//    tensors, because the memory planner lets tensors share bytes: a
//    dispatch needs one if it reads or writes bytes written since the last
//    barrier (read after write, write after write), or writes bytes read
//    since then (write after read). The first dispatch of an invoke always
//    gets one, so nothing of the previous invoke can overlap it.
#pragma once

#include <cstddef>
#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Stable sort of `dispatches` by dependency level. Dependencies are on the
// root storage of every Value a dispatch reads or writes (views count as
// their root): read after write, write after write, write after read.
// Returns the new order as indices into the old one; `dispatches` is
// reordered in place.
std::vector<size_t> OrderByLevel(const std::vector<Value>& values,
                                 std::vector<Dispatch>* dispatches);

// Bytes [begin, end) of one GL buffer (`buffer`: its name, or any key that
// is equal exactly when the buffers are the same).
struct MemoryRange {
  unsigned buffer = 0;
  size_t begin = 0;
  size_t end = 0;
};

struct StepMemory {
  std::vector<MemoryRange> reads;
  std::vector<MemoryRange> writes;
};

// Per step, whether a barrier must come before it (see above); the first
// step always true.
std::vector<bool> BarriersBefore(const std::vector<StepMemory>& steps);

}  // namespace tflite_gles
