// Pooling fusions: max pooling (MAX_POOL_2D, MediaPipe's argmax pooling) and
// MediaPipe's unpooling folded into the one dispatch that reads their output, each a dispatch less and a tensor
// neither written nor read (docs/perf/log.md, "hair6, session 17").
//
// Unpooling (FuseUnpoolIntoEpilogues): MaxUnpooling2D
// (shaders/max_unpooling.comp) gathered in its reader's epilogue operand.
// ENet's upsampling block adds the unpooled tensor to its main branch and
// nothing else reads it (~10 us each on the H100 for the hair stand-in's
// two): the reader's operand load at output vec4 `index` becomes the pooled
// vec4 of the window over it where the window's argmax names that position,
// zero elsewhere. What fuses: an unpooling of windows that do not overlap
// (filter = stride, no padding, the output exactly the input times the
// stride) whose output is its own storage, no partition output, no
// write-back, read by one dispatch alone, a gemm_chain
// (shaders/gemm_chain.comp UNPOOL_GATHER: the shader that reads ENet's
// residual operand after the GEMM passes), through one epilogue operand that
// its epilogue text reads only as LOAD(operand, index). The reader then reads
// the pooled values in the operand's binding and the indices in one more
// (UNPOOL_BINDING), within `max_dispatch_buffers`. With `upsamplings` a
// nearest upsampling by 1, 2 or 4 (upsample_fusion.h's NearestUpsampleFactor;
// the builtin twin's decoder, RESIZE_NEAREST_NEIGHBOR in place of the
// unpooling) from a source of its own storage folds the same way
// (gemm_chain.comp UPSAMPLE_GATHER: the operand's binding holds the source, no
// indices): DeviceProfile::fuse_upsample_operand, TFLITE_GLES_X_FUSE_UPSAMPLE_OPERAND.
//
// Pooling (FusePoolIntoConcat): a max pooling (shaders/pooling.comp POOL_MAX
// or POOL_MAX_ARGMAX, no activation, non-overlapping windows covering its
// input) whose pooled output only a channel CONCATENATION of whole slices
// reads and whose indices, if any, nothing reads (ENet's initial block: the input's pooling
// beside a strided convolution) is computed in the concat's loads of that
// input (shaders/concat.comp POOL_FIRST: that input moved to binding 1).
//
// Pooling (FusePoolIntoGemmChains): a max pooling of that kind whose output
// only a gemm_chain reads, as its A (ENet's downsampling block: the main
// branch's 1x1 convolution of the pooled map), and whose indices, if any,
// only gathered unpoolings read, is taken in the chain's A loads
// (shaders/gemm_chain.comp POOL_PROLOGUE), and those unpoolings find each
// window's argmax again in the pooling's input (UNPOOL_FROM_INPUT), which
// then lives until them: the pooling's dispatch goes (the hair stand-in's
// other two; its builtin twin's, MAX_POOL_2D with a nearest-upsampling
// decoder, too).
//
// Outputs are bit for bit the unfused dispatches': the same values are
// selected, with the same comparisons, only not stored in between.
// Chosen per device: DeviceProfile::fuse_unpool, fuse_pool_concat,
// fuse_pool_prologue (TFLITE_GLES_X_FUSE_UNPOOL, _FUSE_POOL_CONCAT,
// _FUSE_POOL_PROLOGUE).
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Both fusions, as `device` chooses them; returns how many dispatches went.
int FusePoolings(const DeviceProfile& device, const std::vector<Value>& values,
                 const std::vector<ValueId>& keep, std::vector<Dispatch>* dispatches);

int FuseUnpoolIntoEpilogues(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                            int max_dispatch_buffers, std::vector<Dispatch>* dispatches,
                            bool unpoolings = true, bool upsamplings = false);
int FusePoolIntoConcat(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                       std::vector<Dispatch>* dispatches);
int FusePoolIntoGemmChains(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                           std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
