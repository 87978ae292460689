// An output's RESIZE_BILINEAR done on the CPU at readback
// (DeviceProfile::cpu_readback_resize, llvmpipe): the resize's PHWC4 input
// is read back instead of its output, and interpolated into BHWC while it is
// relaid out. On llvmpipe a shader stores a vec4 one lane at a time, so the
// resize of DeepLab's 33x33x21 logits to 257x257 paid 1.4 M scalar stores;
// the CPU writes the same floats in contiguous runs, with no dispatch.
#pragma once

#include <vector>

#include "delegate/graph/graph.h"
#include "delegate/runtime/host_copy.h"

namespace tflite_gles {

struct ReadbackResize {
  bool active = false;
  Shape4 source;            // the resize's input (the buffer read back)
  float scale_h = 0.0f;     // as the kernel computed them (kernels/resize.cc)
  float scale_w = 0.0f;
  bool half_pixel = false;
  ValueId gpu_output = -1;  // the resize's output: read back if it runs
  int step = -1;            // its step, skipped while the CPU resizes
};

// One output position's two source neighbours along an axis and the weight
// of the upper one, as resize.comp and TFLite compute them (source = o *
// scale, or (o + 0.5) * scale - 0.5; neighbours clamped to [0, size)).
struct ResizeSpan {
  int lo;
  int hi;
  float frac;
};
ResizeSpan SourceSpan(int o, float scale, int size, bool half_pixel);

// The ReadbackResize of `dispatch` if it is a bilinear resize of an input of
// shape `source` (resize.comp's defines); inactive otherwise.
ReadbackResize ReadbackResizeOf(const Dispatch& dispatch, const Shape4& source);

// Bilinear interpolation of the PHWC4 `phwc4` (of shape resize.source) to
// the BHWC `bhwc` of shape `out`, with TFLite's source coordinates
// (source = o * scale, or (o + 0.5) * scale - 0.5; neighbours clamped).
// `scratch` holds the source in BHWC and one row blended along y per
// thread. With `workers`, the output rows are split among its threads (a
// copy's parts: one thread below a megabyte per part).
void ResizeBilinearPhwc4ToBhwc(const float* phwc4, const ReadbackResize& resize,
                               const Shape4& out, float* bhwc,
                               std::vector<float>* scratch, CopyWorkers* workers = nullptr);

}  // namespace tflite_gles
