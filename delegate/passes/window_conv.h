// Large convolution windows over few channels move from conv2d.comp's
// per-tap gather to shaders/conv2d_window.comp, which stages a workgroup's
// input window in shared memory once and skips the lanes a 3-channel input
// or output does not have (style transfer's 9x9 first and last layers, its
// two largest dispatches on an H100: docs/perf/log.md, "style2, session 11").
//
// Runs after the other fusions, so that it sees their result: a MIRROR_PAD
// folded into the gather (GATHER_MIRROR), an image read from its upload
// staging (BHWC_INPUT), an epilogue, a norm's apply step in the gather
// (PROLOGUE_IN). What moves: a GENERIC conv2d dispatch
// at stride and dilation 1 with a window of >= 25 taps, at most 2 input and
// 2 output slices (all in one invocation, whatever conv2d.comp's slice
// groups; the weights keep their packing), no texture or byte-staged input, whose window
// block fits the device's shared memory and workgroup limits
// (DeviceProfile::window_conv_block, else smaller blocks down to the GLES
// 3.1 minimums). Its weights, bias and bindings stay as they are.
// DeviceProfile::window_conv_small widens that to 3x3 and larger windows over
// up to 8 input and 4 output slices (style's @240 and @256).
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Rewrites in place; returns how many dispatches now run conv2d_window.
int UseWindowConvolutions(const DeviceProfile& device, const std::vector<Value>& values,
                          std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
