#include "delegate/passes/unpool_fusion.h"

#include <algorithm>
#include <string>

#include "delegate/passes/fusion.h"

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
                            int max_dispatch_buffers, std::vector<Dispatch>* dispatches) {
  std::vector<Dispatch>& list = *dispatches;
  std::vector<bool> removed(list.size(), false);
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  int fused = 0;
  for (size_t u = 0; u < list.size(); ++u) {
    const Dispatch& unpool = list[u];
    if (unpool.shader != "max_unpooling" || unpool.outputs.size() != 1 ||
        unpool.inputs.size() != 2 || !unpool.read_write.empty() || !WindowsTile(unpool)) {
      continue;
    }
    const ValueId out = unpool.outputs[0];
    if (values[out].storage_of >= 0 || pinned[out]) continue;
    const int r = SoleReader(values, list, removed, out);
    if (r < 0) continue;
    Dispatch& reader = list[static_cast<size_t>(r)];
    if (reader.shader != "gemm_chain" || reader.defines.count("UNPOOL_GATHER") ||
        !reader.read_write.empty() ||
        static_cast<int>(reader.outputs.size() + reader.inputs.size()) + 1 >
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
    const std::string gather = std::string("UNPOOL_LOAD(") + name + ", index)";
    for (const char* epilogue : kChainEpilogues) {
      auto e = d.find(epilogue);
      if (e != d.end()) e->second = Replaced(e->second, load, gather);
    }
    *at = unpool.inputs[0];
    reader.inputs.push_back(unpool.inputs[1]);
    d["UNPOOL_GATHER"] = "";
    d["UNPOOL_BINDING"] = std::to_string(reader.outputs.size() + reader.inputs.size() - 1);
    for (const char* size : {"IN_H", "IN_W", "OUT_H", "OUT_W"}) {
      d[std::string("UNPOOL_") + size] = unpool.defines.at(size);
    }
    d["UNPOOL_KH"] = unpool.defines.at("FILTER_H");
    d["UNPOOL_KW"] = unpool.defines.at("FILTER_W");
    reader.label = unpool.label + " + " + reader.label;
    reader.flops += unpool.flops;
    removed[u] = true;
    ++fused;
  }
  EraseRemoved(removed, &list);
  return fused;
}

}  // namespace tflite_gles
