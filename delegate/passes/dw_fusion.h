// Depthwise-into-GEMM fusion: a DEPTHWISE_CONV_2D whose output only a
// pointwise GEMM (shaders/gemm.comp, tiled) reads runs inside that GEMM's
// workgroups (gemm.comp's DW_PROLOGUE_*): each workgroup computes the
// depthwise outputs of its rows into shared memory and multiplies them from
// there. MobileNet-style chains (depthwise 3x3 -> 1x1 conv) lose one
// dependent dispatch per pair and the depthwise output tensor; the price is
// that every workgroup along the output-slice axis recomputes its rows'
// depthwise (docs/perf/log.md, "Depthwise into GEMM (dwpw)").
//
// What fuses (everything else is left as it was):
//  - producer: a depthwise_conv2d dispatch with multiplier 1, a kernel of
//    at most 5x5 and any stride and dilation (the FAST_3X3 path or the
//    general one; kernels larger than 3x3 only where the map has at most
//    24x24 output pixels: measured slower fused on bigger ones), not
//    specialized, without an epilogue or with one of x alone (a quantized
//    model's simulator step, which runs in the prologue as DW_EPILOGUE(x));
//  - consumer: a gemm.comp dispatch of the tiled form (not SPLIT_K) with
//    no prologue yet, reading the producer's output as its input, as a 1x1
//    convolution reads it (rows = the output's pixels, depth = its slices);
//  - the producer's output is read by no other dispatch, is no partition
//    output, no write-back and has no view;
//  - a tile for the fused GEMM fits the device (kernels::
//    ChooseDepthwiseGemmTile: the A tile in shared memory).
// The consumer's activation and epilogue stay. The fused dispatch takes the
// consumer's place and reads the depthwise's input, weights and bias.
// Runs after FuseEpilogues, only where DeviceProfile::shared_memory_gemm
// and DeviceProfile::fuse_depthwise_into_gemm are set.
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Fuses in place; returns how many depthwise dispatches were folded away.
// `values` are the partition's Values (the GEMM's packed weights are
// repacked in place when the fused tile is wider); `keep` lists Values that
// must stay materialized besides partition outputs (write-back sources).
int FuseDepthwiseIntoGemm(const DeviceProfile& device, std::vector<Value>* values,
                          const std::vector<ValueId>& keep,
                          std::vector<Dispatch>* dispatches);

// Mean-into-GEMM fusion, the same idea for a classifier's head: a mean over
// the whole H x W map (mean.comp in one pass, KEEP_C, no activation: global
// average pooling or MEAN over H and W) whose output only a split-K GEMM
// (FULLY_CONNECTED, or the 1x1 convolution on the pooled 1x1 map) reads, as
// rows = batch and depth = slices, runs inside that GEMM (gemm.comp's
// MEAN_PROLOGUE): each workgroup averages the map into shared memory first.
// Same conditions on the mean's output as above; maps of at most 64 pixels
// (each workgroup walks the map again); where the means and the
// partial sums do not fit the device's shared memory together, nothing
// changes. Only where DeviceProfile::fuse_mean_into_gemm is set. Returns
// how many mean dispatches were folded away.
int FuseMeanIntoGemm(const DeviceProfile& device, const std::vector<Value>& values,
                     const std::vector<ValueId>& keep, std::vector<Dispatch>* dispatches);

// Softmax-into-GEMM fusion, the other end of a classifier's head: a SOFTMAX
// (channel_normalize.comp, OP_SOFTMAX) whose input only a split-K GEMM
// writes, with at most 4 rows in one workgroup row, runs in that GEMM
// (gemm.comp's SOFTMAX_EPILOGUE): every workgroup stores its raw logits into
// the GEMM's own output tensor, now a read-write buffer, and counts itself
// on an arrival counter (a zeroed constant, one per fused GEMM); the last to
// arrive reads all the logits back and writes the softmax into the
// SOFTMAX's output, then zeroes the counter for the next run. Nothing waits
// on another workgroup, so no forward-progress guarantee is needed. Same
// conditions on the logits as above (no other reader, no partition output,
// no write-back), the SOFTMAX reads them as the GEMM's rows (one pixel
// each), the GEMM has no tensor epilogue operand and its softmax scratch
// fits the shared memory; the fused dispatch takes the SOFTMAX's place.
// Only where DeviceProfile::fuse_softmax_into_gemm is set. `values` gains
// the counters. Returns how many SOFTMAX dispatches were folded away.
int FuseSoftmaxIntoGemm(const DeviceProfile& device, std::vector<Value>* values,
                        const std::vector<ValueId>& keep,
                        std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
