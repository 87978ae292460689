// Instance-normalization statistics as one dispatch.
//
// TFLite converters spell an instance (or per-channel layer) normalization
// as separate ops; its statistics half is
//   m = MEAN(x, axes {1, 2}, keep_dims)        x: B x H x W x C float
//   d = SQUARED_DIFFERENCE(x, m)               (either operand order)
//   v = MEAN(d, axes {1, 2}, keep_dims)
//   t = ADD(v, eps)                            (eps a constant scalar, either
//                                               order, no activation)
//   r = RSQRT(t)
// Style transfer has 13 of these, five dependent dispatches each on an
// H200 (seven on llvmpipe, where a mean takes two passes) for two vectors
// of C floats. FindNormStats finds them among a partition's nodes where d,
// v and t are read by nothing else (no other node, not a partition output);
// BuildNormStats emits shaders/norm_stats.comp, which writes m and r, for
// the group in place of the five nodes' kernels (m and r keep their other
// readers: the scale and offset that follow).
//
// Runs at partition build (delegate.cc, BuildPartition), on TFLite nodes
// rather than on dispatches: the kernels' dispatches for MEAN differ by
// device, the nodes do not. DeviceProfile::fuse_norm_stats
// (TFLITE_GLES_FUSE_NORM_STATS=0/1).
#pragma once

#include <vector>

#include "delegate/graph/graph.h"
#include "delegate/abi/tflite_abi.h"
#include "egl/status.h"

namespace tflite_gles {

struct NormStatsGroup {
  int mean_node = -1;  // the first MEAN: the group is built at its place
  std::vector<int> other_nodes;  // SQUARED_DIFFERENCE, MEAN, ADD, RSQRT
  int x = -1, mean = -1, rstd = -1;  // TFLite tensor indices
  float eps = 0.0f;
};

// The groups among `nodes` (one partition's, in execution order);
// `partition_outputs` are the tensors read outside the partition.
std::vector<NormStatsGroup> FindNormStats(const GraphContext& graph,
                                          const std::vector<int>& nodes,
                                          const std::vector<int>& partition_outputs);

// Emits the group's one dispatch.
Status BuildNormStats(const NormStatsGroup& group, GraphBuilder& builder,
                      const DeviceProfile& device);

}  // namespace tflite_gles
