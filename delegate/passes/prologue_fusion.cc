#include "delegate/passes/prologue_fusion.h"

#include <algorithm>
#include <string>

#include "delegate/kernels/gemm.h"
#include "delegate/passes/dispatch_scan.h"
#include "delegate/passes/fusion.h"

namespace tflite_gles {
namespace {

bool HasAnyPrologue(const Dispatch& gemm) {
  for (const auto& [name, value] : gemm.defines) {
    if (name.rfind("DW_PROLOGUE_", 0) == 0) return true;
  }
  for (const char* name : {"MEAN_PROLOGUE", "PROLOGUE_IN", "PROLOGUE_IN2", "FC_PROLOGUE",
                           "FC1_MEAN", "RESIZE_PROLOGUE"}) {
    if (gemm.defines.count(name)) return true;
  }
  return false;
}

bool IsPerChannel(const Shape4& vector, const Shape4& map) {
  return vector.b == 1 && vector.h == 1 && vector.w == 1 && vector.c == map.c;
}

// How the GEMM's prologue reads operand `id` of the elementwise step at
// A's vec4 (index, slice): "index" for a tensor of A's shape, "slice" for a
// per-channel vector, empty if neither (or a view: the GEMM indexes the
// root's storage as A's layout).
std::string OperandIndex(const std::vector<Value>& values, ValueId id, const Shape4& a) {
  if (values[id].storage_of >= 0) return "";
  if (values[id].shape == a) return "index";
  if (IsPerChannel(values[id].shape, a)) return "slice";
  return "";
}

// The largest map (slices x pixels, in vec4s) whose mean FuseGemmChains
// takes into the fused GEMM: every workgroup walks it again. Selfie's
// 16x16x96..128 and 32x32x24 maps fit, its 64x64 and 128x128 ones do not.
constexpr long long kMaxChainMeanVec4 = 8192;

// A tiled, unspecialized GEMM with one output and no prologue yet: what the
// elementwise and resize prologues fold into.
bool TakesAPrologue(const Dispatch& gemm) {
  return gemm.shader == "gemm" && !gemm.defines.count("SPLIT_K") && !HasAnyPrologue(gemm) &&
         !gemm.specialize && !gemm.inputs.empty() && gemm.outputs.size() == 1 &&
         gemm.read_write.empty();
}

int Buffers(const Dispatch& d) {
  return static_cast<int>(d.outputs.size() + d.inputs.size() + d.read_write.size());
}

}  // namespace

int FuseElementwiseIntoGemm(const DeviceProfile& device, const std::vector<Value>& values,
                            const std::vector<ValueId>& keep,
                            std::vector<Dispatch>* dispatches) {
  if (!device.shared_memory_gemm || !device.fuse_elementwise_into_gemm) return 0;
  std::vector<Dispatch>& list = *dispatches;
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  DispatchScan scan(values, list);
  int fused = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    Dispatch& gemm = list[i];
    if (!TakesAPrologue(gemm)) continue;
    const ValueId a = gemm.inputs[0];
    if (values[a].storage_of >= 0 || pinned[a] || scan.Readers(a) != 1) continue;
    const Shape4& shape = values[a].shape;
    const int producer = scan.LatestWriter(i, a);
    if (producer < 0 || !ReadsAsPointwise(gemm, shape)) continue;
    const Dispatch& ew = list[producer];
    const auto& d = ew.defines;
    if (ew.shader != "elementwise" || ew.outputs.size() != 1 || ew.outputs[0] != a ||
        ew.specialize || d.count("A_SPLAT") || d.count("B_SPLAT") || ew.inputs.empty()) {
      continue;
    }
    // elementwise.comp's inputs: A, then B (binary, not a literal), then
    // the epilogue chain's operand (EPILOGUE_IN).
    const bool chain_operand = d.count("EPILOGUE_IN") > 0;
    const size_t operands = ew.inputs.size() - (chain_operand ? 1 : 0);
    if (operands < 1 || operands > 2) continue;
    // x: the operand the GEMM now loads as A (of A's shape, not a view).
    size_t x = operands;
    for (size_t k = 0; k < operands && x == operands; ++k) {
      if (OperandIndex(values, ew.inputs[k], shape) == "index") x = k;
    }
    if (x == operands) continue;
    std::vector<ValueId> extra;
    std::string other;
    if (operands == 2) {
      const ValueId b = ew.inputs[1 - x];
      const std::string at = OperandIndex(values, b, shape);
      if (at.empty()) continue;
      other = "LOAD(prologue_in, " + at + ")";
      extra.push_back(b);
    } else if (d.count("B_LITERAL")) {
      other = "vec4(" + d.at("B_VALUE") + ")";
    }
    auto step = x == 0 ? ElementwiseExpression(ew, "x", other)
                       : ElementwiseExpression(ew, other, "x");
    if (!step) continue;
    std::string chain = "(x)";
    auto epilogue = d.find(kEpilogueDefine);
    if (epilogue != d.end()) chain = epilogue->second;
    if (chain_operand) {
      const ValueId c = ew.inputs.back();
      if (OperandIndex(values, c, shape).empty()) continue;
      // The chain's text reads its operand as epilogue_in (fusion.cc); here
      // it is the second prologue operand, or the first without a B tensor.
      const std::string name = extra.empty() ? "prologue_in" : "prologue_in2";
      chain = Replaced(chain, "epilogue_in", name);
      extra.push_back(c);
    }
    // Zero-padded lanes must stay finite so that the zero weights cancel
    // them: a division of 0 by 0 would not.
    if (step->find("ew_div") != std::string::npos ||
        chain.find("ew_div") != std::string::npos) {
      continue;
    }
    // A step without a tensor operand (a literal, a unary op) is left to
    // its producer's epilogue (FuseEpilogues): PROLOGUE_IN binds one.
    if (extra.empty()) continue;
    bool rewritten = false;
    for (ValueId read : ew.inputs) {
      rewritten = rewritten || scan.WrittenBetween(producer, i, StorageRoot(values, read));
    }
    if (rewritten || Buffers(gemm) + static_cast<int>(extra.size()) >
                         device.max_dispatch_buffers) {
      continue;
    }
    auto& g = gemm.defines;
    // One choice of gemm.comp's first @axis: PROLOGUE_IN2 implies PROLOGUE_IN.
    g[extra.size() == 2 ? "PROLOGUE_IN2" : "PROLOGUE_IN"] = "";
    g["PROLOGUE_BINDING"] = std::to_string(gemm.outputs.size() + gemm.inputs.size());
    if (extra.size() == 2) {
      g["PROLOGUE_BINDING2"] = std::to_string(gemm.outputs.size() + gemm.inputs.size() + 1);
    }
    g["PROLOGUE(x,index,slice)"] = *step;
    g["PROLOGUE_CHAIN(x,index,slice)"] = chain;
    gemm.inputs[0] = ew.inputs[x];
    for (ValueId id : extra) gemm.inputs.push_back(id);
    fused += AbsorbProducer(scan, producer, &gemm);
  }
  EraseRemoved(scan.removed, &list);
  return fused;
}

