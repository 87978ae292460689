#include "delegate/kernels/gemm.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "delegate/graph/constant_transform.h"
#include "delegate/kernels/common.h"

namespace tflite_gles::kernels {

int SharedGemmTile::shared_vec4() const {
  // The partial sums of every K part; a token 1 where there is one part.
  if (k_parts == 1) return 1;
  return local_x() * k_parts * tile_rows * (split_k ? 1 : tile_slices);
}

std::string SharedGemmTile::ToString() const {
  std::ostringstream out;
  if (split_k) {
    out << "split-K " << tile_rows << " rows x " << threads_s << " slices, "
        << k_parts << " parts";
  } else {
    out << tile_rows << "x" << tile_slices << " per invocation, " << threads_r
        << "x" << threads_s << " invocations, " << k_parts << " parts";
  }
  return out.str();
}

namespace {

int Workgroups(long long rows, int out_slices, const SharedGemmTile& tile) {
  return static_cast<int>(((rows + tile.wg_rows() - 1) / tile.wg_rows()) *
                          ((out_slices + tile.wg_slices() - 1) / tile.wg_slices()));
}

// The largest power of two <= `limit` (>= 1).
int PowerOfTwoAtMost(long long limit) {
  int p = 1;
  while (2LL * p <= limit) p *= 2;
  return p;
}

}  // namespace

int SharedGemmVec4Limit(const DeviceProfile& device) {
  const int device_vec4 =
      device.gpu ? device.gpu->max_shared_memory_bytes / 16 : kSharedGemmVec4;
  return std::max(kSharedGemmVec4, std::min(device_vec4, 2048));
}

namespace {

Status CheckTile(const SharedGemmTile& tile, const DeviceProfile& device) {
  const int threads = tile.local_x() * tile.k_parts;
  const int limit = device.gpu ? device.gpu->max_workgroup_invocations : 128;
  if (tile.tile_rows < 1 || tile.tile_slices < 1 || tile.threads_r < 1 ||
      tile.threads_s < 1 || tile.k_parts < 1) {
    return Status::Error("GEMM tile " + tile.ToString() + " is malformed");
  }
  if (threads > limit) {
    return Status::Error("GEMM tile " + tile.ToString() + " needs " +
                         std::to_string(threads) +
                         " invocations per workgroup; the device allows " +
                         std::to_string(limit));
  }
  if (tile.shared_vec4() > SharedGemmVec4Limit(device)) {
    return Status::Error("GEMM tile " + tile.ToString() + " needs " +
                         std::to_string(tile.shared_vec4() * 16) +
                         " bytes of shared memory, over " +
                         std::to_string(SharedGemmVec4Limit(device) * 16));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<SharedGemmTile> ParseSharedGemmTile(const std::string& text) {
  std::vector<std::string> fields;
  // '/' separates fields as ',' does: bench/options_ab.py splits its
  // variants at commas (TFLITE_GLES_GEMM_TILE=1/1/16/8/8 there).
  std::string commas = text;
  std::replace(commas.begin(), commas.end(), '/', ',');
  std::stringstream in(commas);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(field);
  SharedGemmTile tile;
  std::vector<int> numbers;
  const bool split_k = !fields.empty() && fields[0] == "splitk";
  for (size_t i = split_k ? 1 : 0; i < fields.size(); ++i) {
    char* end = nullptr;
    const long value = std::strtol(fields[i].c_str(), &end, 10);
    if (fields[i].empty() || *end != '\0' || value < 1 || value > 1024) {
      return Status::Error("GEMM tile '" + text + "': '" + fields[i] +
                           "' is not an integer in [1, 1024]");
    }
    numbers.push_back(static_cast<int>(value));
  }
  if (split_k && numbers.size() == 2) {
    tile.split_k = true;
    tile.threads_s = numbers[0];
    tile.k_parts = numbers[1];
  } else if (!split_k && numbers.size() == 5) {
    tile.tile_rows = numbers[0];
    tile.tile_slices = numbers[1];
    tile.threads_r = numbers[2];
    tile.threads_s = numbers[3];
    tile.k_parts = numbers[4];
  } else {
    return Status::Error("GEMM tile '" + text +
                         "' is neither TM,TN,TR,TS,KP nor splitk,SLICES,KP");
  }
  return tile;
}

// Why these shapes (docs/perf/log.md, "NVIDIA GEMM"): a GPU hides memory
// latency with many invocations in flight, and MobileNet-sized GEMMs
// (196 x 512 x 512) are too small to fill one with large tiles. So the
// register tiles stay small and the depth is split across the workgroup
// (K parts), more parts where the map gives few workgroups.
// Rows <= 4 (an FC over a batch, a classifier's logits) reuse no weights,
// so the split-K form reads them directly.
StatusOr<SharedGemmTile> ChooseSharedGemmTile(long long rows, int out_slices,
                                              int depth_steps,
                                              const DeviceProfile& device) {
  SharedGemmTile tile;
  const int max_threads = std::min(
      1024, device.gpu ? device.gpu->max_workgroup_invocations : 128);
  const bool few_rows = rows <= 4;
  if (!device.gemm_tile_override.empty()) {
    TFG_ASSIGN_OR_RETURN(tile, ParseSharedGemmTile(device.gemm_tile_override));
    // An override of the other form does not apply to this layer.
    if (tile.split_k == few_rows) {
      if (tile.split_k) tile.tile_rows = static_cast<int>(rows);
      TFG_RETURN_IF_ERROR(CheckTile(tile, device));
      return tile;
    }
    tile = SharedGemmTile();
  }
  if (few_rows) {
    tile.split_k = true;
    tile.tile_rows = static_cast<int>(rows);
    // H200 sweep of the 1024 -> 1001 logits: 8 slices x 32 parts 11 us
    // (the dispatch floor), 16 x 16 14 us, 32 x 8 18 us, 64 x 4 27 us.
    tile.threads_s = 8;
    tile.k_parts = PowerOfTwoAtMost(std::min<long long>(
        {32, depth_steps, max_threads / tile.threads_s,
         SharedGemmVec4Limit(device) / (tile.threads_s * tile.tile_rows)}));
    TFG_RETURN_IF_ERROR(CheckTile(tile, device));
    return tile;
  }
  // {rows, slices per invocation, invocations along rows, along slices,
  // K parts}, from the H200 sweeps (docs/perf/log.md, "NVIDIA GEMM"; SSBO
  // reads): 4 rows x 1 slice with K in 4 parts was best on every MobileNet
  // layer from 112x112 to 28x28; where it makes few workgroups, splitting K
  // further won (14x14x512: 18 -> 16 us with 2 x 1 and 8 parts; 7x7x1024:
  // 28 -> 15 us with 2 x 1 and 16 parts, 1024 invocations a workgroup).
  // A many-core GPU takes the first that gives kMinGemmWorkgroups
  // workgroups (the H200 has 132 multiprocessors); llvmpipe, when forced
  // (min_invocations 0), the first.
  constexpr int kMinGemmWorkgroups = 192;
  const int candidates[][5] = {{4, 1, 16, 4, 4}, {2, 1, 16, 4, 8}, {2, 1, 16, 4, 16}};
  for (const auto& c : candidates) {
    tile.tile_rows = c[0];
    tile.tile_slices = c[1];
    tile.threads_r = c[2];
    tile.threads_s = c[3];
    // As many parts as measured, the workgroup and shared memory allow, and
    // at least one depth step each.
    tile.k_parts = PowerOfTwoAtMost(std::max<long long>(
        1, std::min<long long>(
               {c[4], max_threads / tile.local_x(),
                SharedGemmVec4Limit(device) /
                    (tile.local_x() * tile.tile_rows * tile.tile_slices),
                depth_steps})));
    if (device.min_invocations == 0 ||
        Workgroups(rows, out_slices, tile) >= kMinGemmWorkgroups) {
      break;
    }
  }
  TFG_RETURN_IF_ERROR(CheckTile(tile, device));
  return tile;
}

int PowerOfTwoAtLeast(long long n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

int DepthwiseGemmSharedVec4(const SharedGemmTile& tile, int depth_steps) {
  return std::max(tile.shared_vec4(),
                  tile.wg_rows() * PowerOfTwoAtLeast(depth_steps));
}

namespace {

// Whether `tile` can run a depthwise-fused GEMM over `depth_steps` on
// `device` (the device's limits, whole rows per invocation group, the A
// tile in shared memory); the error says which check failed.
Status CheckDepthwiseGemmTile(const SharedGemmTile& tile, int depth_steps,
                              const DeviceProfile& device) {
  TFG_RETURN_IF_ERROR(CheckTile(tile, device));
  const int threads = tile.local_x() * tile.k_parts;
  if (threads % tile.wg_rows() != 0) {
    return Status::Error("GEMM tile " + tile.ToString() + ": " +
                         std::to_string(threads) +
                         " invocations do not divide into its " +
                         std::to_string(tile.wg_rows()) + " rows");
  }
  if (DepthwiseGemmSharedVec4(tile, depth_steps) > SharedGemmVec4Limit(device)) {
    return Status::Error("GEMM tile " + tile.ToString() + ": an A tile of " +
                         std::to_string(tile.wg_rows()) + " rows x " +
                         std::to_string(depth_steps) +
                         " depth steps exceeds the shared memory");
  }
  return Status::Ok();
}

// Maps up to ~60x60 (H200 sweeps, docs/perf/log.md, "Register tiles in
// the fused GEMMs" and "Lead, session 6"): several rows per invocation, so
// each weight vec4 loaded feeds several outputs. What binds these layers is
// each invocation's loads (a diagnostic build put the 14x14x512 layer's 20
// us at ~8 us of depth loop, ~5 of depthwise prologue and ~7.5 of
// everything else), so cutting the weight loads pays where the rows alone
// give too few workgroups anyway: 56x56 and 28x28 four rows (56x56 with the
// depth in 4 parts), 14x14 two rows (fp32 with >= 128 output slices: 32
// slices a workgroup), and 7x7 eight rows with the depth in 16 parts (1024
// invocations: the K-part chain halves). 112x112 keeps one output per
// invocation (every register tile was slower there). Empty where no
// register tile applies (larger maps; fewer than 32 output slices above 400
// rows).
std::optional<SharedGemmTile> RegisterTiledDepthwiseGemm(long long rows, int out_slices,
                                                         int depth_steps, int max_threads,
                                                         bool fp16) {
  SharedGemmTile tile;
  tile.tile_rows = 2;
  tile.threads_s = std::min(16, PowerOfTwoAtLeast(out_slices));
  int k_parts = 8;
  if (rows < 100) {
    tile.threads_r = 4;
    k_parts = 16;
  } else if (rows <= 400) {
    tile.threads_r = 2;
    if (!fp16 && out_slices >= 128) {
      // fp32 14x14 maps with >= 512 output channels: 32 slices a workgroup
      // (4 x 32 invocations) halve the depthwise prologue each slice group
      // recomputes; MobileNet's 14x14x512 pairs 19.4 -> 17.2 us. With fewer
      // slices the workgroups get too few (MobileNet 0.25's 128 channels:
      // +4 %), and fp16, whose loads are half the bytes, measured +1.5 %
      // (docs/perf/log.md, "Lead, session 6").
      tile.threads_r = 4;
      tile.threads_s = 32;
    }
  } else if (rows < 1024 && out_slices >= 32) {
    // 28x28: 4 rows (2x2 until session 6: 4x1 measured 1-1.5 us faster per
    // MobileNet pair once GEMM shapes were compiled in).
    tile.tile_rows = 4;
    tile.threads_r = 2;
  } else if (rows < 4096 && out_slices >= 32) {
    // 56x56 (3136 rows; the one-output rule before session 6): 4 rows, the
    // depth in 4 parts, MobileNet's pairs 14.4 -> 13.3 and 19.7 -> 16.6 us
    // (docs/perf/log.md, "Lead, session 6"). 112x112 keeps one output.
    tile.tile_rows = 4;
    tile.threads_r = 2;
    k_parts = 4;
  } else {
    return std::nullopt;
  }
  tile.k_parts = PowerOfTwoAtMost(std::max<long long>(
      1, std::min<long long>({k_parts, max_threads / tile.local_x(), depth_steps})));
  return tile;
}

}  // namespace

StatusOr<SharedGemmTile> ChooseDepthwiseGemmTile(long long rows, int out_slices,
                                                 int depth_steps,
                                                 const DeviceProfile& device) {
  SharedGemmTile tile;
  const int limit = SharedGemmVec4Limit(device);
  const int max_threads = std::min(
      1024, device.gpu ? device.gpu->max_workgroup_invocations : 128);
  // A split-K override is for the few-row GEMMs (a classifier's logits):
  // these keep their rule, so that a sweep of the logits' tile keeps them
  // fused.
  bool override_applies = !device.gemm_tile_override.empty();
  if (override_applies) {
    TFG_ASSIGN_OR_RETURN(tile, ParseSharedGemmTile(device.gemm_tile_override));
    override_applies = !tile.split_k;
    if (!override_applies) tile = SharedGemmTile();
  }
  if (!override_applies) {
    // H200 sweeps (docs/perf/log.md, "Depthwise into GEMM (dwpw)"): one
    // output vec4 per invocation; 16 slices a workgroup (each workgroup
    // recomputes its rows' depthwise, so wide workgroups recompute less:
    // 16 slices beat 4 and 8 on every MobileNet layer; 32 were no better);
    // then as many rows, 32 down to 4, as leave >= kMinFusedWorkgroups
    // workgroups (32 on 112x112, 16 on 56x56, 8 on 28x28, 4 on 14x14 and
    // 7x7, where 2 rows were 5-9 us slower), and K split up to 512
    // invocations.
    constexpr long long kMinFusedWorkgroups = 384;
    tile.tile_rows = 1;
    tile.tile_slices = 1;
    tile.threads_s = std::min(16, PowerOfTwoAtLeast(out_slices));
    const long long slice_groups =
        (out_slices + tile.threads_s - 1) / tile.threads_s;
    tile.threads_r = 32;
    while (tile.threads_r > 4 &&
           (tile.threads_r * PowerOfTwoAtLeast(depth_steps) > limit ||
            (rows + tile.threads_r - 1) / tile.threads_r * slice_groups <
                kMinFusedWorkgroups)) {
      tile.threads_r /= 2;
    }
    tile.k_parts = PowerOfTwoAtMost(std::max<long long>(
        1, std::min<long long>({512 / tile.local_x(), max_threads / tile.local_x(),
                                depth_steps})));
    if (device.dw_gemm_register_tiles) {
      const std::optional<SharedGemmTile> tiled =
          RegisterTiledDepthwiseGemm(rows, out_slices, depth_steps, max_threads, device.fp16);
      if (tiled && CheckDepthwiseGemmTile(*tiled, depth_steps, device).ok()) tile = *tiled;
    }
  }
  TFG_RETURN_IF_ERROR(CheckDepthwiseGemmTile(tile, depth_steps, device));
  return tile;
}

std::vector<float> RepackTiledGemmWeights(const std::vector<float>& packed,
                                          int out_slices, int depth_steps,
                                          int from_wg_slices, int to_wg_slices) {
  const int to_groups = (out_slices + to_wg_slices - 1) / to_wg_slices;
  std::vector<float> repacked(
      static_cast<size_t>(to_groups) * depth_steps * to_wg_slices * 16, 0.0f);
  // Block (slice, step): the 4 vec4 of one output slice at one depth step.
  auto block = [depth_steps](int slice, int step, int wg_slices) {
    return ((static_cast<size_t>(slice / wg_slices) * depth_steps + step) *
                wg_slices + slice % wg_slices) * 16;
  };
  for (int slice = 0; slice < out_slices; ++slice) {
    for (int step = 0; step < depth_steps; ++step) {
      const size_t from = block(slice, step, from_wg_slices);
      const size_t to = block(slice, step, to_wg_slices);
      std::copy(packed.begin() + from, packed.begin() + from + 16,
                repacked.begin() + to);
    }
  }
  return repacked;
}

void RepackGemmWeights(Value& weights, int out_slices, int depth_steps, int from_wg_slices,
                       int to_wg_slices) {
  const size_t groups = static_cast<size_t>((out_slices + to_wg_slices - 1) / to_wg_slices);
  TransformConstant(
      weights,
      "repacked for gemm tiles of " + std::to_string(to_wg_slices) + " slices from " +
          std::to_string(from_wg_slices) + " (" + std::to_string(out_slices) + " slices, " +
          std::to_string(depth_steps) + " steps)",
      groups * depth_steps * to_wg_slices * 16,
      [=](const std::vector<float>& packed) {
        return RepackTiledGemmWeights(packed, out_slices, depth_steps, from_wg_slices,
                                      to_wg_slices);
      });
}

void SetTiledGemmShape(const SharedGemmTile& tile, long long rows,
                       int out_slices, int shared_vec4, Dispatch* dispatch) {
  auto& d = dispatch->defines;
  d["TILE_ROWS"] = std::to_string(tile.tile_rows);
  d["TILE_SLICES"] = std::to_string(tile.tile_slices);
  d["THREADS_R"] = std::to_string(tile.threads_r);
  d["THREADS_S"] = std::to_string(tile.threads_s);
  d["K_PARTS"] = std::to_string(tile.k_parts);
  d["SHARED_VEC4"] = std::to_string(shared_vec4);
  const long long row_groups = (rows + tile.wg_rows() - 1) / tile.wg_rows();
  const int slice_groups = (out_slices + tile.wg_slices() - 1) / tile.wg_slices();
  d["WEIGHT_SLICES"] = std::to_string(slice_groups * tile.wg_slices());
  dispatch->local = {static_cast<uint32_t>(tile.local_x()),
                     static_cast<uint32_t>(tile.k_parts), 1};
  dispatch->grid = {static_cast<uint32_t>(row_groups) * dispatch->local[0],
                    static_cast<uint32_t>(slice_groups) * dispatch->local[1], 1};
}

Status AddSharedGemmDispatch(const NodeView& node, GraphBuilder& builder,
                             ValueId in, ValueId out, const GemmInput& gemm,
                             const WeightAt& weight,
                             const std::vector<float>& bias,
                             abi::FusedActivation activation, const LazyWeights& lazy,
                             ValueId bias_value) {
  const Shape4 in_shape = builder.shape(in);
  const Shape4 out_shape = builder.shape(out);
  const int out_slices = out_shape.slices();
  TFG_ASSIGN_OR_RETURN(SharedGemmTile tile,
                       ChooseSharedGemmTile(gemm.rows, out_slices,
                                            gemm.depth_steps, builder.device()));
  const int slice_groups = (out_slices + tile.wg_slices() - 1) / tile.wg_slices();
  const long long row_groups = (gemm.rows + tile.wg_rows() - 1) / tile.wg_rows();
  const int in_lanes = 4 * gemm.depth_steps;

  Dispatch dispatch;
  dispatch.shader = "gemm";
  dispatch.label = node.Describe();
  auto& d = dispatch.defines;
  TFG_ASSIGN_OR_RETURN(std::string act, ActivationDefine(activation));
  if (!act.empty()) d[act] = "";
  if (tile.split_k) d["SPLIT_K"] = "";
  d["TILE_ROWS"] = std::to_string(tile.tile_rows);
  d["TILE_SLICES"] = std::to_string(tile.tile_slices);
  d["THREADS_R"] = std::to_string(tile.threads_r);
  d["THREADS_S"] = std::to_string(tile.threads_s);
  d["K_PARTS"] = std::to_string(tile.k_parts);
  d["SHARED_VEC4"] = std::to_string(tile.shared_vec4());
  // Weight slices per step (split-K: all slices of the layer, padded to
  // whole workgroups).
  const int weight_slices = slice_groups * tile.wg_slices();
  // Shapes: @uniform values of gemm.comp (one program for all sizes).
  d["ROWS"] = std::to_string(gemm.rows);
  d["OUT_S"] = std::to_string(out_slices);
  d["DEPTH_STEPS"] = std::to_string(gemm.depth_steps);
  d["OUT_C"] = std::to_string(out_shape.c);
  d["ROW_PIXELS"] = std::to_string(gemm.row_pixels);
  d["DEPTH_STRIDE"] = std::to_string(gemm.depth_stride);
  d["IN_BATCH_STRIDE"] = std::to_string(in_shape.slices() * in_shape.h * in_shape.w);
  d["OUT_HW"] = std::to_string(out_shape.h * out_shape.w);
  d["WEIGHT_SLICES"] = std::to_string(weight_slices);
  if (builder.device().fp16 && builder.device().fp16_math >= 1) d["MATH_P"] = "mediump";
  if (builder.device().fp16 && builder.device().fp16_math >= 2) d["ACC_P"] = "mediump";
  // The tiled core's products fused into its accumulators (DeviceProfile::
  // fma_chain) where products and accumulators have one precision.
  const bool one_precision = !builder.device().fp16 || builder.device().fp16_math != 1;
  d["FMA_CHAIN"] = builder.device().fma_chain && one_precision ? "1" : "0";
  // The prologues' shapes (DW_PROLOGUE_*, MEAN_PROLOGUE, set by
  // delegate/passes/dw_fusion.cc); unused here, but every @uniform needs a value.
  for (const char* name : {"DW_IN_H", "DW_IN_W", "DW_OUT_W", "DW_STRIDE_H",
                           "DW_STRIDE_W", "DW_PAD_TOP", "DW_PAD_LEFT", "MEAN_PIXELS",
                           "MEAN_BATCH_STRIDE"}) {
    d[name] = "1";
  }
  // Workgroups: x over row groups (tiled) or slice groups (split-K).
  const uint32_t groups_x =
      static_cast<uint32_t>(tile.split_k ? slice_groups : row_groups);
  const uint32_t groups_y =
      static_cast<uint32_t>(tile.split_k ? row_groups : slice_groups);
  dispatch.local = {static_cast<uint32_t>(tile.local_x()),
                    static_cast<uint32_t>(tile.k_parts), 1};
  dispatch.grid = {groups_x * dispatch.local[0], groups_y * dispatch.local[1], 1};
  dispatch.flops = 2LL * gemm.rows * out_shape.c * in_lanes;

  const int tile_slices = tile.split_k ? weight_slices : tile.wg_slices();
  ValueId weights =
      NewGemmWeights(builder, out_shape.c, 1, in_lanes, tile_slices, weight, lazy);
  ValueId packed_bias =
      bias_value >= 0 ? bias_value
                      : builder.NewConstant(PackBias(bias, out_shape.c, weight_slices));
  dispatch.outputs = {out};
  dispatch.inputs = {in, weights, packed_bias};
  builder.AddDispatch(std::move(dispatch));
  return Status::Ok();
}

}  // namespace tflite_gles::kernels
