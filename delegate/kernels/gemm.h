// The many-core GEMM (shaders/gemm.comp: the depth split across a workgroup,
// partial sums combined in shared memory) for 1x1 CONV_2D and
// FULLY_CONNECTED on real GPUs: its workgroup tiles, chosen per layer
// shape, and the dispatch. Used instead of conv2d.comp's
// GEMM path when DeviceProfile::shared_memory_gemm is set
// (delegate/device/device_tuning.cc).
#pragma once

#include <string>
#include <vector>

#include "delegate/graph/graph.h"
#include "delegate/kernels/conv_common.h"
#include "delegate/abi/node_view.h"

namespace tflite_gles::kernels {

// One gemm.comp workgroup (see the shader's header).
struct SharedGemmTile {
  bool split_k = false;  // few rows: one slice per invocation, no row tile
  int tile_rows = 1;     // per invocation (split_k: the rows of a workgroup)
  int tile_slices = 1;   // per invocation (tiled only)
  int threads_r = 1;     // tiled: invocations along rows / along slices;
  int threads_s = 1;     // split_k: threads_s = slices per workgroup
  int k_parts = 1;       // invocations splitting each output's depth
  int local_x() const { return threads_r * threads_s; }
  int wg_rows() const { return split_k ? tile_rows : tile_rows * threads_r; }
  int wg_slices() const { return split_k ? threads_s : tile_slices * threads_s; }
  // vec4s of shared memory the shader declares (<= SharedGemmVec4Limit).
  int shared_vec4() const;
  std::string ToString() const;
};

// Shared memory a gemm.comp workgroup may use, in vec4s: the device's
// GL_MAX_COMPUTE_SHARED_MEMORY_SIZE up to 32 KiB (NVIDIA has 48 KiB; the
// rest leaves room for a second workgroup), and never less than the 16 KiB
// every GLES 3.1 device has.
constexpr int kSharedGemmVec4 = 1024;
int SharedGemmVec4Limit(const DeviceProfile& device);

// The tile for a GEMM of `rows` x `out_slices` over `depth_steps`: the first
// of the measured tiles that makes enough workgroups to busy a many-core GPU
// (DeviceProfile::min_invocations > 0), within the device's workgroup size
// and shared memory. DeviceProfile::gemm_tile_override, if set, wins (for
// sweeps).
StatusOr<SharedGemmTile> ChooseSharedGemmTile(long long rows, int out_slices,
                                              int depth_steps,
                                              const DeviceProfile& device);

// Parses "TM,TN,TR,TS,KP" (tiled) or "splitk,SLICES,KP"
// (TFLITE_GLES_GEMM_TILE).
StatusOr<SharedGemmTile> ParseSharedGemmTile(const std::string& text);

// Emits one gemm.comp dispatch writing `out` from `in`, read as `gemm`
// describes (in_lanes = 4 * gemm.depth_steps).
Status AddSharedGemmDispatch(const NodeView& node, GraphBuilder& builder,
                             ValueId in, ValueId out, const GemmInput& gemm,
                             const WeightAt& weight,
                             const std::vector<float>& bias,
                             abi::FusedActivation activation,
                             const LazyWeights& lazy = LazyWeights(),
                             ValueId bias_value = -1);
// With `bias_value` >= 0 the bias is that tensor (one vec4 per output
// slice: gemm.comp reads it only below OUT_S) instead of `bias`.

// A gemm.comp dispatch whose A matrix is computed in its workgroups by a
// 3x3 depthwise prologue (DW_PROLOGUE_*, delegate/passes/dw_fusion.h): each
// workgroup holds WG_ROWS x depth_steps vec4s of A in shared memory, so the
// tile must keep that within the device's shared memory, and its
// invocation count must be a multiple of WG_ROWS (each computes one row).
// The override (DeviceProfile::gemm_tile_override) applies if it fits.
StatusOr<SharedGemmTile> ChooseDepthwiseGemmTile(long long rows, int out_slices,
                                                 int depth_steps,
                                                 const DeviceProfile& device);

// vec4s of shared memory such a dispatch declares: the A tile for depth
// classes of powers of two (so layers of similar depth share a program), or
// the partial sums if larger.
int DepthwiseGemmSharedVec4(const SharedGemmTile& tile, int depth_steps);

// The smallest power of two >= n (1 for n <= 1).
int PowerOfTwoAtLeast(long long n);

// Tiled gemm.comp weights ([slice group][step][wg_slices][4] vec4) repacked
// for workgroups of `to_wg_slices` slices.
std::vector<float> RepackTiledGemmWeights(const std::vector<float>& packed,
                                          int out_slices, int depth_steps,
                                          int from_wg_slices, int to_wg_slices);
// The same for a weights Value, kept lazy (and so cacheable) if it is
// (delegate/graph/constant_transform.h).
void RepackGemmWeights(Value& weights, int out_slices, int depth_steps, int from_wg_slices,
                       int to_wg_slices);

// Sets a tiled gemm.comp dispatch's tile defines, workgroup and grid.
void SetTiledGemmShape(const SharedGemmTile& tile, long long rows,
                       int out_slices, int shared_vec4, Dispatch* dispatch);

}  // namespace tflite_gles::kernels