int FuseResizeIntoGemm(const DeviceProfile& device, const std::vector<Value>& values,
                       const std::vector<ValueId>& keep, std::vector<Dispatch>* dispatches) {
  if (!device.shared_memory_gemm || !device.fuse_resize_into_gemm) return 0;
  std::vector<Dispatch>& list = *dispatches;
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  DispatchScan scan(values, list);
  int fused = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    Dispatch& gemm = list[i];
    if (!TakesAPrologue(gemm)) continue;
    const ValueId a = gemm.inputs[0];
    if (values[a].storage_of >= 0 || pinned[a] || scan.Readers(a) != 1 ||
        !ReadsAsPointwise(gemm, values[a].shape)) {
      continue;
    }
    const int producer = scan.LatestWriter(i, a);
    if (producer < 0) continue;
    const Dispatch& resize = list[producer];
    const auto& r = resize.defines;
    if (resize.shader != "resize" || !r.count("BILINEAR") || r.count("ALIGN_CORNERS") ||
        r.count(kEpilogueDefine) || resize.specialize || resize.inputs.size() != 1 ||
        resize.outputs.size() != 1 || resize.outputs[0] != a) {
      continue;
    }
    const ValueId source = resize.inputs[0];
    const Shape4& in = values[source].shape;
    if (values[source].storage_of >= 0 || in.b != values[a].shape.b ||
        in.c != values[a].shape.c ||
        scan.WrittenBetween(producer, i, StorageRoot(values, source))) {
      continue;
    }
    auto& g = gemm.defines;
    g["RESIZE_PROLOGUE"] = "";
    g["RS_IN_H"] = std::to_string(in.h);
    g["RS_IN_W"] = std::to_string(in.w);
    g["RS_OUT_W"] = std::to_string(values[a].shape.w);
    g["RS_SCALE_H"] = r.at("SCALE_H");
    g["RS_SCALE_W"] = r.at("SCALE_W");
    g["RS_OFFSET"] = r.count("HALF_PIXEL") ? "0.5" : "0.0";
    gemm.inputs[0] = source;
    fused += AbsorbProducer(scan, producer, &gemm);
  }
  EraseRemoved(scan.removed, &list);
  return fused;
}

namespace {

// A one-row split-K GEMM reading its input at depth stride 1 (a fully
// connected layer on a pooled 1x1 map).
bool IsOneRowSplitK(const Dispatch& gemm) {
  return gemm.shader == "gemm" && gemm.defines.count("SPLIT_K") && !gemm.specialize &&
         gemm.outputs.size() == 1 && gemm.read_write.empty() &&
         IntDefine(gemm, "ROWS") == 1 && IntDefine(gemm, "TILE_ROWS") == 1 &&
         IntDefine(gemm, "DEPTH_STRIDE") == 1 && IntDefine(gemm, "ROW_PIXELS") == 1 &&
         !gemm.defines.count("SOFTMAX_EPILOGUE") && !HasAnyPrologue(gemm);
}

}  // namespace

