#include "delegate/kernels/registry.h"

#include "delegate/graph/node_checks.h"
#include "delegate/abi/tflite_builtin.h"

namespace tflite_gles {

const KernelRegistry& KernelRegistry::Global() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    RegisterElementwiseKernels(*r);
    RegisterPoolingKernels(*r);
    RegisterMeanKernels(*r);
    RegisterSoftmaxKernels(*r);
    RegisterResizeKernels(*r);
    RegisterConcatKernels(*r);
    RegisterReshapeKernels(*r);
    RegisterSliceKernels(*r);
    RegisterPadKernels(*r);
    RegisterTransposeKernels(*r);
    RegisterLstmKernels(*r);
    RegisterConvKernels(*r);
    RegisterDepthwiseConvKernels(*r);
    RegisterFullyConnectedKernels(*r);
    RegisterTransposeConvKernels(*r);
    RegisterDequantizeKernels(*r);
    RegisterQuantizeKernels(*r);
    return r;
  }();
  return *registry;
}

void KernelRegistry::AddBuiltin(int op, KernelCandidate candidate) {
  builtin_[op].push_back(candidate);
}

void KernelRegistry::AddCustom(const std::string& custom_name,
                               KernelCandidate candidate) {
  custom_[custom_name].push_back(candidate);
}

const std::vector<KernelCandidate>* KernelRegistry::CandidatesFor(
    const NodeView& node) const {
  if (node.op() == abi::kTfLiteBuiltinCustom) {
    auto it = custom_.find(node.custom_name());
    return it == custom_.end() ? nullptr : &it->second;
  }
  auto it = builtin_.find(node.op());
  return it == builtin_.end() ? nullptr : &it->second;
}

StatusOr<const KernelCandidate*> KernelRegistry::Find(
    const NodeView& node, const GraphContext& graph,
    const DeviceProfile& device) const {
  const std::vector<KernelCandidate>* candidates = CandidatesFor(node);
  if (candidates == nullptr) {
    return Status::Error("no GPU kernel for this op");
  }
  TFG_RETURN_IF_ERROR(CheckNodeForDevice(node, graph, device));
  std::string reasons;
  for (const KernelCandidate& candidate : *candidates) {
    Status status = candidate.check(node, graph, device);
    if (status.ok()) return &candidate;
    reasons += std::string(reasons.empty() ? "" : "; ") + candidate.name +
               ": " + status.message();
  }
  return Status::Error(reasons);
}

std::map<std::string, std::vector<std::string>> KernelRegistry::Describe()
    const {
  std::map<std::string, std::vector<std::string>> ops;
  for (const auto& [op, candidates] : builtin_) {
    for (const auto& candidate : candidates) {
      ops[abi::BuiltinOperatorName(op)].push_back(candidate.name);
    }
  }
  for (const auto& [name, candidates] : custom_) {
    for (const auto& candidate : candidates) {
      ops["CUSTOM " + name].push_back(candidate.name);
    }
  }
  return ops;
}

std::vector<OpSupport> KernelRegistry::Table() const {
  std::map<std::string, OpSupport> ops;
  for (const auto& [op, candidates] : builtin_) {
    OpSupport& entry = ops[abi::BuiltinOperatorName(op)];
    entry.op = abi::BuiltinOperatorName(op);
    for (const auto& candidate : candidates) entry.candidates.push_back(&candidate);
  }
  for (const auto& [name, candidates] : custom_) {
    OpSupport& entry = ops["CUSTOM " + name];
    entry.op = "CUSTOM " + name;
    for (const auto& candidate : candidates) entry.candidates.push_back(&candidate);
  }
  std::vector<OpSupport> table;
  for (auto& [name, entry] : ops) table.push_back(std::move(entry));
  return table;
}

}  // namespace tflite_gles
