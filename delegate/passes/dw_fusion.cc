#include "delegate/passes/dw_fusion.h"

#include <algorithm>
#include <string>

#include "delegate/passes/dispatch_scan.h"
#include "delegate/passes/fusion.h"
#include "delegate/kernels/gemm.h"

namespace tflite_gles {
namespace {

// The DW_PROLOGUE_* define for the depthwise's fused activation; empty when
// it has one the prologue does not run.
std::string PrologueDefine(const Dispatch& depthwise) {
  const auto& d = depthwise.defines;
  if (d.count("ACT_TANH") || d.count("ACT_SIGMOID")) return "";
  if (d.count("ACT_RELU")) return "DW_PROLOGUE_RELU";
  if (d.count("ACT_RELU6")) return "DW_PROLOGUE_RELU6";
  if (d.count("ACT_RELU_N1_TO_1")) return "DW_PROLOGUE_RELU_N1_TO_1";
  return "DW_PROLOGUE_NONE";
}

// The prologue's kernel: 3x3 (FAST_3X3), or up to 5x5 with any dilation
// and multiplier 1 (palm detection's 5x5 layers, deeplabv3's dilated 3x3).
constexpr long long kMaxFusedKernel = 5;

bool FusableKernel(const Dispatch& dispatch) {
  if (dispatch.defines.count("FAST_3X3")) return true;
  const long long kh = IntDefine(dispatch, "KERNEL_H");
  const long long kw = IntDefine(dispatch, "KERNEL_W");
  return IntDefine(dispatch, "MULTIPLIER") == 1 && kh >= 1 && kh <= kMaxFusedKernel &&
         kw >= 1 && kw <= kMaxFusedKernel && IntDefine(dispatch, "DILATION_H") >= 1 &&
         IntDefine(dispatch, "DILATION_W") >= 1;
}

// Taps of a fusable depthwise's kernel (9 for FAST_3X3).
long long KernelTaps(const Dispatch& dispatch) {
  if (dispatch.defines.count("FAST_3X3")) return 9;
  return IntDefine(dispatch, "KERNEL_H") * IntDefine(dispatch, "KERNEL_W");
}

// Above this many GEMM rows (output pixels) a kernel larger than 3x3 stays
// unfused (see FuseDepthwiseIntoGemm).
constexpr long long kMaxRowsForLargeKernels = 24 * 24;

// Whether the depthwise's epilogue, if any, can run in the prologue: an
// expression of x alone (the quantization simulator of a quantized model),
// not one that reads a tensor or indexes (EPILOGUE_IN, index, slice).
bool PrologueEpilogueFits(const Dispatch& dispatch) {
  auto epilogue = dispatch.defines.find(kEpilogueDefine);
  if (epilogue == dispatch.defines.end()) return true;
  if (dispatch.defines.count("EPILOGUE_IN")) return false;
  const std::string& text = epilogue->second;
  // Identifiers other than x, GLSL built-ins and literals mean index/slice.
  for (const char* name : {"index", "slice", "epilogue_in", "LOAD"}) {
    if (text.find(name) != std::string::npos) return false;
  }
  return true;
}

bool IsFusableDepthwise(const Dispatch& dispatch) {
  return dispatch.shader == "depthwise_conv2d" && FusableKernel(dispatch) &&
         PrologueEpilogueFits(dispatch) && !dispatch.specialize &&
         dispatch.outputs.size() == 1 && dispatch.inputs.size() == 3 &&
         !PrologueDefine(dispatch).empty();
}

bool HasPrologue(const Dispatch& dispatch) {
  for (const auto& [name, value] : dispatch.defines) {
    if (name.rfind("DW_PROLOGUE_", 0) == 0) return true;
  }
  return false;
}

}  // namespace

int FuseDepthwiseIntoGemm(const DeviceProfile& device, std::vector<Value>* values,
                          const std::vector<ValueId>& keep,
                          std::vector<Dispatch>* dispatches) {
  if (!device.shared_memory_gemm || !device.fuse_depthwise_into_gemm) return 0;
  std::vector<Value>& vals = *values;
  std::vector<Dispatch>& list = *dispatches;
  const std::vector<bool> pinned = PinnedValues(vals, keep, /*viewed_roots=*/true);
  DispatchScan scan(vals, list);

  int fused = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    Dispatch& gemm = list[i];
    // EPILOGUE_IN2: the depthwise weights' bindings would follow two
    // epilogue operands (rare: a PRELU after a residual ADD).
    if (gemm.shader != "gemm" || gemm.defines.count("SPLIT_K") ||
        HasPrologue(gemm) || gemm.specialize || gemm.outputs.size() != 1 ||
        gemm.inputs.size() < 3 || gemm.defines.count("EPILOGUE_IN2")) {
      continue;
    }
    const ValueId a = gemm.inputs[0];
    if (vals[a].storage_of >= 0 || pinned[a] || scan.Readers(a) != 1) continue;
    // Its latest writer, which must be a fusable depthwise.
    const int producer = scan.LatestWriter(i, a);
    if (producer < 0 || !IsFusableDepthwise(list[producer]) ||
        !ReadsAsPointwise(gemm, vals[a].shape)) {
      continue;
    }
    const Dispatch& depthwise = list[producer];
    // The depthwise's input is now read at the GEMM's place: nothing in
    // between may overwrite it.
    const ValueId dw_in = depthwise.inputs[0];
    if (scan.WrittenBetween(producer, i, StorageRoot(vals, dw_in))) continue;
    const ValueId gemm_weights = gemm.inputs[1];
    if (scan.Readers(gemm_weights) != 1) continue;

    const long long rows = IntDefine(gemm, "ROWS");
    // Kernels larger than 3x3 on big maps: the unfused depthwise reuses
    // each fetched pixel across its output block, the prologue fetches all
    // taps of every output again. H200, palm detection's 5x5 layers
    // (docs/perf/log.md, "Lead, session 4: larger depthwise kernels"):
    // fused slower at 96x96 and 48x48 (fp32 +8 us a pair), about even at
    // 24x24 (kept fused: a dispatch fewer), faster at 12x12 and 6x6.
    if (KernelTaps(depthwise) > 9 && rows > kMaxRowsForLargeKernels) continue;
    const int out_slices = static_cast<int>(IntDefine(gemm, "OUT_S"));
    const int depth_steps = static_cast<int>(IntDefine(gemm, "DEPTH_STEPS"));
    auto tile = kernels::ChooseDepthwiseGemmTile(rows, out_slices, depth_steps, device);
    if (!tile.ok()) continue;  // no tile fits: both stay as they are
    const int old_wg_slices = static_cast<int>(IntDefine(gemm, "TILE_SLICES") *
                                               IntDefine(gemm, "THREADS_S"));
    if (old_wg_slices != tile->wg_slices()) {
      kernels::RepackGemmWeights(vals[gemm_weights], out_slices, depth_steps,
                                 old_wg_slices, tile->wg_slices());
    }
    kernels::SetTiledGemmShape(*tile, rows, out_slices,
                               kernels::DepthwiseGemmSharedVec4(*tile, depth_steps),
                               &gemm);
    auto& d = gemm.defines;
    const auto& dw = depthwise.defines;
    d[PrologueDefine(depthwise)] = "";
    if (auto epilogue = depthwise.defines.find(kEpilogueDefine);
        epilogue != depthwise.defines.end()) {
      d[kDwEpilogueDefine] = epilogue->second;  // x: the activated depthwise sum
    }
    d["DW_IN_H"] = dw.at("IN_H");
    d["DW_IN_W"] = dw.at("IN_W");
    d["DW_OUT_W"] = dw.at("OUT_W");
    d["DW_STRIDE_H"] = dw.at("STRIDE_H");
    d["DW_STRIDE_W"] = dw.at("STRIDE_W");
    d["DW_PAD_TOP"] = dw.at("PAD_TOP");
    d["DW_PAD_LEFT"] = dw.at("PAD_LEFT");
    const bool fast = dw.count("FAST_3X3") > 0;
    d["DW_KH"] = fast ? "3" : dw.at("KERNEL_H");
    d["DW_KW"] = fast ? "3" : dw.at("KERNEL_W");
    // FAST_3X3 defines its dilation only where it is > 1 (dilated layers
    // sliding over a dilation's phases, DeviceProfile::dilated_depthwise_reuse).
    d["DW_DIL_H"] = dw.count("DILATION_H") ? dw.at("DILATION_H") : "1";
    d["DW_DIL_W"] = dw.count("DILATION_W") ? dw.at("DILATION_W") : "1";
    gemm.inputs[0] = dw_in;
    gemm.inputs.push_back(depthwise.inputs[1]);  // [slice][tap] weights
    gemm.inputs.push_back(depthwise.inputs[2]);  // bias
    fused += AbsorbProducer(scan, producer, &gemm);
  }
  EraseRemoved(scan.removed, &list);
  return fused;
}

