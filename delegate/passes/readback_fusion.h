// Readback fusion, the mirror of upload fusion (upload_fusion.h): a model
// output whose one writer is the partition's last kernel for it (a
// transposed convolution: transpose_conv.comp BHWC_OUTPUT) is written by that
// kernel straight into the output's readback staging buffer as TFLite's BHWC
// floats, and the layout conversion dispatch after it (layout_convert.comp
// TO_BHWC) does not run. Saves a dependent dispatch and, on a discrete GPU, a
// read of the tensor; the kernel's stores then cross PCIe themselves, as the
// conversion's did (the hair stand-in's 512x512x2 mask: ~50-80 us of
// conversion on an H200; docs/perf/log.md, "chain5, session 16").
//
// The runtime keeps both original steps and runs the fused variant in the
// producer's place while the output is read back by the CPU; a GPU binding
// of the output runs the original pair again (runtime_readback_fusion.cc).
// Chosen per device: DeviceProfile::fuse_readback.
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// One fusable pair among a partition's steps: `producer` writes the tensor
// that only the readback conversion `conversion` reads; `fused` is the
// producer writing the conversion's staging instead.
struct ReadbackFusion {
  int producer = -1;
  int conversion = -1;
  Dispatch fused;
};

// The fusion of the readback conversion `conversion` (an index into
// `steps`, the partition's dispatches in order) into its producer, if any:
// the tensor is its own storage, written by exactly one dispatch (as its
// first output, not read-write) that `FusedReadbackVariant` takes, and read
// by the conversion alone.
bool PlanReadbackFusion(const std::vector<Value>& values,
                        const std::vector<const Dispatch*>& steps, int conversion,
                        ReadbackFusion* fusion);

// `producer` writing BHWC floats into `staging` of `shape`; false where its
// shader has no such variant or the shape's channels would not make whole
// runs of stores (transpose_conv.comp: one output slice of 1 or 2 channels,
// one slice per invocation, no texture output).
bool FusedReadbackVariant(const Dispatch& producer, ValueId staging, const Shape4& shape,
                          Dispatch* fused);

}  // namespace tflite_gles
