// The CPU resize at readback (readback_resize.h) for real GPUs, where it
// competes with a plain copy: on an H100 the per-pixel loop over DeepLab's
// 21 channels wrote its 5.5 MB at ~16 GB/s on four threads where the copy it
// replaced ran at ~30 (docs/perf/log.md, "Lead, session 12"). Here the
// interpolation is reordered so that the bulk of the work is a streaming
// blend of two whole rows: each thread interpolates the source rows it needs
// along x once (vec4 lanes straight from the PHWC4 read back, ~1/8 of the
// output's floats for DeepLab), keeps the last two in a cache-sized buffer,
// and writes every output row as one contiguous blend of two such rows
// (out.w * c floats, vectorised like a copy, nothing read from memory).
#pragma once

#include <cstdint>
#include <vector>

#include "delegate/runtime/readback_resize.h"

namespace tflite_gles {

// ResizeBilinearPhwc4ToBhwc's result (the same weights; x blended before y,
// so the float rounding order differs by a few ulp), written as above.
// `scratch`: two interpolated rows per thread. With `streaming`, the output
// rows are written with non-temporal stores (DeviceProfile::
// streaming_readback) where the CPU has them.
void ResizeBilinearRowsPhwc4ToBhwc(const float* phwc4, const ReadbackResize& resize,
                                   const Shape4& out, float* bhwc, std::vector<float>* scratch,
                                   CopyWorkers* workers, bool streaming);
// The same from fp16 storage's PHWC4 halves (bit-equal results): each thread
// converts the source rows it interpolates as it needs them, reading the
// halves where they lie (the readback's mapping), instead of one thread
// copying and converting the whole source before the resize starts.
void ResizeBilinearRowsHalfPhwc4ToBhwc(const uint16_t* phwc4, const ReadbackResize& resize,
                                       const Shape4& out, float* bhwc,
                                       std::vector<float>* scratch, CopyWorkers* workers,
                                       bool streaming);

}  // namespace tflite_gles
