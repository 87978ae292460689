#include "delegate/passes/gemm_chain_head.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "delegate/kernels/gemm.h"
#include "delegate/passes/dispatch_scan.h"
#include "delegate/passes/fusion.h"
#include "delegate/passes/gemm_chain.h"

namespace tflite_gles {
int FuseGemmChainHeads(const DeviceProfile& device, const std::vector<Value>& values,
                       const std::vector<ValueId>& keep, std::vector<Dispatch>* dispatches) {
  if (!device.fuse_chain_heads || !device.gpu) return 0;
  std::vector<Dispatch>& list = *dispatches;
  DispatchScan scan(values, list);
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  // Stage 0's split forced (sweeps): the pair tile's optional third and
  // fourth numbers, "WG_ROWS/LOCAL_X/K_PARTS0[/ROWS0]", powers of two.
  int forced_parts = 0, rows0 = 1;
  {
    int rows = 0, width = 0, parts = 0, tile_rows = 0;
    std::string text = Replaced(device.gemm_pair_tile_override, "/", ",");
    const int n = std::sscanf(text.c_str(), "%d,%d,%d,%d", &rows, &width, &parts, &tile_rows);
    if (n >= 3 && parts >= 1 && (parts & (parts - 1)) == 0) forced_parts = parts;
    if (n == 4 && tile_rows >= 1 && (tile_rows & (tile_rows - 1)) == 0) rows0 = tile_rows;
  }
  int fused = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    // The host: a pair, or (fuse_chain_heads 2) a single GEMM as a chain of
    // its stage 1 alone (gemm_chain.h SingleGemmChain), kept if a head folds in.
    Dispatch single;
    const bool alone = device.fuse_chain_heads >= 2 && !scan.removed[i] &&
                       SingleGemmChain(device, list[i], &single);
    Dispatch& pair = alone ? single : list[i];
    if (scan.removed[i] || pair.shader != "gemm_chain" || HasDefine(pair, "HEAD") ||
        HasDefine(pair, "HEAD_IN")) {
      continue;
    }
    const ValueId c = pair.inputs[0];
    const Shape4& shape = values[c].shape;
    const long long pixels = 1LL * shape.h * shape.w;
    if (values[c].storage_of >= 0 || pinned[c] || scan.Readers(c) != 1 ||
        IntDefine(pair, "ROWS") != shape.b * pixels || IntDefine(pair, "ROW_PIXELS") != pixels ||
        IntDefine(pair, "DEPTH_STRIDE") != pixels || IntDefine(pair, "OUT_HW") != pixels ||
        IntDefine(pair, "DEPTH_STEPS1") != shape.slices() ||
        IntDefine(pair, "IN_BATCH_STRIDE") != shape.slices() * pixels) {
      continue;
    }
    const int producer = scan.LatestWriter(i, c);
    if (producer < 0) continue;
    const Dispatch& conv = list[producer];
    // fuse_chain_heads 3: a transposed convolution's output too (ENet's up blocks).
    const bool transposed =
        device.fuse_chain_heads >= 3 && IsPlainTransposedConvolution(conv);
    const long long conv_pixels =
        transposed ? IntDefine(conv, "OUT_H") * IntDefine(conv, "OUT_W") : IntDefine(conv, "OUT_HW");
    if ((!transposed && !IsPlainConvolution(conv)) || conv.outputs[0] != c ||
        conv_pixels != pixels) {
      continue;
    }
    // The convolution moves to the pair's place: its inputs must be as they
    // are at its own, and none of them may be what the pair writes.
    bool moves = true;
    for (ValueId id : conv.inputs) {
      const ValueId root = StorageRoot(values, id);
      moves = moves && !scan.WrittenBetween(producer, i, root);
      for (ValueId out : pair.outputs) moves = moves && root != StorageRoot(values, out);
    }
    auto act = ElementwiseExpression(conv, "x", "");
    if (!moves || !act) continue;
    // Stage 0's split of the pair's invocations: ROWS0 rows each, each
    // group of rows' LOCAL_X * ROWS0 / WG_ROWS invocations over c's slices,
    // the rest as parts of the depth; where c has 8 slices or more, two of
    // them per invocation (each input load feeds both; NVIDIA, hair's 64x64
    // heads: 4 parts 24.5-25.3 us, 2 parts 26.0; docs/perf/log.md, "chain3").
    const int local_x = static_cast<int>(pair.local[0]);
    const int wg_rows = static_cast<int>(IntDefine(pair, "WG_ROWS"));
    if (rows0 > wg_rows) continue;
    const int slice_threads = local_x * rows0 / wg_rows;
    const int c_slices = shape.slices();
    int slice_threads0 = std::min(slice_threads, kernels::PowerOfTwoAtLeast(c_slices));
    if (c_slices >= 8 && slice_threads0 >= 8) slice_threads0 /= 2;
    if (forced_parts > 0 && forced_parts <= slice_threads) {
      slice_threads0 = slice_threads / forced_parts;
    }
    const int k_parts0 = slice_threads / slice_threads0;
    const int tile0 = (c_slices + slice_threads0 - 1) / slice_threads0;
    const int partial0 = k_parts0 > 1 ? local_x * rows0 * tile0 : 1;
    const int shared = static_cast<int>(IntDefine(pair, "X_TILE_VEC4") +
                                        IntDefine(pair, "PARTIAL_VEC4") +
                                        std::max(0LL, IntDefine(pair, "PARTIAL3_VEC4"))) +
                       wg_rows * c_slices + partial0;
    const int head_binding = static_cast<int>(pair.outputs.size() + pair.inputs.size());
    const int head_operands = static_cast<int>(conv.inputs.size()) - 1;  // W0, b0, [operand]
    if (shared > kernels::SharedGemmVec4Limit(device) ||
        head_binding + head_operands > device.max_dispatch_buffers) {
      continue;
    }
    auto& d = pair.defines;
    d[HasDefine(conv, "EPILOGUE_IN") ? "HEAD_IN" : "HEAD"] = "";
    d["HEAD_ACT(x)"] = *act;
    if (auto e = conv.defines.find(kEpilogueDefine); e != conv.defines.end()) {
      d["HEAD_EPILOGUE(x,index,slice)"] = Replaced(e->second, "epilogue_in", "head_in");
    }
    d["HEAD_BINDING"] = std::to_string(head_binding);
    d["HEAD_BINDING1"] = std::to_string(head_binding + 1);
    d["HEAD_BINDING2"] = std::to_string(head_binding + 2);
    for (const char* name : {"KERNEL_H", "KERNEL_W", "PAD_TOP", "PAD_LEFT"}) {
      d[name] = conv.defines.at(name);
    }
    for (const char* name : {"DILATION_H", "DILATION_W"}) {
      d[name] = transposed ? "1" : conv.defines.at(name);
    }
    d["HEAD_UPSTRIDE"] = transposed ? conv.defines.at("STRIDE_H") : "0";
    d["W0_GROUP"] = conv.defines.at("TILE_SLICES");
    for (const char* name : {"IN_S", "IN_H", "IN_W", "OUT_W", "OUT_C"}) {
      d[std::string(name) + "0"] = conv.defines.at(name);
    }
    d["TILE0"] = std::to_string(tile0);
    d["SLICE_THREADS0"] = std::to_string(slice_threads0);
    d["K_PARTS0"] = std::to_string(k_parts0);
    d["C_TILE_VEC4"] = std::to_string(wg_rows * c_slices);
    d["PARTIAL0_VEC4"] = std::to_string(partial0);
    d["ROWS0"] = std::to_string(rows0);
    for (const char* name : {"MATH_P", "ACC_P"}) {
      if (auto p = conv.defines.find(name); p != conv.defines.end()) {
        d[std::string("HEAD_") + name] = p->second;
      }
    }
    pair.inputs[0] = conv.inputs[0];
    for (size_t k = 1; k < conv.inputs.size(); ++k) pair.inputs.push_back(conv.inputs[k]);
    fused += AbsorbProducer(scan, producer, &pair);
    if (alone) list[i] = std::move(single);
  }
  EraseRemoved(scan.removed, &list);
  return fused;
}

}  // namespace tflite_gles
