// Which supported nodes go to the GPU, and why each other node stays on the
// CPU: the partitions TFLite would form are previewed, the largest kept up
// to max_delegated_partitions, and a few rules keep the graph runnable.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "delegate/abi/tflite_abi.h"
#include "egl/status.h"

namespace tflite_gles {

// A TFLite IntArray's values (empty for null).
std::vector<int> ToVector(const abi::IntArray* array);
// An IntArray with TFLite's layout, owned by a vector of ints.
std::vector<int> MakeIntArray(const std::vector<int>& values);

// A group of nodes that stay on the CPU for one reason (one WARNING line).
struct CpuNodes {
  std::string op;      // "CONV_2D v1", or "" for nodes of several ops
  std::string reason;
  std::vector<int> nodes;
};

struct PartitionPlan {
  std::vector<int> delegated;  // ascending node indices
  int partitions = 0;
  std::vector<CpuNodes> cpu;   // supported nodes that still stay on the CPU
};

// Plans the partitions of `supported` (nodes some kernel accepts; `declined`
// holds the others with their reasons):
//  * a node that reads a tensor a declined node writes, where that node was
//    declined over its output (its declared shape or type may be wrong:
//    TFLite corrects declared shapes only at Prepare, after delegation, and
//    a GPU program built for the declared one would meet another), stays on
//    the CPU too, and so do the readers of its outputs in turn;
//  * the largest max_partitions partitions are kept (every boundary is a
//    GPU<->CPU round trip); the nodes of the others stay on the CPU, named;
//  * a partition holding a node the CPU has no kernel for (a custom op
//    TFLite could not resolve: MediaPipe's GPU-only ops) is kept beyond the
//    limit, since on the CPU the model could not run at all;
//  * a DEQUANTIZE of a constant stays with its consumers: if one of them
//    runs on the CPU, the DEQUANTIZE does too (the CPU op needs the tensor
//    as the CPU DEQUANTIZE makes it); GPU consumers still fold the constant
//    themselves (GraphContext), so no partition boundary moves.
// Fails only if the runtime cannot preview the partitioning.
StatusOr<PartitionPlan> PlanPartitions(abi::Context* context,
                                       const std::vector<int>& supported,
                                       const std::map<int, std::string>& declined,
                                       int max_partitions);

// True where TFLite has a CPU kernel for the node: false for the
// placeholder registration of an unresolved custom op (no init, free or
// prepare; an invoke that only reports the op as unresolved).
bool HasCpuKernel(const abi::Registration& registration);

// "node 3" or "nodes 3, 7, 9" (the form the WARNING lines use).
std::string NodeList(const std::vector<int>& nodes);

}  // namespace tflite_gles
