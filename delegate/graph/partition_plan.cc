#include "delegate/graph/partition_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "delegate/abi/node_view.h"
#include "delegate/abi/tflite_builtin.h"

namespace tflite_gles {

std::vector<int> ToVector(const abi::IntArray* array) {
  return array ? std::vector<int>(array->data, array->data + array->size)
               : std::vector<int>();
}

// An IntArray with TFLite's layout, owned by a vector of ints.
std::vector<int> MakeIntArray(const std::vector<int>& values) {
  std::vector<int> storage(values.size() + 1);
  storage[0] = static_cast<int>(values.size());
  std::copy(values.begin(), values.end(), storage.begin() + 1);
  return storage;
}

namespace {

struct NodeInfo {
  abi::Node* node = nullptr;
  abi::Registration* registration = nullptr;
};

NodeInfo ReadNode(abi::Context* context, int index) {
  NodeInfo info;
  if (context->GetNodeAndRegistration(context, index, &info.node,
                                      &info.registration) != abi::kOk) {
    return NodeInfo();
  }
  return info;
}

bool IsDequantizeOfConstant(abi::Context* context, const NodeInfo& info) {
  if (info.registration == nullptr ||
      info.registration->builtin_code != abi::kTfLiteBuiltinDequantize ||
      info.node->inputs->size != 1 || info.node->outputs->size != 1) {
    return false;
  }
  const int input = info.node->inputs->data[0];
  return input >= 0 && static_cast<size_t>(input) < context->tensors_size &&
         IsConstantTensor(context->tensors[input]);
}

// Ops whose output shape TFLite computes from the values of an integer
// operand (a shape, size, begin/end, paddings, axes, multiples): with such
// an operand that is not a constant, TFLite makes the output dynamic and
// sizes it at invoke, whatever the model declares.
bool ShapeFollowsOperandValues(int op) {
  switch (op) {
    case abi::kTfLiteBuiltinReshape: case abi::kTfLiteBuiltinResizeBilinear:
    case abi::kTfLiteBuiltinResizeNearestNeighbor: case abi::kTfLiteBuiltinPad:
    case abi::kTfLiteBuiltinPadv2: case abi::kTfLiteBuiltinMirrorPad:
    case abi::kTfLiteBuiltinTranspose: case abi::kTfLiteBuiltinMean:
    case abi::kTfLiteBuiltinSum: case abi::kTfLiteBuiltinReduceProd:
    case abi::kTfLiteBuiltinReduceMax: case abi::kTfLiteBuiltinReduceMin:
    case abi::kTfLiteBuiltinStridedSlice: case abi::kTfLiteBuiltinSlice:
    case abi::kTfLiteBuiltinSplit: case abi::kTfLiteBuiltinSplitV:
    case abi::kTfLiteBuiltinTransposeConv: case abi::kTfLiteBuiltinTile:
    case abi::kTfLiteBuiltinExpandDims: case abi::kTfLiteBuiltinFill:
    case abi::kTfLiteBuiltinRange: case abi::kTfLiteBuiltinBroadcastTo:
      return true;
    default:
      return false;
  }
}

// Whether TFLite may size `info`'s outputs only at invoke: an op of
// ShapeFollowsOperandValues with an int32/int64 operand that is no constant.
bool OutputSizedAtInvoke(abi::Context* context, const NodeInfo& info) {
  if (info.registration == nullptr ||
      !ShapeFollowsOperandValues(info.registration->builtin_code)) {
    return false;
  }
  for (int tensor : ToVector(info.node->inputs)) {
    if (tensor < 0 || static_cast<size_t>(tensor) >= context->tensors_size) continue;
    const abi::Tensor& t = context->tensors[tensor];
    if ((t.type == abi::kInt32 || t.type == abi::kInt64) && !IsConstantTensor(t)) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool HasCpuKernel(const abi::Registration& registration) {
  return registration.builtin_code != abi::kTfLiteBuiltinCustom ||
         registration.init != nullptr || registration.free != nullptr ||
         registration.prepare != nullptr ||
         registration.registration_external != nullptr;
}

std::string NodeList(const std::vector<int>& nodes) {
  std::string text = nodes.size() == 1 ? "node " : "nodes ";
  for (size_t i = 0; i < nodes.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(nodes[i]);
  }
  return text;
}

namespace {

// The partitions TFLite would form of `nodes` (each ascending), or an error.
StatusOr<std::vector<std::vector<int>>> Preview(abi::Context* context,
                                                const std::vector<int>& nodes) {
  std::vector<std::vector<int>> partitions;
  if (nodes.empty()) return partitions;
  std::vector<int> storage = MakeIntArray(nodes);
  abi::DelegateParams* previews = nullptr;
  int count = 0;
  if (context->PreviewDelegatePartitioning(
          context, reinterpret_cast<const abi::IntArray*>(storage.data()),
          &previews, &count) != abi::kOk) {
    return Status::Error("the runtime could not partition the graph "
                         "(PreviewDelegatePartitioning failed)");
  }
  for (int p = 0; p < count; ++p) {
    partitions.push_back(ToVector(previews[p].nodes_to_replace));
  }
  return partitions;
}

}  // namespace

StatusOr<PartitionPlan> PlanPartitions(abi::Context* context,
                                       const std::vector<int>& all_supported,
                                       const std::map<int, std::string>& declined,
                                       int max_partitions) {
  PartitionPlan plan;
  // Readers of tensors whose declared shape is in doubt stay on the CPU.
  std::set<int> supported_set(all_supported.begin(), all_supported.end());
  {
    std::map<int, std::vector<int>> readers;
    abi::IntArray* execution_plan = nullptr;
    if (context->GetExecutionPlan(context, &execution_plan) == abi::kOk) {
      for (int node : ToVector(execution_plan)) {
        const NodeInfo info = ReadNode(context, node);
        if (info.node == nullptr) continue;
        for (int tensor : ToVector(info.node->inputs)) readers[tensor].push_back(node);
      }
    }
    // A node declined over its output whose inputs some declined node
    // writes may only be complaining about that input: the first such node
    // on a path is the one whose declaration is in doubt.
    std::map<int, int> writer_of;
    if (context->GetExecutionPlan(context, &execution_plan) == abi::kOk) {
      for (int node : ToVector(execution_plan)) {
        const NodeInfo info = ReadNode(context, node);
        if (info.node == nullptr) continue;
        for (int tensor : ToVector(info.node->outputs)) writer_of[tensor] = node;
      }
    }
    std::vector<int> doubtful_writers;
    for (const auto& [node, reason] : declined) {
      const NodeInfo info = ReadNode(context, node);
      if (info.node == nullptr) continue;
      if (OutputSizedAtInvoke(context, info)) {  // in doubt whatever its reason
        doubtful_writers.push_back(node);
        continue;
      }
      if (reason.find("output") == std::string::npos) continue;
      bool downstream_of_declined = false;
      for (int tensor : ToVector(info.node->inputs)) {
        auto writer = writer_of.find(tensor);
        if (writer != writer_of.end() && declined.count(writer->second) > 0) {
          downstream_of_declined = true;
        }
      }
      if (!downstream_of_declined) doubtful_writers.push_back(node);
    }
    std::vector<int> moved;
    while (!doubtful_writers.empty()) {
      const int writer = doubtful_writers.back();
      doubtful_writers.pop_back();
      const NodeInfo info = ReadNode(context, writer);
      if (info.node == nullptr) continue;
      for (int tensor : ToVector(info.node->outputs)) {
        for (int reader : readers[tensor]) {
          if (supported_set.erase(reader) > 0) {
            moved.push_back(reader);
            doubtful_writers.push_back(reader);
          }
        }
      }
    }
    if (!moved.empty()) {
      std::sort(moved.begin(), moved.end());
      plan.cpu.push_back({"",
                          "they read a tensor that a node declined over its output "
                          "(or one that TFLite sizes at invoke from a computed "
                          "shape operand) writes on the CPU (its declared shape may "
                          "be wrong, and TFLite corrects it only after delegation), "
                          "or read what such a node writes",
                          moved});
    }
  }
  const std::vector<int> supported(supported_set.begin(), supported_set.end());
  // A DEQUANTIZE of a constant does no GPU work (consumers fold it), and
  // TFLite puts such source nodes in the first partition it forms, which
  // need not be their consumers': partitions are ranked by their other
  // nodes, and DEQUANTIZEs join the plan after them.
  std::set<int> dequantizes;
  for (int node : supported) {
    const NodeInfo info = ReadNode(context, node);
    if (info.node != nullptr && IsDequantizeOfConstant(context, info)) {
      dequantizes.insert(node);
    }
  }
  TFG_ASSIGN_OR_RETURN(std::vector<std::vector<int>> partitions, Preview(context, supported));
  std::vector<std::vector<int>> real(partitions.size());
  for (size_t p = 0; p < partitions.size(); ++p) {
    for (int node : partitions[p]) {
      if (dequantizes.count(node) == 0) real[p].push_back(node);
    }
  }
  std::vector<size_t> order;
  for (size_t p = 0; p < partitions.size(); ++p) {
    if (!real[p].empty()) order.push_back(p);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return real[a].size() > real[b].size();
  });
  std::set<int> kept;
  int kept_partitions = 0;
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const std::vector<int>& nodes = real[order[rank]];
    bool keep = static_cast<int>(rank) < max_partitions;
    for (int node : nodes) {
      const NodeInfo info = ReadNode(context, node);
      if (info.registration != nullptr && !HasCpuKernel(*info.registration)) {
        keep = true;  // on the CPU the model could not run at all
      }
    }
    if (keep) {
      kept.insert(nodes.begin(), nodes.end());
      ++kept_partitions;
      continue;
    }
    plan.cpu.push_back(
        {"", "their partition (" + std::to_string(nodes.size()) +
                 " supported node" + (nodes.size() == 1 ? "" : "s") +
                 " besides DEQUANTIZEs) was dropped by max_delegated_partitions=" +
                 std::to_string(max_partitions) + " (the runtime would form " +
                 std::to_string(order.size()) +
                 " partitions; the largest are kept)",
         nodes});
  }

  // Consumers of every tensor, over the whole execution plan.
  abi::IntArray* execution_plan = nullptr;
  std::map<int, std::vector<int>> consumers;
  if (context->GetExecutionPlan(context, &execution_plan) == abi::kOk) {
    for (int node : ToVector(execution_plan)) {
      const NodeInfo info = ReadNode(context, node);
      if (info.node == nullptr) continue;
      for (int tensor : ToVector(info.node->inputs)) consumers[tensor].push_back(node);
    }
  }
  std::vector<int> with_gpu_consumers, with_cpu_consumers;
  for (int node : dequantizes) {
    const std::vector<int>& readers =
        consumers[ReadNode(context, node).node->outputs->data[0]];
    const bool all_gpu = !readers.empty() &&
        std::all_of(readers.begin(), readers.end(),
                    [&](int reader) { return kept.count(reader) > 0; });
    (all_gpu ? with_gpu_consumers : with_cpu_consumers).push_back(node);
  }
  if (!with_cpu_consumers.empty()) {
    plan.cpu.push_back({"DEQUANTIZE",
                        "a consumer of its constant runs on the CPU (or none "
                        "reads it), which needs the tensor as TFLite's "
                        "DEQUANTIZE makes it (GPU consumers fold the constant "
                        "themselves)",
                        with_cpu_consumers});
  }
  // The rest join their consumers' partition, unless TFLite would make a
  // partition of their own of them (consumers after CPU nodes): then they
  // stay on the CPU too, where TFLite dequantizes a constant once.
  std::set<int> with = kept;
  with.insert(with_gpu_consumers.begin(), with_gpu_consumers.end());
  if (!with_gpu_consumers.empty()) {
    TFG_ASSIGN_OR_RETURN(std::vector<std::vector<int>> joined,
                         Preview(context, std::vector<int>(with.begin(), with.end())));
    if (static_cast<int>(joined.size()) == kept_partitions) {
      kept = with;
    } else {
      plan.cpu.push_back({"DEQUANTIZE",
                          "TFLite would make a partition of its own of it, apart "
                          "from its consumers (which fold the constant "
                          "themselves)",
                          with_gpu_consumers});
    }
  }
  // What TFLite will form of the final set (without their DEQUANTIZEs, the
  // kept nodes may split where a DEQUANTIZE tied them together).
  TFG_ASSIGN_OR_RETURN(std::vector<std::vector<int>> final_partitions,
                       Preview(context, std::vector<int>(kept.begin(), kept.end())));
  kept_partitions = static_cast<int>(final_partitions.size());
  plan.delegated.assign(kept.begin(), kept.end());
  plan.partitions = kept_partitions;
  return plan;
}

}  // namespace tflite_gles
