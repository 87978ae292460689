// Upload fusion: an image input (one channel slice: C <= 4) whose only
// reader is a general convolution (conv2d.comp GENERIC + ONE_INPUT_SLICE,
// the first layer of nearly every vision model) is read by that convolution
// straight from its BHWC upload staging buffer (conv2d.comp BHWC_INPUT), and
// the layout conversion dispatch before it goes. Saves a dependent dispatch
// and a write + read of the converted tensor; on a discrete GPU the
// convolution then reads host memory over PCIe itself, as the conversion
// did. Chosen per device: DeviceProfile::fuse_upload_into_conv. A uint8/int8
// input staged as raw bytes (layout_convert.comp STAGED_BYTES) is read the
// same way, dequantized in the read (conv2d.comp BHWC_BYTES_INPUT).
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// `uploads`: the upload conversions (layout_convert TO_PHWC4), `kernels`
// the kernel dispatches, `readbacks` the readback conversions (they may
// read an input too). Fused conversions are removed from `uploads`; returns
// how many.
int FuseUploadConversions(const std::vector<Value>& values,
                          std::vector<Dispatch>* uploads,
                          std::vector<Dispatch>* kernels,
                          const std::vector<Dispatch>& readbacks);

}  // namespace tflite_gles