namespace {

// The largest map a fused mean walks (FuseMeanIntoGemm).
constexpr long long kMaxFusedMeanPixels = 64;

}  // namespace

int FuseMeanIntoGemm(const DeviceProfile& device, const std::vector<Value>& values,
                     const std::vector<ValueId>& keep, std::vector<Dispatch>* dispatches) {
  if (!device.shared_memory_gemm || !device.fuse_mean_into_gemm) return 0;
  std::vector<Dispatch>& list = *dispatches;
  // Roots that must stay materialized: outputs (or views that are) and
  // write-back sources. A view alone does not pin: the logits GEMM often
  // reads the pooled map through a RESHAPE view, and DispatchScan::Readers
  // counts reads through every view.
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/false);
  DispatchScan scan(values, list);
  int fused = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    Dispatch& gemm = list[i];
    if (gemm.shader != "gemm" || !gemm.defines.count("SPLIT_K") ||
        gemm.defines.count("MEAN_PROLOGUE") || gemm.specialize || gemm.inputs.empty()) {
      continue;
    }
    const ValueId a = gemm.inputs[0];
    const ValueId root = StorageRoot(values, a);
    if (pinned[root] || scan.Readers(root) != 1) continue;
    const int producer = scan.LatestWriter(i, root);
    if (producer < 0 || !IsWholeMapMean(list[producer]) ||
        !ReadsAsPointwise(gemm, values[a].shape)) {
      continue;
    }
    const Dispatch& mean = list[producer];
    const ValueId map = mean.inputs[0];
    const long long a_vec4 = IntDefine(gemm, "TILE_ROWS") * IntDefine(gemm, "DEPTH_STEPS");
    if (scan.WrittenBetween(producer, i, StorageRoot(values, map)) || a_vec4 <= 0 ||
        a_vec4 + IntDefine(gemm, "SHARED_VEC4") > kernels::SharedGemmVec4Limit(device)) {
      continue;
    }
    // Each averaged vec4 is one invocation's serial walk over the map, done
    // again by every workgroup: fine for a classifier's 7x7 head (49
    // loads), ruinous for a squeeze-and-excitation block's 64x64 map
    // (selfie segmentation went from 0.69 to 2.3 ms on the H200 with its
    // six SE means fused). So small maps only.
    const long long pixels = IntDefine(mean, "COUNT");
    if (pixels > kMaxFusedMeanPixels) continue;
    auto& d = gemm.defines;
    d["MEAN_PROLOGUE"] = "";
    d["A_VEC4"] = std::to_string(a_vec4);
    d["MEAN_PIXELS"] = std::to_string(pixels);
    // The mean's fused epilogue (a quantized AVERAGE_POOL_2D's simulator
    // step) on each averaged vec4: unary, it reads no index or operand.
    auto epilogue = mean.defines.find(kEpilogueDefine);
    if (epilogue != mean.defines.end()) d[kMeanEpilogueDefine] = epilogue->second;
    d["MEAN_BATCH_STRIDE"] = std::to_string(pixels * IntDefine(mean, "IN_S"));
    gemm.inputs[0] = map;
    fused += AbsorbProducer(scan, producer, &gemm);
  }
  EraseRemoved(scan.removed, &list);
  return fused;
}

