// A nearest-neighbour upsampling by 2 or 4 (or a resize to the same size)
// folded into the convolution that
// alone reads it (shaders/conv2d.comp / conv2d_window.comp GATHER_UPSAMPLE):
// the convolution gathers from the resize's source, a tap at (y, x) of the
// resized map reading source pixel (y / F, x / F), so neither the resize's
// dispatch nor its F^2-times larger copy exists. Style transfer upsamples
// twice and resizes once to the size it has, each followed by a
// mirror-padded convolution (192x192x32, 384x384x16 and 384x384x8 copies;
// docs/perf/log.md, "style2, session 11"); with the resize gone, the norm before it can fold into the
// convolution too (delegate/passes/norm_prologue.h: nearest sampling and a
// per-pixel step commute).
//
// What folds: a resize.comp NEAREST dispatch without ALIGN_CORNERS whose
// output is exactly F = 1, 2 or 4 times its input on both H and W (1/F is then
// exact, so TFLite's floor(o * scale), with or without half-pixel centres,
// is o / F), read by one GENERIC conv2d as its input (after
// mirror_pad_fusion.h), that tensor no partition output, write-back or
// view, the convolution with no staged, texture or already resized input.
// DeviceProfile::fuse_upsample (TFLITE_GLES_X_FUSE_UPSAMPLE=0/1).
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// The factor F of a resize.comp NEAREST dispatch without ALIGN_CORNERS whose
// output is exactly F = 1, 2 or 4 times its input on H and W alike (source
// pixel (y / F, x / F)); 0 if `d` is none (also pool_fusion.h's operand gather).
long long NearestUpsampleFactor(const std::vector<Value>& values, const Dispatch& d);

// Folds in place; returns how many resize dispatches were removed.
int FuseUpsampleIntoConv(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                         std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
