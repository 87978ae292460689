// Split-K across workgroups for the depthwise-fused GEMMs on small maps
// (shaders/gemm_dw_splitk.comp). gemm.comp's fused tile (delegate/
// dw_fusion.h) keeps each workgroup at 4 rows on 14x14 and 7x7 maps to make
// enough workgroups, so every workgroup reads all the weights of its
// slices; here the depth is cut into chunks, one workgroup per (row group,
// slice group, chunk), so the row tiles grow without fewer workgroups and
// without computing any depthwise output twice along the chunks. The
// workgroup that finishes a tile's last chunk adds the chunks' partial sums
// (a scratch buffer) and writes the output (docs/perf/log.md, "Split-K
// across workgroups (skw)").
#pragma once

#include <string>
#include <vector>

#include "delegate/graph/graph.h"
#include "egl/status.h"

namespace tflite_gles {

// One gemm_dw_splitk.comp workgroup: rows x slices outputs (one vec4 each
// per invocation), each output's chunk summed by k_parts invocations;
// chunks of chunk_steps depth steps.
struct DwSplitKTile {
  int rows = 16;
  int slices = 16;
  int k_parts = 2;
  int chunk_steps = 32;
};

// Parses "ROWS,SLICES,KPARTS,CHUNK_STEPS" ('/' also separates).
StatusOr<DwSplitKTile> ParseDwSplitKTile(const std::string& text);

// The tile for a fused GEMM of `rows` x `out_slices` over `depth_steps`
// (DeviceProfile::dw_splitk_tile_override wins), or an error where none fits
// the device's workgroup size and shared memory.
StatusOr<DwSplitKTile> ChooseDwSplitKTile(long long rows, int out_slices,
                                          int depth_steps, const DeviceProfile& device);

// Rewrites every depthwise-fused gemm.comp dispatch (DW_PROLOGUE_*) of at
// most kMaxDwSplitKRows rows into a gemm_dw_splitk.comp one, in place
// (`values` gains the shared partial-sum and counter buffers; the GEMM
// weights are repacked). Only where DeviceProfile::split_depthwise_gemm_k
// is set. Returns how many were rewritten.
constexpr long long kMaxDwSplitKRows = 400;
// The chosen tile (no override) only from this depth on.
constexpr int kMinDwSplitKDepthSteps = 256;
int SplitDepthwiseGemmsAcrossWorkgroups(const DeviceProfile& device,
                                        std::vector<Value>* values,
                                        std::vector<Dispatch>* dispatches);

}  // namespace tflite_gles