int FuseGemmChains(const DeviceProfile& device, const std::vector<Value>& values,
                   const std::vector<ValueId>& keep, std::vector<Dispatch>* dispatches) {
  if (!device.shared_memory_gemm || !device.fuse_gemm_chains) return 0;
  std::vector<Dispatch>& list = *dispatches;
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  DispatchScan scan(values, list);
  int fused = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    Dispatch& second = list[i];
    if (!IsOneRowSplitK(second) || second.inputs.empty()) continue;
    const ValueId hidden = second.inputs[0];
    if (values[hidden].storage_of >= 0 || pinned[hidden] || scan.Readers(hidden) != 1 ||
        !ReadsAsPointwise(second, values[hidden].shape)) {
      continue;
    }
    const int producer = scan.LatestWriter(i, hidden);
    if (producer < 0) continue;
    const Dispatch& first = list[producer];
    if (!IsOneRowSplitK(first) || first.outputs[0] != hidden || first.inputs.size() != 3 ||
        first.defines.count("EPILOGUE_IN") || first.defines.count("EPILOGUE_IN2")) {
      continue;
    }
    // The first layer's activation (its ACT_* define) and its epilogue, if
    // one of x alone, run on each hidden vec4.
    auto act = ElementwiseExpression(first, "x", "");
    if (!act) continue;
    std::string epilogue = "(x)";
    auto e = first.defines.find(kEpilogueDefine);
    if (e != first.defines.end()) {
      for (const char* name : {"index", "slice", "epilogue_in", "LOAD"}) {
        if (e->second.find(name) != std::string::npos) epilogue.clear();
      }
      if (epilogue.empty()) continue;
      epilogue = e->second;
    }
    // The mean before the first layer (a squeeze-and-excitation block's
    // pooling), over a map small enough for every workgroup to walk again.
    const ValueId pooled = first.inputs[0];
    const long long in_steps = IntDefine(first, "DEPTH_STEPS");
    int mean = -1;
    if (device.fuse_mean_into_gemm_chains && values[pooled].storage_of < 0 && !pinned[pooled] &&
        scan.Readers(pooled) == 1) {
      mean = scan.LatestWriter(producer, pooled);
      if (mean >= 0) {
        const Dispatch& m = list[mean];
        const ValueId map = m.inputs.empty() ? -1 : m.inputs[0];
        if (!IsWholeMapMean(m) || m.defines.count(kEpilogueDefine) ||
            m.outputs[0] != pooled || values[map].storage_of >= 0 ||
            values[map].shape.b != 1 || IntDefine(m, "IN_S") != in_steps ||
            in_steps * IntDefine(m, "COUNT") > kMaxChainMeanVec4 ||
            scan.WrittenBetween(mean, i, StorageRoot(values, map))) {
          mean = -1;
        }
      }
    }
    const long long steps = IntDefine(second, "DEPTH_STEPS");
    const long long threads = 1LL * second.local[0] * second.local[1];
    const long long scratch =
        std::max({IntDefine(second, "SHARED_VEC4"), steps, threads, in_steps});
    const long long means = mean >= 0 ? in_steps : 0;
    if (steps <= 0 || scratch + steps + means > kernels::SharedGemmVec4Limit(device) ||
        Buffers(second) + 2 > device.max_dispatch_buffers ||
        scan.WrittenBetween(producer, i, StorageRoot(values, first.inputs[0]))) {
      continue;
    }
    auto& g = second.defines;
    // One choice of gemm.comp's first @axis: FC_PROLOGUE implies SPLIT_K.
    g.erase("SPLIT_K");
    g["FC_PROLOGUE"] = "";
    g["A_VEC4"] = std::to_string(steps);
    g["SHARED_VEC4"] = std::to_string(scratch);
    g["FC1_DEPTH_STEPS"] = std::to_string(IntDefine(first, "DEPTH_STEPS"));
    g["FC1_WEIGHT_SLICES"] = std::to_string(IntDefine(first, "WEIGHT_SLICES"));
    g["FC1_OUT_C"] = std::to_string(IntDefine(first, "OUT_C"));
    g["FC1_W_BINDING"] = std::to_string(second.outputs.size() + second.inputs.size());
    g["FC1_B_BINDING"] = std::to_string(second.outputs.size() + second.inputs.size() + 1);
    g["FC1_ACT(x)"] = *act;
    g["FC1_EPILOGUE(x)"] = epilogue;
    second.inputs[0] = first.inputs[0];
    second.inputs.push_back(first.inputs[1]);
    second.inputs.push_back(first.inputs[2]);
    fused += AbsorbProducer(scan, producer, &second);
    if (mean >= 0) {
      // One choice of the first @axis: FC1_MEAN implies FC_PROLOGUE.
      g.erase("FC_PROLOGUE");
      g["FC1_MEAN"] = "";
      g["FC1_MEAN_PIXELS"] = std::to_string(IntDefine(list[mean], "COUNT"));
      second.inputs[0] = list[mean].inputs[0];
      fused += AbsorbProducer(scan, mean, &second);
    }
  }
  EraseRemoved(scan.removed, &list);
  return fused;
}

}  // namespace tflite_gles
