// The convolution before a GEMM pair, as that pair's stage 0
// (shaders/gemm_chain.comp HEAD): ENet's bottleneck is a 3x3 convolution
// (+ PRELU), the 1x1 expansion (+ residual ADD + PRELU) and the next
// block's 1x1 projection (+ PRELU); delegate/passes/gemm_chain.h made the
// last two one dispatch, this takes the 3x3 into it, so each bottleneck is
// one dependent dispatch instead of two (~5 us of dispatch floor each on
// the H100; 21 of the hair segmentation stand-in's bottlenecks, -0.11 ms
// of its GPU time on NVIDIA, fp32 and fp16: docs/perf/log.md, "chain3,
// session 15"). Each workgroup computes its rows
// of the convolution's output c into shared memory from the convolution's
// input (stored by the dispatch before: no halo to recompute) and its first
// GEMM reads c from there; c itself is no longer stored.
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// What fuses: a gemm_chain dispatch whose A is c, the output of a conv2d.comp
// GENERIC convolution of stride 1 (any window, dilation, padding; its tile
// whichever) with at most one epilogue operand, no prologue or gather
// remap, read by the pair alone, not pinned (`keep`, partition outputs),
// and whose inputs nothing between the two writes. Only where
// DeviceProfile::fuse_chain_heads is set (2: also before a single tiled 1x1
// GEMM, hosted by a gemm_chain dispatch of its stage 1 alone, gemm_chain.h
// SingleGemmChain; 3: c may also be a transposed convolution's output,
// gemm_chain.h IsPlainTransposedConvolution, gathered as transpose_conv.comp
// gathers it: ENet's up blocks) and the device binds enough
// buffers and shared memory. Returns how many dispatches were folded away.
int FuseGemmChainHeads(const DeviceProfile& device, const std::vector<Value>& values,
                       const std::vector<ValueId>& keep, std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
