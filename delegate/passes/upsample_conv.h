// A 3x3 convolution at stride 1 with padding 1 over a nearest-neighbour upsample by 2 (the
// upsample folded into its gather: GATHER_UPSAMPLE 2, passes/upsample_fusion.h) computed as
// four 2x2 convolutions over the upsampled map's source, one per output parity
// (shaders/conv2d_up2.comp): output (2i + py, 2j + px) reads only source rows i - 1 + py .. i +
// py and columns alike, so 4 taps replace 9 (2.25x fewer multiply-adds) and the staged tile is
// the source's. Style transfer's decoder (@240 and @256: 32 -> 16 at 192x192 and 16 -> 8 at
// 384x384, each after a resize by 2 and a MIRROR_PAD of 1).
//
// A pass after the other fusions (before passes/window_conv.h), so the convolution comes as they
// left it: the mirror pad in its gather (GATHER_MIRROR 0 or 1; both are the source clamped to
// its edges), a norm's apply (PROLOGUE_IN), an epilogue. What moves (DeviceProfile::conv_up2):
// a GENERIC conv2d dispatch of batch 1 with GATHER_UPSAMPLE 2, a 3x3 window, stride and
// dilation 1, padding 1 at the top and left and an output the upsampled map's size, 1-8 input
// slices, its weights constant and its input no staging or texture. Its weights become the
// parities' summed 2x2 kernels (a new constant, lazy where conv2d's was; or literals in the
// program where DeviceProfile::conv_up2_literal_vec4s allows and the products are highp).
#pragma once

#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Rewrites in place (may append the summed weights to `values`); returns how many dispatches
// now run conv2d_up2.
int UseUpsampleConvolutions(const DeviceProfile& device, std::vector<Value>* values,
                            std::vector<Dispatch>* dispatches);

// The four parities' 2x2 weights as conv2d_up2.comp reads them ([group][parity][tap][input
// slice][ts][4 input lanes] vec4 of 4 output channels), from conv2d.comp's packing (`packed`:
// [group][tap][slice][tile_slices][4 input lanes] vec4 of 4 output channels) of an out_c x 3 x
// 3 x (4 in_s) kernel. Exposed for the tests.
std::vector<float> UpsampleConvWeights(const std::vector<float>& packed, int in_s, int out_c,
                                       int tile_slices, int ts);

}  // namespace tflite_gles
