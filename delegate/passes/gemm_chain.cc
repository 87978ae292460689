#include "delegate/passes/gemm_chain.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "delegate/kernels/gemm.h"
#include "delegate/passes/dispatch_scan.h"
#include "delegate/passes/fusion.h"

namespace tflite_gles {
namespace {

int Slices(const Dispatch& g) {
  return static_cast<int>(IntDefine(g, "THREADS_S") * IntDefine(g, "TILE_SLICES"));
}

// The pairs' workgroup width and a forced rows count (sweeps):
// DeviceProfile::gemm_pair_tile_override "WG_ROWS,LOCAL_X" ('/' for ','),
// powers of two with WG_ROWS <= LOCAL_X; anything else leaves the rule's
// (*forced_rows 0).
int ChainWidth(const DeviceProfile& device, int* forced_rows) {
  int local_x = std::min(256, device.gpu->max_workgroup_invocations);
  *forced_rows = 0;
  int rows = 0, width = 0;
  std::string text = Replaced(device.gemm_pair_tile_override, "/", ",");
  if (std::sscanf(text.c_str(), "%d,%d", &rows, &width) == 2 && rows >= 1 && width >= rows &&
      width <= device.gpu->max_workgroup_invocations && (rows & (rows - 1)) == 0 &&
      (width & (width - 1)) == 0) {
    *forced_rows = rows;
    local_x = width;
  }
  return local_x;
}

// WG_ROWS rows (8 to 64; 32 at most up to gemm_pair_rows32_max rows) making
// >= 256 workgroups where the map allows.
int ChainRows(const DeviceProfile& device, long long rows, int local_x, int forced_rows) {
  if (forced_rows > 0) return forced_rows;
  int wg_rows = std::min(rows <= device.gemm_pair_rows32_max ? 32 : 64, local_x);
  while (wg_rows > 8 && (rows + wg_rows - 1) / wg_rows < 256) wg_rows /= 2;
  return wg_rows;
}

// A gemm_chain dispatch's stage 1 from the tiled GEMM `first` (x = its
// activation and epilogue, on WG_ROWS rows of LOCAL_X invocations): the
// defines, grid and workgroup; the caller adds its bindings. False where
// the activation does not fuse.
bool FirstStage(const Dispatch& first, int wg_rows, int local_x, Dispatch* chain) {
  auto act = ElementwiseExpression(first, "x", "");
  if (!act) return false;
  std::string epilogue = "(x)";
  if (auto e = first.defines.find(kEpilogueDefine); e != first.defines.end()) {
    epilogue = Replaced(Replaced(e->second, "epilogue_in2", "chain_in2"), "epilogue_in",
                        "chain_in");
  }
  auto& d = chain->defines;
  chain->shader = "gemm_chain";
  d["CHAIN_ACT(x)"] = *act;
  d["CHAIN_EPILOGUE(x,index,slice)"] = epilogue;
  if (first.defines.count("EPILOGUE_IN2")) {
    d["CHAIN_IN2"] = "";
  } else if (first.defines.count("EPILOGUE_IN")) {
    d["CHAIN_IN"] = "";
  }
  const int s1 = static_cast<int>(IntDefine(first, "OUT_S"));
  const int slice_threads = local_x / wg_rows;
  d["WG_ROWS"] = std::to_string(wg_rows);
  d["TILE1"] = std::to_string((s1 + slice_threads - 1) / slice_threads);
  d["W1_GROUP"] = std::to_string(Slices(first));
  for (const char* name : {"ROWS", "ROW_PIXELS", "IN_BATCH_STRIDE", "DEPTH_STRIDE"}) {
    d[name] = first.defines.at(name);
  }
  d["DEPTH_STEPS1"] = first.defines.at("DEPTH_STEPS");
  d["S1"] = first.defines.at("OUT_S");
  d["OUT_C1"] = first.defines.at("OUT_C");
  // A head's uniforms (gemm_chain_head.h sets them where it folds one in).
  for (const char* name : {"IN_S0", "IN_H0", "IN_W0", "OUT_W0", "PAD_TOP", "PAD_LEFT", "OUT_C0"}) {
    d[name] = "0";
  }
  const long long rows = IntDefine(first, "ROWS");
  chain->local = {static_cast<uint32_t>(local_x), 1, 1};
  chain->grid = {static_cast<uint32_t>((rows + wg_rows - 1) / wg_rows) * chain->local[0], 1, 1};
  return true;
}

// A plain tiled GEMM `g` after pair `p` that reads the pair's x as its A,
// as the pair's stage 2 reads it (same rows, x's slices its depth), and
// that may move to the pair's place: its other inputs unwritten between,
// its output neither read nor written there, precisions the pair's.
bool IsSecondProjection(const std::vector<Value>& values, const DispatchScan& scan,
                        const std::vector<Dispatch>& list, size_t p, size_t g) {
  const Dispatch& pair = list[p];
  const Dispatch& gemm = list[g];
  const ValueId x = pair.outputs[1];
  if (!IsPlainTiledGemm(gemm) || gemm.defines.count("EPILOGUE_IN2") || gemm.inputs[0] != x ||
      !ReadsAsPointwise(gemm, values[x].shape) ||
      values[gemm.outputs[0]].storage_of >= 0 || IntDefine(gemm, "ROWS") != IntDefine(pair, "ROWS") ||
      IntDefine(gemm, "DEPTH_STEPS") != IntDefine(pair, "S1") ||
      IntDefine(gemm, "OUT_HW") != IntDefine(pair, "OUT_HW")) {
    return false;
  }
  for (const char* name : {"MATH_P", "ACC_P"}) {
    auto a = pair.defines.find(name), b = gemm.defines.find(name);
    if ((a == pair.defines.end()) != (b == gemm.defines.end()) ||
        (b != gemm.defines.end() && a->second != b->second)) {
      return false;
    }
  }
  const ValueId y2 = gemm.outputs[0];
  for (size_t k = 1; k < gemm.inputs.size(); ++k) {
    const ValueId root = StorageRoot(values, gemm.inputs[k]);
    for (ValueId out : pair.outputs) {
      if (root == StorageRoot(values, out)) return false;  // written by the pair itself
    }
    if (scan.WrittenBetween(p, g, root)) return false;
  }
  for (size_t j = p + 1; j < g; ++j) {
    if (scan.removed[j]) continue;
    for (ValueId id : list[j].inputs) {
      if (StorageRoot(values, id) == y2) return false;
    }
    if (scan.Writes(j, y2)) return false;
  }
  return true;
}

// ENet's upsampling block reads the last bottleneck's x twice, by its main
// branch's 1x1 (the pair's second GEMM) and its side branch's projection
// (+ PRELU), a dispatch of its own that the rest of the block waits for
// (the hair stand-in's @164 and @187, 9-10 us each on the H100): that one
// becomes the pair's y2 (gemm_chain.comp Y2), where the bindings leave room
// for a head (3 more; gemm_chain_head.h) and shared memory for y2's
// partial sums. Returns how many GEMMs went.
int FoldSecondProjections(const DeviceProfile& device, const std::vector<Value>& values,
                          DispatchScan& scan, std::vector<Dispatch>* dispatches) {
  std::vector<Dispatch>& list = *dispatches;
  int fused = 0;
  for (size_t p = 0; p < list.size(); ++p) {
    Dispatch& pair = list[p];
    if (scan.removed[p] || pair.shader != "gemm_chain" || HasDefine(pair, "SINGLE") ||
        pair.outputs.size() != 2) {
      continue;
    }
    for (size_t g = p + 1; g < list.size(); ++g) {
      if (scan.removed[g] || !IsSecondProjection(values, scan, list, p, g)) continue;
      const Dispatch& gemm = list[g];
      const int local_x = static_cast<int>(pair.local[0]);
      const int wg_rows = static_cast<int>(IntDefine(pair, "WG_ROWS"));
      const int slice_threads = local_x / wg_rows;
      const int out_s3 = static_cast<int>(IntDefine(gemm, "OUT_S"));
      const int slice_threads3 = std::min(slice_threads, kernels::PowerOfTwoAtLeast(out_s3));
      const int k_parts3 = slice_threads / slice_threads3;
      const int tile3 = (out_s3 + slice_threads3 - 1) / slice_threads3;
      const int partial3 = k_parts3 > 1 ? local_x * tile3 : 1;
      const int buffers = 3 + static_cast<int>(pair.inputs.size() + gemm.inputs.size()) - 1;
      auto act = ElementwiseExpression(gemm, "x", "");
      if (!act || buffers + 3 > device.max_dispatch_buffers ||
          IntDefine(pair, "X_TILE_VEC4") + IntDefine(pair, "PARTIAL_VEC4") + partial3 >
              kernels::SharedGemmVec4Limit(device)) {
        continue;
      }
      auto& d = pair.defines;
      // y2 is output 2: the inputs' bindings move one later.
      for (const char* name : {"EPILOGUE_BINDING", "CHAIN_BINDING", "CHAIN_BINDING2"}) {
        if (IntDefine(pair, name) >= 0) d[name] = std::to_string(IntDefine(pair, name) + 1);
      }
      pair.outputs.push_back(gemm.outputs[0]);
      const size_t base = pair.outputs.size() + pair.inputs.size();
      d["Y2_BINDING"] = std::to_string(base);
      d["Y2_BINDING1"] = std::to_string(base + 1);
      d["Y2_BINDING2"] = gemm.inputs.size() > 3 ? std::to_string(base + 2) : "-1";
      for (size_t k = 1; k < gemm.inputs.size(); ++k) pair.inputs.push_back(gemm.inputs[k]);
      d["Y2"] = "";
      d["Y2_ACT(x)"] = *act;
      d["Y2_EPILOGUE(x,index,slice)"] = "(x)";
      if (auto e = gemm.defines.find(kEpilogueDefine); e != gemm.defines.end()) {
        d["Y2_EPILOGUE(x,index,slice)"] = Replaced(e->second, "epilogue_in", "y2_in");
      }
      d["OUT_S3"] = gemm.defines.at("OUT_S");
      d["OUT_C3"] = gemm.defines.at("OUT_C");
      d["TILE3"] = std::to_string(tile3);
      d["SLICE_THREADS3"] = std::to_string(slice_threads3);
      d["K_PARTS3"] = std::to_string(k_parts3);
      d["W3_GROUP"] = std::to_string(Slices(gemm));
      d["PARTIAL3_VEC4"] = std::to_string(partial3);
      pair.label += " + " + gemm.label;
      pair.flops += gemm.flops;
      scan.removed[g] = true;
      ++fused;
      break;
    }
  }
  return fused;
}

}  // namespace

bool IsPlainTiledGemm(const Dispatch& g) {
  if (g.shader != "gemm" || g.defines.count("SPLIT_K") || g.specialize || g.outputs.size() != 1 ||
      !g.read_write.empty() || g.inputs.size() < 3) {
    return false;
  }
  for (const auto& [name, value] : g.defines) {
    if (name.find("PROLOGUE") != std::string::npos || name == "SOFTMAX_EPILOGUE") return false;
  }
  const size_t operands = g.defines.count("EPILOGUE_IN2") ? 2 : g.defines.count("EPILOGUE_IN");
  return g.inputs.size() == 3 + operands;
}

bool IsPlainConvolution(const Dispatch& c) {
  if (c.shader != "conv2d" || !HasDefine(c, "GENERIC") || c.outputs.size() != 1 ||
      !c.read_write.empty() || IntDefine(c, "STRIDE_H") != 1 || IntDefine(c, "STRIDE_W") != 1) {
    return false;
  }
  // (ONE_INPUT_SLICE is IN_S 1, packed alike: it takes.)
  for (const char* name : {"SLICES_ON_X", "PROLOGUE_IN", "BHWC_INPUT", "TEXTURE_INPUT",
                           "BHWC_BYTES_INPUT", "GATHER_MIRROR", "GATHER_UPSAMPLE",
                           "EPILOGUE_IN2"}) {
    if (HasDefine(c, name)) return false;
  }
  return c.inputs.size() == (HasDefine(c, "EPILOGUE_IN") ? 4u : 3u);
}

bool IsPlainTransposedConvolution(const Dispatch& c) {
  if (c.shader != "transpose_conv" || c.outputs.size() != 1 || !c.read_write.empty() ||
      IntDefine(c, "STRIDE_H") < 1 || IntDefine(c, "STRIDE_H") != IntDefine(c, "STRIDE_W") ||
      IntDefine(c, "BAND_BEGIN") != 0 || IntDefine(c, "BAND_END") != IntDefine(c, "PIXEL_GROUPS")) {
    return false;
  }
  for (const char* name : {"SLICES_ON_X", "BHWC_OUTPUT", "TEXTURE_OUTPUT", "EPILOGUE_IN2"}) {
    if (HasDefine(c, name)) return false;
  }
  return c.inputs.size() == (HasDefine(c, "EPILOGUE_IN") ? 4u : 3u);
}

bool SingleGemmChain(const DeviceProfile& device, const Dispatch& gemm, Dispatch* chain) {
  if (!device.gpu || !IsPlainTiledGemm(gemm)) return false;
  int forced_rows = 0;
  const int local_x = ChainWidth(device, &forced_rows);
  const long long rows = IntDefine(gemm, "ROWS");
  const int wg_rows = ChainRows(device, rows, local_x, forced_rows);
  const int operands = static_cast<int>(gemm.inputs.size()) - 3;
  Dispatch single;
  if (local_x / wg_rows < 1 || (rows + wg_rows - 1) / wg_rows < 128 ||
      4 + operands > device.max_dispatch_buffers || !FirstStage(gemm, wg_rows, local_x, &single)) {
    return false;
  }
  auto& d = single.defines;
  d["SINGLE"] = "";
  for (const char* name : {"MATH_P", "ACC_P"}) {
    if (auto p = gemm.defines.find(name); p != gemm.defines.end()) d[name] = p->second;
  }
  d["CHAIN_BINDING"] = "4";
  d["CHAIN_BINDING2"] = "5";
  d["X_TILE_VEC4"] = "1";
  d["PARTIAL_VEC4"] = "1";
  // Stage 2's names, unread: the output is x.
  d["OUT_S"] = gemm.defines.at("OUT_S");
  d["OUT_C"] = gemm.defines.at("OUT_C");
  d["OUT_HW"] = gemm.defines.at("OUT_HW");
  single.outputs = {gemm.outputs[0]};
  single.inputs = gemm.inputs;  // A, W1, b1[, its epilogue operands]
  single.specialize = device.specialize_gemm_chains;
  single.label = gemm.label;
  single.flops = gemm.flops;
  *chain = std::move(single);
  return true;
}

int FuseGemmPairs(const DeviceProfile& device, const std::vector<Value>& values,
                  std::vector<Dispatch>* dispatches) {
  if (!device.shared_memory_gemm || !device.fuse_gemm_pairs || !device.gpu) return 0;
  std::vector<Dispatch>& list = *dispatches;
  DispatchScan scan(values, list);
  int forced_rows = 0;
  const int chain_x = ChainWidth(device, &forced_rows);
  // Pairs whose first GEMM reads a stride-1 convolution's output that only it
  // reads (the 3x3 head FuseGemmChainHeads folds in next) on maps of <= 128x128:
  // the head tile (DeviceProfile::gemm_pair_head_tile), where not forced.
  int head_rows = 0, head_x = 0;
  if (forced_rows == 0 &&
      std::sscanf(Replaced(device.gemm_pair_head_tile, "/", ",").c_str(), "%d,%d", &head_rows,
                  &head_x) != 2) {
    head_rows = 0;
  }
  int fused = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    if (scan.removed[i] || !IsPlainTiledGemm(list[i]) || list[i].defines.count("EPILOGUE_IN2")) {
      continue;
    }
    const ValueId x = list[i].inputs[0];
    if (values[x].storage_of >= 0 || !ReadsAsPointwise(list[i], values[x].shape)) continue;
    const int producer = scan.LatestWriter(i, x);
    if (producer < 0 || !IsPlainTiledGemm(list[producer]) || list[producer].outputs[0] != x) {
      continue;
    }
    Dispatch& first = list[producer];
    const Dispatch& second = list[i];
    const ValueId y = second.outputs[0];
    // The fused dispatch runs at the first's place: the second's other
    // inputs must be as they are there, and nothing in between may use y.
    // (x as the second's epilogue operand too would be read in the dispatch
    // that writes it: left apart.)
    bool moves = values[y].storage_of < 0;
    for (size_t k = 1; k < second.inputs.size() && moves; ++k) {
      const ValueId root = StorageRoot(values, second.inputs[k]);
      moves = root != x && !scan.WrittenBetween(producer, i, root);
    }
    for (size_t j = producer + 1; j < i && moves; ++j) {
      if (scan.removed[j]) continue;
      for (ValueId id : list[j].inputs) moves = moves && StorageRoot(values, id) != y;
      moves = moves && !scan.Writes(j, y);
    }
    if (!moves) continue;
    // The tile: ChainRows' rows, and all of x's slices for them in shared memory.
    const long long rows = IntDefine(second, "ROWS");
    const int s1 = static_cast<int>(IntDefine(first, "OUT_S"));
    const int out_s = static_cast<int>(IntDefine(second, "OUT_S"));
    int local_x = chain_x;
    int wg_rows = ChainRows(device, rows, local_x, forced_rows);
    const ValueId a = first.inputs[0];
    const int head = scan.LatestWriter(producer, a);
    if (head_rows > 0 && head_x >= head_rows && head_x <= device.gpu->max_workgroup_invocations &&
        rows <= device.gemm_pair_rows32_max && head >= 0 && IsPlainConvolution(list[head]) &&
        list[head].outputs[0] == a && scan.Readers(a) == 1) {
      wg_rows = head_rows;
      local_x = head_x;
    }
    const int slice_threads = local_x / wg_rows;
    const int slice_threads2 = std::min(slice_threads, kernels::PowerOfTwoAtLeast(out_s));
    const int k_parts2 = slice_threads / slice_threads2;
    const int tile2 = (out_s + slice_threads2 - 1) / slice_threads2;
    const int partial = k_parts2 > 1 ? local_x * tile2 : 1;
    const int operands = static_cast<int>(first.inputs.size() + second.inputs.size()) - 6;
    // Only where the second narrows (a projection: few outputs per row
    // after the whole of x) and the rows make enough workgroups: a second
    // that widens (MobileNet v2's expansion after the projection) would put
    // all its outputs on the few workgroups the rows make.
    // And a first of few input steps (an expansion: stage 1 is each
    // workgroup's serial part; DeepLab's 512 -> 256 before its logits
    // would make it 128 steps long).
    if (out_s > s1 || IntDefine(first, "DEPTH_STEPS") > device.gemm_pair_max_steps ||
        (rows + wg_rows - 1) / wg_rows < 128 || slice_threads < 1 ||
        wg_rows * s1 + partial > kernels::SharedGemmVec4Limit(device) ||
        7 + operands > device.max_dispatch_buffers) {
      continue;
    }
    // The first's activation and epilogue, on x; its tile and shapes.
    Dispatch pair;
    if (!FirstStage(first, wg_rows, local_x, &pair)) continue;
    auto& d = pair.defines;
    for (const auto& [name, value] : second.defines) {
      if (name.rfind("ACT_", 0) == 0 || name == "EPILOGUE_IN" || name == kEpilogueDefine) {
        d[name] = value;
      }
    }
    // Both GEMMs' precisions (fp16 storage, DeviceProfile::fp16_math): the
    // first's where the second's are the same.
    for (const char* name : {"MATH_P", "ACC_P"}) {
      auto p = first.defines.find(name);
      if (p != first.defines.end() && second.defines.count(name) &&
          second.defines.at(name) == p->second) {
        d[name] = p->second;
      }
    }
    int binding = 7;
    if (second.defines.count("EPILOGUE_IN")) d["EPILOGUE_BINDING"] = std::to_string(binding++);
    d["CHAIN_BINDING"] = std::to_string(binding++);
    d["CHAIN_BINDING2"] = std::to_string(binding);
    d["TILE2"] = std::to_string(tile2);
    d["SLICE_THREADS2"] = std::to_string(slice_threads2);
    d["K_PARTS2"] = std::to_string(k_parts2);
    d["W2_GROUP"] = std::to_string(Slices(second));
    d["X_TILE_VEC4"] = std::to_string(wg_rows * s1);
    d["PARTIAL_VEC4"] = std::to_string(partial);
    for (const char* name : {"OUT_S", "OUT_C", "OUT_HW"}) d[name] = second.defines.at(name);
    pair.outputs = {y, x};
    pair.inputs = {first.inputs[0], second.inputs[1], second.inputs[2], first.inputs[1],
                   first.inputs[2]};
    if (second.inputs.size() > 3) pair.inputs.push_back(second.inputs[3]);
    for (size_t k = 3; k < first.inputs.size(); ++k) pair.inputs.push_back(first.inputs[k]);
    pair.specialize = device.specialize_gemm_chains;
    pair.label = first.label + " + " + second.label;
    pair.flops = first.flops + second.flops;
    first = std::move(pair);
    scan.removed[i] = true;
    ++fused;
  }
  if (device.fuse_second_projection) fused += FoldSecondProjections(device, values, scan, &list);
  EraseRemoved(scan.removed, &list);
  return fused;
}

}  // namespace tflite_gles