namespace {

// The fused softmax does every row in the last workgroup, one row per lane
// of a vec4 (gemm.comp's SOFTMAX_EPILOGUE).
constexpr long long kMaxFusedSoftmaxRows = 4;

// Shared vec4s the softmax tail adds: a partial maximum and a partial sum
// per invocation, and 16 group results of each.
long long SoftmaxSharedVec4(const Dispatch& gemm) {
  return 2LL * (gemm.local[0] * gemm.local[1] + 16);
}

// The first dispatch after `from` that reads `root` (-1 if none).
int NextReader(const DispatchScan& scan, size_t from, ValueId root) {
  for (size_t j = from + 1; j < scan.list.size(); ++j) {
    if (scan.removed[j]) continue;
    for (ValueId read : scan.list[j].inputs) {
      if (StorageRoot(scan.values, read) == root) return static_cast<int>(j);
    }
  }
  return -1;
}

}  // namespace

int FuseSoftmaxIntoGemm(const DeviceProfile& device, std::vector<Value>* values,
                        const std::vector<ValueId>& keep,
                        std::vector<Dispatch>* dispatches) {
  if (!device.shared_memory_gemm || !device.fuse_softmax_into_gemm) return 0;
  std::vector<Value>& vals = *values;
  std::vector<Dispatch>& list = *dispatches;
  const std::vector<bool> pinned = PinnedValues(vals, keep, /*viewed_roots=*/false);
  std::vector<ValueId> counters;
  int fused = 0;
  {
    DispatchScan scan(vals, list);
    for (size_t i = 0; i < list.size(); ++i) {
      const Dispatch& gemm = list[i];
      const long long rows = IntDefine(gemm, "ROWS");
      if (gemm.shader != "gemm" || !gemm.defines.count("SPLIT_K") ||
          gemm.defines.count("EPILOGUE_IN") || gemm.defines.count("EPILOGUE_IN2") ||
          gemm.defines.count("SOFTMAX_EPILOGUE") ||
          gemm.specialize || gemm.outputs.size() != 1 || !gemm.read_write.empty() ||
          rows < 1 || rows > kMaxFusedSoftmaxRows || IntDefine(gemm, "TILE_ROWS") != rows) {
        continue;
      }
      const ValueId logits = gemm.outputs[0];
      const ValueId root = StorageRoot(vals, logits);
      if (pinned[root] || scan.Readers(root) != 1) continue;
      const int j = NextReader(scan, i, root);
      if (j < 0 || scan.LatestWriter(j, root) != static_cast<int>(i)) continue;
      const Dispatch& softmax = list[j];
      if (softmax.shader != "channel_normalize" || !softmax.defines.count("OP_SOFTMAX") ||
          softmax.inputs.size() != 1 || softmax.outputs.size() != 1) {
        continue;
      }
      // The SOFTMAX normalizes each pixel of its input over its channels;
      // that must be each GEMM row over its OUT_C outputs, placed alike.
      const Shape4& in = vals[softmax.inputs[0]].shape;
      if (in.c != IntDefine(gemm, "OUT_C") || 1LL * in.b * in.h * in.w != rows ||
          1LL * in.h * in.w != IntDefine(gemm, "OUT_HW")) {
        continue;
      }
      // The GEMM now runs at the SOFTMAX's place: nothing in between may
      // overwrite what it reads.
      bool inputs_kept = true;
      for (ValueId read : gemm.inputs) {
        inputs_kept = inputs_kept && !scan.WrittenBetween(i, j, StorageRoot(vals, read));
      }
      long long shared = IntDefine(gemm, "SHARED_VEC4") + SoftmaxSharedVec4(gemm);
      if (gemm.defines.count("MEAN_PROLOGUE")) shared += IntDefine(gemm, "A_VEC4");
      if (!inputs_kept || shared > kernels::SharedGemmVec4Limit(device)) continue;

      Dispatch merged = gemm;
      merged.defines["SOFTMAX_EPILOGUE"] = "";
      merged.defines["SOFTMAX_BETA"] = softmax.defines.at("BETA");
      // The softmax's fused epilogue (a quantized SOFTMAX's simulator step)
      // on each stored probability.
      auto epilogue = softmax.defines.find(kEpilogueDefine);
      if (epilogue != softmax.defines.end()) {
        merged.defines[kSoftmaxOutEpilogueDefine] = epilogue->second;
      }
      merged.outputs = softmax.outputs;
      const ValueId counter = static_cast<ValueId>(vals.size() + counters.size());
      counters.push_back(counter);
      merged.read_write = {logits, counter};
      merged.label = gemm.label + " + " + softmax.label;
      merged.flops += softmax.flops;
      list[j] = std::move(merged);
      scan.removed[i] = true;
      ++fused;
    }
    EraseRemoved(scan.removed, &list);
  }
  // One zeroed uint per fused GEMM (a vec4 of zeros: any storage reads 0u).
  for (size_t k = 0; k < counters.size(); ++k) {
    Value counter;
    counter.kind = Value::Kind::kConstant;
    counter.constant_data.assign(4, 0.0f);
    vals.push_back(std::move(counter));
  }
  return fused;
}

}  // namespace tflite_gles
