#include "delegate/passes/dw_splitk.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "delegate/passes/fusion.h"
#include "delegate/kernels/gemm.h"

namespace tflite_gles {
namespace {

std::string TileText(const DwSplitKTile& tile) {
  return std::to_string(tile.rows) + " rows x " + std::to_string(tile.slices) +
         " slices, " + std::to_string(tile.k_parts) + " parts, chunks of " +
         std::to_string(tile.chunk_steps) + " steps";
}

// Shared vec4s: the A tile of a chunk, then the K parts' sums.
int SharedVec4(const DwSplitKTile& tile) {
  return std::max(tile.rows * tile.chunk_steps, tile.rows * tile.slices * tile.k_parts);
}

// The defines gemm_dw_splitk.comp shares with a fused gemm.comp dispatch.
constexpr const char* kCopied[] = {
    "ROWS", "OUT_S", "DEPTH_STEPS", "OUT_C", "ROW_PIXELS", "OUT_HW", "DW_IN_H",
    "DW_IN_W", "DW_OUT_W", "DW_STRIDE_H", "DW_STRIDE_W", "DW_PAD_TOP",
    "DW_PAD_LEFT", "DW_KH", "DW_KW", "DW_DIL_H", "DW_DIL_W", kEpilogueDefine,
    kDwEpilogueDefine,
    "EPILOGUE_IN", "ACT_RELU", "ACT_RELU6", "ACT_RELU_N1_TO_1", "ACT_TANH",
    "ACT_SIGMOID", "DW_PROLOGUE_NONE", "DW_PROLOGUE_RELU", "DW_PROLOGUE_RELU6",
    "DW_PROLOGUE_RELU_N1_TO_1"};

bool IsDepthwiseFused(const Dispatch& d) {
  for (const char* name : {"DW_PROLOGUE_NONE", "DW_PROLOGUE_RELU", "DW_PROLOGUE_RELU6",
                           "DW_PROLOGUE_RELU_N1_TO_1"}) {
    if (d.defines.count(name)) return true;
  }
  return false;
}

// A zeroed constant of at least `bytes` in the device's storage (fp16
// uploads each float as a half).
Value ZeroedBuffer(long long bytes, bool fp16) {
  Value value;
  value.kind = Value::Kind::kConstant;
  const long long floats = (bytes / (fp16 ? 2 : 4) + 3) / 4 * 4;
  value.constant_data.assign(static_cast<size_t>(std::max(4LL, floats)), 0.0f);
  return value;
}

}  // namespace

StatusOr<DwSplitKTile> ParseDwSplitKTile(const std::string& text) {
  std::string commas = text;
  std::replace(commas.begin(), commas.end(), '/', ',');
  std::stringstream in(commas);
  std::string field;
  std::vector<int> numbers;
  while (std::getline(in, field, ',')) {
    char* end = nullptr;
    const long value = std::strtol(field.c_str(), &end, 10);
    if (field.empty() || *end != '\0' || value < 1 || value > 1024) {
      return Status::Error("split-K tile '" + text + "': '" + field +
                           "' is not an integer in [1, 1024]");
    }
    numbers.push_back(static_cast<int>(value));
  }
  if (numbers.size() != 4) {
    return Status::Error("split-K tile '" + text +
                         "' is not ROWS,SLICES,KPARTS,CHUNK_STEPS");
  }
  return DwSplitKTile{numbers[0], numbers[1], numbers[2], numbers[3]};
}

StatusOr<DwSplitKTile> ChooseDwSplitKTile(long long rows, int out_slices,
                                          int depth_steps, const DeviceProfile& device) {
  DwSplitKTile tile;
  if (!device.dw_splitk_tile_override.empty()) {
    TFG_ASSIGN_OR_RETURN(tile, ParseDwSplitKTile(device.dw_splitk_tile_override));
  } else {
    // H200 sweep (docs/perf/log.md, "Split-K across workgroups (skw)"):
    // slower than gemm.comp's fused tile on every 14x14 layer and on 7x7
    // 512 -> 1024; only the deepest (7x7, 1024 -> 1024) came out ahead,
    // with 16 rows x 32 slices, one part, chunks of 32 steps.
    if (depth_steps < kMinDwSplitKDepthSteps) {
      return Status::Error("split-K across workgroups is slower than gemm.comp "
                           "below " + std::to_string(kMinDwSplitKDepthSteps) +
                           " depth steps");
    }
    tile.slices = std::min(32, kernels::PowerOfTwoAtLeast(out_slices));
    tile.rows = static_cast<int>(std::min<long long>(16, rows));
    tile.chunk_steps = 32;
    tile.k_parts = 1;
  }
  const int threads = tile.rows * tile.slices * tile.k_parts;
  const int limit = std::min(
      1024, device.gpu ? device.gpu->max_workgroup_invocations : 128);
  if (threads > limit) {
    return Status::Error("split-K tile " + TileText(tile) + " needs " +
                         std::to_string(threads) + " invocations; the device allows " +
                         std::to_string(limit));
  }
  if (SharedVec4(tile) > kernels::SharedGemmVec4Limit(device)) {
    return Status::Error("split-K tile " + TileText(tile) + " exceeds the shared memory");
  }
  return tile;
}

int SplitDepthwiseGemmsAcrossWorkgroups(const DeviceProfile& device,
                                        std::vector<Value>* values,
                                        std::vector<Dispatch>* dispatches) {
  if (!device.split_depthwise_gemm_k) return 0;
  std::vector<Value>& vals = *values;
  long long partial_bytes = 0;
  long long counter_bytes = 0;
  std::vector<Dispatch*> rewritten;  // those that need the buffers
  int count = 0;
  for (Dispatch& gemm : *dispatches) {
    if (gemm.shader != "gemm" || !IsDepthwiseFused(gemm) || gemm.specialize ||
        gemm.defines.count("SPLIT_K") || !gemm.read_write.empty()) {
      continue;
    }
    const long long rows = IntDefine(gemm, "ROWS");
    const int out_slices = static_cast<int>(IntDefine(gemm, "OUT_S"));
    const int depth_steps = static_cast<int>(IntDefine(gemm, "DEPTH_STEPS"));
    if (rows < 1 || rows > kMaxDwSplitKRows || out_slices < 1 || depth_steps < 1) continue;
    auto tile = ChooseDwSplitKTile(rows, out_slices, depth_steps, device);
    if (!tile.ok()) continue;  // stays a gemm.comp dispatch
    const int old_wg_slices =
        static_cast<int>(IntDefine(gemm, "TILE_SLICES") * IntDefine(gemm, "THREADS_S"));
    const ValueId weights = gemm.inputs[1];
    if (old_wg_slices != tile->slices) {
      kernels::RepackGemmWeights(vals[weights], out_slices, depth_steps, old_wg_slices,
                                 tile->slices);
    }
    const long long row_groups = (rows + tile->rows - 1) / tile->rows;
    const long long slice_groups = (out_slices + tile->slices - 1) / tile->slices;
    const long long chunks = (depth_steps + tile->chunk_steps - 1) / tile->chunk_steps;
    const int local_x = tile->rows * tile->slices;
    Dispatch split;
    split.shader = "gemm_dw_splitk";
    for (const char* name : kCopied) {
      auto it = gemm.defines.find(name);
      if (it != gemm.defines.end()) split.defines[name] = it->second;
    }
    auto& d = split.defines;
    d["WG_ROWS"] = std::to_string(tile->rows);
    d["WG_SLICES"] = std::to_string(tile->slices);
    d["K_PARTS"] = std::to_string(tile->k_parts);
    d["CHUNK_STEPS"] = std::to_string(tile->chunk_steps);
    d["SHARED_VEC4"] = std::to_string(SharedVec4(*tile));
    split.local = {static_cast<uint32_t>(local_x), static_cast<uint32_t>(tile->k_parts), 1};
    split.grid = {static_cast<uint32_t>(row_groups * local_x),
                  static_cast<uint32_t>(slice_groups * tile->k_parts),
                  static_cast<uint32_t>(chunks)};
    if (chunks == 1) d["ONE_CHUNK"] = "";
    if (depth_steps % tile->chunk_steps == 0) d["CHUNK_EXACT"] = "";
    split.inputs = gemm.inputs;
    split.outputs = gemm.outputs;
    split.label = gemm.label + " (split-K x" + std::to_string(chunks) + ")";
    split.flops = gemm.flops;
    const long long tiles = row_groups * slice_groups;
    if (chunks > 1) {
      partial_bytes = std::max(partial_bytes, tiles * chunks * local_x * 16);
      counter_bytes = std::max(counter_bytes, tiles * 4);
    }
    gemm = std::move(split);
    if (chunks > 1) rewritten.push_back(&gemm);
    ++count;
  }
  if (rewritten.empty()) return count;
  // One partial-sum buffer and one counter array for all: the dispatches
  // run one after another and each leaves its counters at zero.
  const ValueId partials = static_cast<ValueId>(vals.size());
  vals.push_back(ZeroedBuffer(partial_bytes, device.fp16));
  const ValueId counters = static_cast<ValueId>(vals.size());
  vals.push_back(ZeroedBuffer(counter_bytes, device.fp16));
  for (Dispatch* dispatch : rewritten) dispatch->read_write = {partials, counters};
  return count;
}

}  // namespace tflite_gles
