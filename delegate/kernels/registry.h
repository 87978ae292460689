// Maps each TFLite op to an ordered list of candidate GPU kernels.
//
// For a node, candidates are tried in order (specialised first, general
// last). The first whose check passes builds the node; if none does, every
// candidate's rejection reason is kept, so the log can say
//   "CONV_2D v1: conv_1x1: kernel is 3x3; conv_generic: dilation 4 > 2".
// Each kernel file exports one Register...() function listed in
// registry.cc.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "delegate/graph/graph.h"
#include "delegate/abi/node_view.h"
#include "egl/status.h"

namespace tflite_gles {

struct KernelCandidate {
  const char* name;
  // OK if this kernel computes `node` exactly; otherwise why not.
  Status (*check)(const NodeView& node, const GraphContext& graph,
                  const DeviceProfile& device);
  // Emits the node's dispatches. Runs only after check() passed.
  Status (*build)(const NodeView& node, GraphBuilder& builder);
  // For docs/ops.md (printed by the ops_table tool), optional (nullptr:
  // not described yet): what this kernel runs for this op (types, params,
  // broadcasting), what it declines and why, and the newest op version its
  // check accepts (0: not stated).
  const char* summary = nullptr;
  const char* declines = nullptr;
  int max_version = 0;
};

// One op of the registry with its candidates, in the order they are tried.
struct OpSupport {
  std::string op;  // "CONV_2D", or "CUSTOM name"
  std::vector<const KernelCandidate*> candidates;
};

class KernelRegistry {
 public:
  // The registry with every kernel of the library.
  static const KernelRegistry& Global();

  void AddBuiltin(int op, KernelCandidate candidate);
  void AddCustom(const std::string& custom_name, KernelCandidate candidate);

  // The first candidate that accepts `node`, or an error listing why each
  // candidate declined (or that the op has no kernel at all).
  StatusOr<const KernelCandidate*> Find(const NodeView& node,
                                        const GraphContext& graph,
                                        const DeviceProfile& device) const;

  // Every op the registry knows, for docs/ops.md: name -> kernel names.
  std::map<std::string, std::vector<std::string>> Describe() const;
  // Every op with its candidates, sorted by op name (for the ops_table tool).
  std::vector<OpSupport> Table() const;

 private:
  const std::vector<KernelCandidate>* CandidatesFor(const NodeView& node) const;
  std::map<int, std::vector<KernelCandidate>> builtin_;
  std::map<std::string, std::vector<KernelCandidate>> custom_;
};

// Registration functions, one per kernel file in delegate/kernels/.
void RegisterElementwiseKernels(KernelRegistry& registry);
void RegisterPoolingKernels(KernelRegistry& registry);
void RegisterMeanKernels(KernelRegistry& registry);
void RegisterSoftmaxKernels(KernelRegistry& registry);
void RegisterResizeKernels(KernelRegistry& registry);
void RegisterConcatKernels(KernelRegistry& registry);
void RegisterReshapeKernels(KernelRegistry& registry);
void RegisterSliceKernels(KernelRegistry& registry);
void RegisterPadKernels(KernelRegistry& registry);
void RegisterTransposeKernels(KernelRegistry& registry);
void RegisterLstmKernels(KernelRegistry& registry);
void RegisterConvKernels(KernelRegistry& registry);
void RegisterDepthwiseConvKernels(KernelRegistry& registry);
void RegisterFullyConnectedKernels(KernelRegistry& registry);
void RegisterTransposeConvKernels(KernelRegistry& registry);
void RegisterDequantizeKernels(KernelRegistry& registry);
void RegisterQuantizeKernels(KernelRegistry& registry);

}  // namespace tflite_gles
