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

// The affine half of a conditional instance norm (style transfer: gamma
// and beta per channel, computed from a style vector by 1x1 convolutions):
//   s = MUL(rstd, gamma), u = MUL(mean, s), shift = SUB(beta, u)
// (MULs in either operand order, no activations), which the graph then
// applies as x * s + shift. Three more dependent dispatches of C floats
// each; worse, the gamma convolution fused MUL(rstd, gamma) as its epilogue,
// which made it and the beta convolution wait for the statistics instead of
// running in the barrier-free run at the start (delegate/passes/schedule.h).
// Where rstd and u are read by nothing else, the group's dispatch reads
// gamma and beta and writes s and shift (with the mean) instead of rstd:
// 13 x 3 dependent dispatches fewer in style transfer (docs/perf/log.md,
// "perf, session 9"). It binds six buffers, so it is matched only where a
// dispatch may bind six (DeviceProfile::max_dispatch_buffers; the GLES 3.1
// minimum is 4) and DeviceProfile::fuse_norm_affine
// (TFLITE_GLES_FUSE_NORM_AFFINE=0/1).
struct NormStatsGroup {
  int mean_node = -1;  // the first MEAN
  // Where the group's one dispatch is built: the first MEAN's place, or
  // with the affine half the first node of the group after gamma's and
  // beta's producers (every reader of the group's outputs comes later).
  int build_node = -1;
  // SQUARED_DIFFERENCE, MEAN, ADD, RSQRT (+ MUL, MUL, SUB with the affine half)
  std::vector<int> other_nodes;
  int x = -1, mean = -1, rstd = -1;  // TFLite tensor indices
  float eps = 0.0f;
  // The affine half (scale >= 0): inputs gamma, beta; outputs s, shift.
  int gamma = -1, beta = -1, scale = -1, shift = -1;
};

// The groups among `nodes` (one partition's, in execution order);
// `partition_outputs` are the tensors read outside the partition; with
// `affine` the affine half is matched too.
std::vector<NormStatsGroup> FindNormStats(const GraphContext& graph,
                                          const std::vector<int>& nodes,
                                          const std::vector<int>& partition_outputs,
                                          bool affine = false);

// Emits the group's one dispatch.
Status BuildNormStats(const NormStatsGroup& group, GraphBuilder& builder,
                      const DeviceProfile& device);

}  // namespace tflite_gles
