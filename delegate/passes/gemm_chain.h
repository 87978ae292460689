// Two tiled 1x1 GEMMs in a row as one dispatch (shaders/gemm_chain.comp).
// ENet's bottlenecks end in a 1x1 expansion (+ residual ADD + PRELU, both
// folded into its store) and the next one starts with a 1x1 projection of
// that output (+ PRELU): the hair segmentation stand-in has 24 such pairs,
// each GEMM 11-17 us on the H100 of which ~5 are the dependent-dispatch
// floor (docs/perf/log.md, "hair3, session 14"). The fused dispatch
// computes the first GEMM's rows into shared memory (and stores them: the
// residual of the next block reads them too), then the second from there.
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// What fuses: a tiled gemm.comp GEMM (the second) whose A is the output x
// of another tiled GEMM (the first), read as a 1x1 convolution reads it;
// neither with a prologue or shapes compiled in; the second with at most
// one epilogue operand, the first with at most two; x no view; nothing
// between them writes the second's other inputs or touches its output; the
// second no wider than x, the first at most DeviceProfile::gemm_pair_max_steps
// input slices deep (8; 16 on NVIDIA), and the
// rows at least 128 workgroups of 8.
// The fused dispatch takes the first's place (x's other readers may come
// before the second). Only where DeviceProfile::fuse_gemm_pairs is set and
// the device binds enough buffers and shared memory. With
// DeviceProfile::fuse_second_projection, a plain tiled GEMM that reads a
// pair's x as its second does (same rows, no second operand; ENet's up
// block's side branch) joins that pair as its y2 (gemm_chain.comp Y2).
// Returns how many dispatches were folded away.
int FuseGemmPairs(const DeviceProfile& device, const std::vector<Value>& values,
                  std::vector<Dispatch>* dispatches);

// A tiled gemm.comp GEMM with one output, no prologue, uniform shapes.
bool IsPlainTiledGemm(const Dispatch& gemm);

// A conv2d.comp dispatch that gathers its taps from a plain PHWC4 input
// with stride 1: what gemm_chain.comp's stage 0 (HEAD) computes.
bool IsPlainConvolution(const Dispatch& conv);

// A transpose_conv.comp dispatch of one output that stage 0 can gather as
// well (HEAD_UPSTRIDE): equal strides, PHWC4 output, at most one epilogue
// operand, the whole output in one range (no readback bands).
bool IsPlainTransposedConvolution(const Dispatch& conv);

// `gemm` (a plain tiled GEMM) as a gemm_chain dispatch of its stage 1 alone
// (gemm_chain.comp SINGLE: x is the output), the pairs' tile: the host of a
// head (gemm_chain_head.h) where a convolution comes before a single GEMM.
// False where the rows make fewer than 128 workgroups or the bindings do not fit.
bool SingleGemmChain(const DeviceProfile& device, const Dispatch& gemm, Dispatch* chain);

}  // namespace tflite_gles
