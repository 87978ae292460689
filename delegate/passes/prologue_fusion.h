// Prologue fusions for squeeze-and-excitation blocks (MobileNet v3-style:
// selfie segmentation has ten), where a chain of tiny dependent dispatches
// costs ~8 us each on an NVIDIA GPU whatever its work (docs/perf/log.md,
// "seg, session 11"). Both run after FuseEpilogues and the other GEMM
// fusions (delegate/runtime/runtime.cc), only where the device runs
// shaders/gemm.comp and may bind the extra buffers
// (DeviceProfile::max_dispatch_buffers).
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// An elementwise dispatch (shaders/elementwise.comp) whose output only a
// tiled gemm.comp GEMM reads, as a 1x1 convolution reads it, runs in that
// GEMM's loads (gemm.comp PROLOGUE_IN): the block's x * scale before its
// projection, or the decoder's x * scale + y. What fuses:
//  - the elementwise op: one input of the output's shape (the GEMM's new A),
//    the other a tensor of that shape, a per-channel vector (1x1x1xC) or a
//    literal (one tensor operand at least, in the op or its chain); a binary
//    step that keeps zero-padded lanes finite (not DIV, POW, PRELU, ...),
//    any unary step FuseEpilogues takes, and a fused epilogue chain with at
//    most one operand of its own (PROLOGUE_IN2);
//  - its output: read by no other dispatch, no partition output, no
//    write-back, no view; its inputs not rewritten before the GEMM;
//  - the GEMM: tiled (not SPLIT_K), without another prologue.
// Only where DeviceProfile::fuse_elementwise_into_gemm is set. Returns how
// many elementwise dispatches were folded away.
int FuseElementwiseIntoGemm(const DeviceProfile& device, const std::vector<Value>& values,
                            const std::vector<ValueId>& keep,
                            std::vector<Dispatch>* dispatches);

// A bilinear RESIZE (shaders/resize.comp, no epilogue) whose output only a
// tiled GEMM reads, as a 1x1 convolution reads it (selfie's decoder
// upsamples then projects three times), runs in that GEMM's loads
// (gemm.comp RESIZE_PROLOGUE: four loads per A vec4 instead of one, and
// the resized tensor is never written). Only where
// DeviceProfile::fuse_resize_into_gemm is set. Returns how many resize
// dispatches were folded away.
int FuseResizeIntoGemm(const DeviceProfile& device, const std::vector<Value>& values,
                       const std::vector<ValueId>& keep, std::vector<Dispatch>* dispatches);

// Two one-row split-K GEMMs in a row (the block's two fully connected
// layers on the pooled 1x1 map): the first's output only the second reads,
// so the second computes it first in every workgroup (gemm.comp
// FC_PROLOGUE) and the first's dispatch goes. The first: one row read at
// depth stride 1, no prologue or tensor epilogue of its own (its activation
// and an epilogue of x alone run in the prologue); the second: one row,
// reading the first's output as its depth, no other prologue, no softmax.
// A whole-map mean (KEEP_C, no activation or epilogue, one batch) that
// only the first reads folds in too where DeviceProfile::
// fuse_mean_into_gemm_chains is set and the map has at most 8192 vec4s (FC1_MEAN: every workgroup
// averages it first, all its invocations sharing the pixels).
// Only where DeviceProfile::fuse_gemm_chains is set. Returns how many
// dispatches were folded away.
int FuseGemmChains(const DeviceProfile& device, const std::vector<Value>& values,
                   const std::vector<ValueId>& keep, std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
