#include "delegate/passes/pool_fusion.h"

#include <algorithm>
#include <string>
#include <utility>

#include "delegate/passes/fusion.h"
#include "delegate/passes/upsample_fusion.h"

namespace tflite_gles {
namespace {

// gemm_chain.comp's epilogue operands: the define of each one's binding and
// its name in the epilogue texts (fusion.cc writes LOAD(epilogue_in, index);
// gemm_chain.cc and gemm_chain_head.cc rename it per stage).
struct Operand {
  const char* binding;
  const char* name;
};
constexpr Operand kChainOperands[] = {{"EPILOGUE_BINDING", "epilogue_in"},
                                      {"CHAIN_BINDING", "chain_in"},
                                      {"CHAIN_BINDING2", "chain_in2"},
                                      {"HEAD_BINDING2", "head_in"}};
constexpr const char* kChainEpilogues[] = {"EPILOGUE(x,index,slice)",
                                           "CHAIN_EPILOGUE(x,index,slice)",
                                           "HEAD_EPILOGUE(x,index,slice)"};

// Each output position lies in exactly one window, at (y % KH, x % KW) of
// it: the gather reads one pooled vec4 and its indices.
bool WindowsTile(const Dispatch& unpool) {
  const long long kh = IntDefine(unpool, "FILTER_H"), kw = IntDefine(unpool, "FILTER_W");
  return kh > 0 && kw > 0 && IntDefine(unpool, "STRIDE_H") == kh &&
         IntDefine(unpool, "STRIDE_W") == kw && IntDefine(unpool, "PAD_H") == 0 &&
         IntDefine(unpool, "PAD_W") == 0 &&
         IntDefine(unpool, "OUT_H") == IntDefine(unpool, "IN_H") * kh &&
         IntDefine(unpool, "OUT_W") == IntDefine(unpool, "IN_W") * kw;
}

bool HasActivation(const Dispatch& d) {
  for (const auto& [name, value] : d.defines) {
    if (name.rfind("ACT_", 0) == 0) return true;
  }
  return false;
}

// A max pooling (argmax: with its indices output) whose windows do not
// overlap and cover its input: every input position is read once, by one
// output position.
bool PoolWindowsTile(const Dispatch& pool, long long* k) {
  *k = IntDefine(pool, "FILTER_H");
  const bool argmax = pool.defines.count("POOL_MAX_ARGMAX") && pool.outputs.size() == 2;
  const bool max = pool.defines.count("POOL_MAX") && pool.outputs.size() == 1;
  return pool.shader == "pooling" && (argmax || max) && !HasActivation(pool) &&
         pool.inputs.size() == 1 &&
         pool.read_write.empty() && *k > 0 && IntDefine(pool, "FILTER_W") == *k &&
         IntDefine(pool, "STRIDE_H") == *k && IntDefine(pool, "STRIDE_W") == *k &&
         IntDefine(pool, "PAD_H") == 0 && IntDefine(pool, "PAD_W") == 0 &&
         IntDefine(pool, "IN_H") == IntDefine(pool, "OUT_H") * *k &&
         IntDefine(pool, "IN_W") == IntDefine(pool, "OUT_W") * *k;
}

// The reader's comparisons: pooling.comp's POOL_MAX takes max(), POOL_MAX_ARGMAX
// the first strict maximum (they differ in NaNs and the sign of zeros).
std::string PoolMaxOp(const Dispatch& pool) { return pool.defines.count("POOL_MAX") ? "1" : "0"; }

int Readers(const std::vector<Value>& values, const std::vector<Dispatch>& list,
            const std::vector<bool>& removed, ValueId root) {
  int readers = 0;
  for (size_t j = 0; j < list.size(); ++j) {
    if (removed[j]) continue;
    for (const auto* ids : {&list[j].inputs, &list[j].read_write}) {
      for (ValueId id : *ids) readers += StorageRoot(values, id) == root;
    }
  }
  return readers;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The name under which `reader` reads its input `k`, if that input is one
// of gemm_chain.comp's epilogue operands (bindings: outputs, then inputs in
// order, as the runtime binds them).
const char* OperandName(const Dispatch& reader, size_t k) {
  const long long binding = static_cast<long long>(reader.outputs.size() + k);
  for (const Operand& op : kChainOperands) {
    if (IntDefine(reader, op.binding) == binding) return op.name;
  }
  return nullptr;
}

}  // namespace

int FuseUnpoolIntoEpilogues(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                            int max_dispatch_buffers, std::vector<Dispatch>* dispatches,
                            bool unpoolings, bool upsamplings) {
  std::vector<Dispatch>& list = *dispatches;
  std::vector<bool> removed(list.size(), false);
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  int fused = 0;
  for (size_t u = 0; u < list.size(); ++u) {
    const Dispatch& unpool = list[u];
    const bool is_unpool = unpoolings && unpool.shader == "max_unpooling" &&
                           unpool.outputs.size() == 1 && unpool.inputs.size() == 2 &&
                           unpool.read_write.empty() && WindowsTile(unpool);
    // A nearest upsampling from a source of its own storage (read at plain indices).
    const long long factor = upsamplings ? NearestUpsampleFactor(values, unpool) : 0;
    if (!is_unpool && (factor == 0 || values[unpool.inputs[0]].storage_of >= 0)) continue;
    const ValueId out = unpool.outputs[0];
    if (values[out].storage_of >= 0 || pinned[out]) continue;
    const int r = SoleReader(values, list, removed, out);
    if (r < 0) continue;
    Dispatch& reader = list[static_cast<size_t>(r)];
    if (reader.shader != "gemm_chain" || reader.defines.count("UNPOOL_GATHER") ||
        reader.defines.count("UNPOOL_FROM_INPUT") || reader.defines.count("UPSAMPLE_GATHER") ||
        !reader.read_write.empty() ||
        static_cast<int>(reader.outputs.size() + reader.inputs.size()) + (is_unpool ? 1 : 0) >
            max_dispatch_buffers) {
      continue;
    }
    auto at = std::find(reader.inputs.begin(), reader.inputs.end(), out);
    if (at == reader.inputs.end()) continue;  // read through a view
    const char* name = OperandName(reader, static_cast<size_t>(at - reader.inputs.begin()));
    if (name == nullptr) continue;
    // Every read of the operand is a whole-tensor load at the output's index.
    const std::string load = std::string("LOAD(") + name + ", index)";
    const std::string any = std::string("(") + name + ",";
    size_t loads = 0, mentions = 0;
    for (const auto& [define, text] : reader.defines) {
      loads += Count(text, load);
      mentions += Count(text, any);
    }
    if (loads == 0 || loads != mentions) continue;

    auto& d = reader.defines;
    const std::string gather =
        std::string(is_unpool ? "UNPOOL_LOAD(" : "UPSAMPLE_LOAD(") + name + ", index)";
    for (const char* epilogue : kChainEpilogues) {
      auto e = d.find(epilogue);
      if (e != d.end()) e->second = Replaced(e->second, load, gather);
    }
    *at = unpool.inputs[0];
    for (const char* size : {"IN_H", "IN_W", "OUT_H", "OUT_W"}) {
      d[std::string("UNPOOL_") + size] = unpool.defines.at(size);
    }
    if (is_unpool) {
      reader.inputs.push_back(unpool.inputs[1]);
      d["UNPOOL_GATHER"] = "";
      d["UNPOOL_BINDING"] = std::to_string(reader.outputs.size() + reader.inputs.size() - 1);
      d["UNPOOL_KH"] = unpool.defines.at("FILTER_H");
      d["UNPOOL_KW"] = unpool.defines.at("FILTER_W");
    } else {  // the upsampling's windows: F x F copies of one source pixel
      d["UPSAMPLE_GATHER"] = "";
      d["UNPOOL_KH"] = d["UNPOOL_KW"] = std::to_string(factor);
    }
    fused += AbsorbProducer(unpool, u, &removed, &reader);
  }
  EraseRemoved(removed, &list);
  return fused;
}

int FusePoolIntoConcat(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                       std::vector<Dispatch>* dispatches) {
  std::vector<Dispatch>& list = *dispatches;
  std::vector<bool> removed(list.size(), false);
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  int fused = 0;
  for (size_t c = 0; c < list.size(); ++c) {
    Dispatch& concat = list[c];
    const long long n = IntDefine(concat, "NUM_INPUTS");
    if (concat.shader != "concat" || !concat.defines.count("AXIS_C_SLICES") ||
        concat.defines.count("POOL_FIRST") || n < 1 ||
        static_cast<long long>(concat.inputs.size()) <
            n + (concat.defines.count("EPILOGUE_IN") ? 1 : 0)) {
      continue;
    }
    for (long long k = 0; k < n; ++k) {
      const ValueId pooled = concat.inputs[static_cast<size_t>(k)];
      if (values[pooled].storage_of >= 0 || pinned[pooled]) continue;
      int writer = -1;
      for (size_t j = 0; j < c && writer < 0; ++j) {
        if (!removed[j] && !list[j].outputs.empty() && list[j].outputs[0] == pooled) {
          writer = static_cast<int>(j);
        }
      }
      long long window = 0;
      if (writer < 0 || !PoolWindowsTile(list[static_cast<size_t>(writer)], &window)) continue;
      const Dispatch& pool = list[static_cast<size_t>(writer)];
      if (Readers(values, list, removed, pooled) != 1) continue;
      if (pool.outputs.size() == 2) {  // argmax: indices nothing reads
        const ValueId indices = pool.outputs[1];
        if (values[indices].storage_of >= 0 || pinned[indices] ||
            Readers(values, list, removed, indices) != 0) {
          continue;
        }
      }
      // The pooled input goes first (binding 1), its range with it: each
      // input's load is guarded by its own range, so their order is free.
      auto& d = concat.defines;
      const std::string kk = std::to_string(k);
      std::swap(d["OFF0"], d["OFF" + kk]);
      std::swap(d["LEN0"], d["LEN" + kk]);
      std::swap(concat.inputs[0], concat.inputs[static_cast<size_t>(k)]);
      concat.inputs[0] = pool.inputs[0];
      d["POOL_FIRST"] = "";
      d["POOL_K"] = std::to_string(window);
      d["POOL_MAX_OP"] = PoolMaxOp(pool);
      fused += AbsorbProducer(pool, static_cast<size_t>(writer), &removed, &concat);
      break;
    }
  }
  EraseRemoved(removed, &list);
  return fused;
}

// The gemm_chain that alone reads the pooling's output, as its A (in0, read
// pointwise: one row per pixel, the pooled slices its depth; no head, whose
// stage 0 reads in0 instead), or -1.
int PrologueHost(const std::vector<Value>& values, const std::vector<Dispatch>& list,
                 const std::vector<bool>& removed, const Dispatch& pool) {
  const ValueId pooled = pool.outputs[0];
  const int r = SoleReader(values, list, removed, pooled);
  if (r < 0) return -1;
  const Dispatch& g = list[static_cast<size_t>(r)];
  const long long pixels = IntDefine(pool, "OUT_H") * IntDefine(pool, "OUT_W");
  const long long slices = IntDefine(pool, "OUT_S");
  if (g.shader != "gemm_chain" || g.defines.count("HEAD") || g.defines.count("HEAD_IN") ||
      g.defines.count("POOL_PROLOGUE") || g.inputs.empty() || g.inputs[0] != pooled ||
      IntDefine(g, "ROW_PIXELS") != pixels || IntDefine(g, "DEPTH_STRIDE") != pixels ||
      IntDefine(g, "DEPTH_STEPS1") != slices ||
      IntDefine(g, "IN_BATCH_STRIDE") != slices * pixels) {
    return -1;
  }
  return r;
}

// Whether reader `j` reads the pooling's indices only as a gathered
// unpooling's (UNPOOL_GATHER) of the same windows, which may find them
// again in the pooling's input (UNPOOL_FROM_INPUT); sets `*operand` to
// that input's position.
bool GathersIndicesOf(const Dispatch& reader, const Dispatch& pool, size_t* operand) {
  const long long k = IntDefine(pool, "FILTER_H");
  const long long position = IntDefine(reader, "UNPOOL_BINDING") -
                             static_cast<long long>(reader.outputs.size());
  if (reader.shader != "gemm_chain" || !reader.defines.count("UNPOOL_GATHER") || position < 0 ||
      position >= static_cast<long long>(reader.inputs.size()) ||
      reader.inputs[static_cast<size_t>(position)] != pool.outputs[1] ||
      IntDefine(reader, "UNPOOL_KH") != k || IntDefine(reader, "UNPOOL_KW") != k ||
      IntDefine(reader, "UNPOOL_OUT_H") != IntDefine(pool, "IN_H") ||
      IntDefine(reader, "UNPOOL_OUT_W") != IntDefine(pool, "IN_W")) {
    return false;
  }
  *operand = static_cast<size_t>(position);
  return std::count(reader.inputs.begin(), reader.inputs.end(), pool.outputs[1]) == 1;
}

int FusePoolIntoGemmChains(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                           std::vector<Dispatch>* dispatches) {
  std::vector<Dispatch>& list = *dispatches;
  std::vector<bool> removed(list.size(), false);
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  int fused = 0;
  for (size_t p = 0; p < list.size(); ++p) {
    const Dispatch& pool = list[p];
    long long window = 0;
    if (!PoolWindowsTile(pool, &window)) continue;
    const ValueId pooled = pool.outputs[0];
    const ValueId indices = pool.outputs.size() == 2 ? pool.outputs[1] : pooled;
    if (values[pooled].storage_of >= 0 || values[indices].storage_of >= 0 || pinned[pooled] ||
        pinned[indices]) {
      continue;
    }
    const int host = PrologueHost(values, list, removed, pool);
    if (host < 0) continue;
    // Every reader of the indices must find them again in the input.
    std::vector<std::pair<size_t, size_t>> gathers;  // (reader, operand)
    bool all = true;
    for (size_t j = 0; j < list.size() && all && indices != pooled; ++j) {
      if (removed[j]) continue;
      bool reads = false;
      for (ValueId id : list[j].inputs) reads |= StorageRoot(values, id) == indices;
      for (ValueId id : list[j].read_write) all &= StorageRoot(values, id) != indices;
      if (!reads) continue;
      size_t operand = 0;
      all &= GathersIndicesOf(list[j], pool, &operand);
      gathers.emplace_back(j, operand);
    }
    if (!all) continue;
    const ValueId input = pool.inputs[0];
    for (const auto& [j, operand] : gathers) {
      Dispatch& reader = list[j];
      reader.inputs[operand] = input;
      reader.defines.erase("UNPOOL_GATHER");
      reader.defines["UNPOOL_FROM_INPUT"] = "";
    }
    Dispatch& g = list[static_cast<size_t>(host)];
    g.inputs[0] = input;
    g.defines["POOL_PROLOGUE"] = "";
    g.defines["POOL_K"] = std::to_string(window);
    g.defines["POOL_MAX_OP"] = PoolMaxOp(pool);
    g.defines["POOL_IN_H"] = pool.defines.at("IN_H");
    g.defines["POOL_IN_W"] = pool.defines.at("IN_W");
    g.defines["POOL_OUT_W"] = pool.defines.at("OUT_W");
    fused += AbsorbProducer(pool, p, &removed, &g);
  }
  EraseRemoved(removed, &list);
  return fused;
}

int FusePoolings(const DeviceProfile& device, const std::vector<Value>& values,
                 const std::vector<ValueId>& keep, std::vector<Dispatch>* dispatches) {
  int fused = 0;
  if (device.fuse_unpool || device.fuse_upsample_operand) {
    fused += FuseUnpoolIntoEpilogues(values, keep, device.max_dispatch_buffers, dispatches,
                                     device.fuse_unpool, device.fuse_upsample_operand);
  }
  if (device.fuse_pool_prologue) fused += FusePoolIntoGemmChains(values, keep, dispatches);
  if (device.fuse_pool_concat) fused += FusePoolIntoConcat(values, keep, dispatches);
  return fused;
}

}  // namespace tflite_gles
