#include "delegate/passes/norm_fusion.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "delegate/abi/node_view.h"
#include "delegate/abi/tflite_builtin.h"

namespace tflite_gles {
namespace {

// The partition's nodes as views, and which of them read each tensor.
class NodeIndex {
 public:
  NodeIndex(abi::Context* context, const std::vector<int>& nodes) {
    for (int index : nodes) {
      abi::Node* node = nullptr;
      abi::Registration* registration = nullptr;
      if (context->GetNodeAndRegistration(context, index, &node, &registration) !=
          abi::kOk) {
        continue;
      }
      auto [it, inserted] =
          views_.emplace(index, NodeView(context, index, node, registration));
      const NodeView& view = it->second;
      for (int i = 0; i < view.num_inputs(); ++i) {
        if (view.has_input(i)) readers_[view.input_index(i)].push_back(&view);
      }
      for (int i = 0; i < view.num_outputs(); ++i) producer_[view.output_index(i)] = index;
    }
  }

  // The partition's node that writes `tensor`; -1 for constants, partition
  // inputs and tensors written outside the partition (ready at its start).
  int Producer(int tensor) const {
    auto it = producer_.find(tensor);
    return it == producer_.end() ? -1 : it->second;
  }

  const NodeView* Find(int node) const {
    auto it = views_.find(node);
    return it == views_.end() ? nullptr : &it->second;
  }
  std::vector<const NodeView*> Readers(int tensor) const {
    auto it = readers_.find(tensor);
    return it == readers_.end() ? std::vector<const NodeView*>() : it->second;
  }
  // The one node reading `tensor`, if exactly one does.
  const NodeView* OnlyReader(int tensor) const {
    auto readers = Readers(tensor);
    return readers.size() == 1 ? readers[0] : nullptr;
  }

 private:
  std::map<int, NodeView> views_;  // std::map: the pointers stay valid
  std::map<int, std::vector<const NodeView*>> readers_;
  std::map<int, int> producer_;
};

bool IsFloat4d(const abi::Tensor& tensor) {
  return tensor.type == abi::kFloat32 && tensor.dims != nullptr && tensor.dims->size == 4;
}

// MEAN over H and W (axes {1, 2} in any order and sign), keeping dims, of a
// 4-D float tensor.
bool IsSpatialMean(const NodeView& node, const GraphContext& graph) {
  if (node.op() != abi::kTfLiteBuiltinMean || node.num_inputs() != 2 ||
      node.num_outputs() != 1 || !IsFloat4d(node.input(0)) || !IsFloat4d(node.output(0))) {
    return false;
  }
  const auto* params = node.params<abi::ReducerParams>();
  if (params == nullptr || !params->keep_dims) return false;
  auto axes = graph.ConstantInts(node.input_index(1));
  if (!axes.ok()) return false;
  std::vector<int64_t> sorted = *axes;
  for (int64_t& axis : sorted) axis = axis < 0 ? axis + 4 : axis;
  std::sort(sorted.begin(), sorted.end());
  return sorted == std::vector<int64_t>{1, 2};
}

// The other input of a two-input `node` than `tensor`; -1 if `tensor` is
// not one of them.
int OtherInput(const NodeView& node, int tensor) {
  if (node.num_inputs() != 2) return -1;
  if (node.input_index(0) == tensor) return node.input_index(1);
  if (node.input_index(1) == tensor) return node.input_index(0);
  return -1;
}

bool SameDims(const abi::Tensor& a, const abi::Tensor& b) {
  return DimsVector(a.dims) == DimsVector(b.dims);
}

std::optional<NormStatsGroup> MatchFrom(const NodeView& mean1, const NodeIndex& index,
                                        const GraphContext& graph,
                                        const std::vector<int>& partition_outputs) {
  if (!IsSpatialMean(mean1, graph)) return std::nullopt;
  // d, v and t are read inside the group only.
  auto internal = [&](int tensor) {
    return std::find(partition_outputs.begin(), partition_outputs.end(), tensor) ==
           partition_outputs.end();
  };
  NormStatsGroup group;
  group.mean_node = mean1.index();
  group.x = mean1.input_index(0);
  group.mean = mean1.output_index(0);
  // d = SQUARED_DIFFERENCE(x, m), among m's readers (the offset after the
  // group reads m too).
  const NodeView* sqdiff = nullptr;
  for (const NodeView* reader : index.Readers(group.mean)) {
    if (reader->op() == abi::kTfLiteBuiltinSquaredDifference &&
        OtherInput(*reader, group.mean) == group.x && reader->num_outputs() == 1 &&
        SameDims(reader->output(0), mean1.input(0))) {
      sqdiff = reader;
    }
  }
  if (sqdiff == nullptr) return std::nullopt;
  const int d = sqdiff->output_index(0);
  const NodeView* mean2 = index.OnlyReader(d);
  if (!internal(d) || mean2 == nullptr || mean2->input_index(0) != d ||
      !IsSpatialMean(*mean2, graph)) {
    return std::nullopt;
  }
  const int v = mean2->output_index(0);
  const NodeView* add = index.OnlyReader(v);
  if (!internal(v) || add == nullptr || add->op() != abi::kTfLiteBuiltinAdd ||
      add->num_outputs() != 1) {
    return std::nullopt;
  }
  const auto* add_params = add->params<abi::AddParams>();
  const int eps_tensor = OtherInput(*add, v);
  if (add_params == nullptr || add_params->activation != abi::kActNone || eps_tensor < 0 ||
      !graph.IsConstant(eps_tensor)) {
    return std::nullopt;
  }
  auto eps = graph.ConstantFloats(eps_tensor);
  // A finite, non-negative eps only: it becomes a GLSL literal, and
  // inversesqrt of a negative sum is undefined in GLSL (NaN on the CPU).
  if (!eps.ok() || eps->size() != 1 || !std::isfinite((*eps)[0]) || (*eps)[0] < 0.0f) {
    return std::nullopt;
  }
  const int t = add->output_index(0);
  const NodeView* rsqrt = index.OnlyReader(t);
  if (!internal(t) || rsqrt == nullptr || rsqrt->op() != abi::kTfLiteBuiltinRsqrt ||
      rsqrt->num_inputs() != 1 || rsqrt->num_outputs() != 1 ||
      !SameDims(rsqrt->output(0), mean1.output(0))) {
    return std::nullopt;
  }
  group.rstd = rsqrt->output_index(0);
  group.eps = (*eps)[0];
  group.other_nodes = {sqdiff->index(), mean2->index(), add->index(), rsqrt->index()};
  group.build_node = group.mean_node;
  return group;
}

// MUL or SUB of two float tensors shaped like `like`, with no activation.
bool IsPlainBinary(const NodeView& node, int op, const abi::Tensor& like) {
  if (node.op() != op || node.num_inputs() != 2 || node.num_outputs() != 1 ||
      !SameDims(node.output(0), like) || node.output(0).type != abi::kFloat32) {
    return false;
  }
  if (op == abi::kTfLiteBuiltinMul) {
    const auto* params = node.params<abi::MulParams>();
    return params != nullptr && params->activation == abi::kActNone;
  }
  const auto* params = node.params<abi::SubParams>();
  return params != nullptr && params->activation == abi::kActNone;
}

// The affine half after `group` (norm_fusion.h), if it is there and can
// be built at one place; the group is left as it was otherwise.
void MatchAffine(NormStatsGroup& group, const NodeIndex& index, const GraphContext& graph,
                 const std::vector<int>& partition_outputs) {
  auto internal = [&](int tensor) {
    return std::find(partition_outputs.begin(), partition_outputs.end(), tensor) ==
           partition_outputs.end();
  };
  const abi::Tensor& mean = graph.context()->tensors[group.mean];
  auto like_mean = [&](int tensor) {
    return tensor >= 0 && graph.context()->tensors[tensor].type == abi::kFloat32 &&
           SameDims(graph.context()->tensors[tensor], mean);
  };
  const NodeView* mul_s = index.OnlyReader(group.rstd);
  if (!internal(group.rstd) || mul_s == nullptr ||
      !IsPlainBinary(*mul_s, abi::kTfLiteBuiltinMul, mean)) {
    return;
  }
  const int gamma = OtherInput(*mul_s, group.rstd);
  if (!like_mean(gamma) || gamma == group.rstd) return;
  const int s = mul_s->output_index(0);
  const NodeView* mul_u = nullptr;
  for (const NodeView* reader : index.Readers(group.mean)) {
    if (IsPlainBinary(*reader, abi::kTfLiteBuiltinMul, mean) &&
        OtherInput(*reader, group.mean) == s) {
      mul_u = reader;
    }
  }
  if (mul_u == nullptr) return;
  const int u = mul_u->output_index(0);
  const NodeView* sub = index.OnlyReader(u);
  if (!internal(u) || sub == nullptr || !IsPlainBinary(*sub, abi::kTfLiteBuiltinSub, mean) ||
      sub->input_index(1) != u || sub->input_index(0) == u) {
    return;
  }
  const int beta = sub->input_index(0);
  if (!like_mean(beta)) return;
  // Built at the group's first node after gamma's and beta's producers ...
  std::vector<int> nodes = group.other_nodes;
  nodes.insert(nodes.end(), {group.mean_node, mul_s->index(), mul_u->index(), sub->index()});
  std::sort(nodes.begin(), nodes.end());
  const int ready = std::max(index.Producer(gamma), index.Producer(beta));
  auto place = std::find_if(nodes.begin(), nodes.end(), [&](int n) { return n > ready; });
  if (place == nodes.end()) return;
  // ... and before every node outside it that reads its outputs.
  const int shift = sub->output_index(0);
  for (int tensor : {group.mean, s, shift}) {
    for (const NodeView* reader : index.Readers(tensor)) {
      if (!std::binary_search(nodes.begin(), nodes.end(), reader->index()) &&
          reader->index() <= *place) {
        return;
      }
    }
  }
  group.build_node = *place;
  group.gamma = gamma;
  group.beta = beta;
  group.scale = s;
  group.shift = shift;
  group.other_nodes.insert(group.other_nodes.end(),
                           {mul_s->index(), mul_u->index(), sub->index()});
}

}  // namespace

std::vector<NormStatsGroup> FindNormStats(const GraphContext& graph,
                                          const std::vector<int>& nodes,
                                          const std::vector<int>& partition_outputs,
                                          bool affine) {
  NodeIndex index(graph.context(), nodes);
  std::vector<NormStatsGroup> groups;
  for (int node : nodes) {
    const NodeView* view = index.Find(node);
    if (view == nullptr) continue;
    auto group = MatchFrom(*view, index, graph, partition_outputs);
    if (!group) continue;
    // The group is built at the first MEAN's place: every later node of it
    // must come after it in the partition's order (TFLite's execution
    // order already guarantees this for a well-formed graph).
    bool ordered = true;
    for (int other : group->other_nodes) ordered = ordered && other > node;
    if (!ordered) continue;
    if (affine) MatchAffine(*group, index, graph, partition_outputs);
    groups.push_back(*group);
  }
  return groups;
}

Status BuildNormStats(const NormStatsGroup& group, GraphBuilder& builder,
                      const DeviceProfile& device) {
  TFG_ASSIGN_OR_RETURN(ValueId x, builder.TensorValue(group.x));
  TFG_ASSIGN_OR_RETURN(ValueId mean, builder.TensorValue(group.mean));
  const Shape4 shape = builder.shape(x);
  const long long groups = 1LL * shape.b * shape.slices();
  // One workgroup per slice is few (style transfer's 96x96x32 maps: 8), so
  // on GPUs with thousands of lanes each is as wide as gives every
  // invocation >= 8 pixels, up to 1024 (mean.comp's cooperative rule); 64
  // on llvmpipe, whose workgroups run on one core each.
  const long long pixels = 1LL * shape.h * shape.w;
  const int limit = device.gpu != nullptr ? device.gpu->max_workgroup_invocations : 64;
  uint32_t local = 64;
  const bool llvmpipe = device.gpu == nullptr || device.gpu->IsLlvmpipe();
  // Split into runs of 4 pixels per invocation, a workgroup each, where
  // that makes two runs or more and the dispatch may bind two more buffers
  // (shaders/norm_stats.comp SPLIT; docs/perf/log.md, "style, session 10").
  const int bindings = group.scale >= 0 ? 6 : 3;
  const uint32_t split_local = !llvmpipe && limit >= 256 ? 256u : 64u;
  constexpr int kSplitSteps = 4;  // pixels per invocation (norm_stats.comp SPLIT_STEPS)
  const long long chunk_pixels = 1LL * kSplitSteps * split_local;
  const bool split = device.norm_split && pixels >= 2 * chunk_pixels &&
                     bindings + 2 <= device.max_dispatch_buffers;
  const long long chunks = split ? (pixels + chunk_pixels - 1) / chunk_pixels : 1;
  if (split) {
    local = split_local;
  } else if (!llvmpipe) {
    for (uint32_t bigger : {256u, 1024u}) {
      if (pixels >= 8LL * bigger && static_cast<int>(bigger) <= limit) local = bigger;
    }
  }
  Dispatch dispatch;
  dispatch.shader = "norm_stats";
  if (group.scale >= 0) {
    TFG_ASSIGN_OR_RETURN(ValueId scale, builder.TensorValue(group.scale));
    TFG_ASSIGN_OR_RETURN(ValueId shift, builder.TensorValue(group.shift));
    TFG_ASSIGN_OR_RETURN(ValueId gamma, builder.TensorValue(group.gamma));
    TFG_ASSIGN_OR_RETURN(ValueId beta, builder.TensorValue(group.beta));
    dispatch.outputs = {mean, scale, shift};
    dispatch.inputs = {x, gamma, beta};
    dispatch.defines["AFFINE"] = "";
  } else {
    TFG_ASSIGN_OR_RETURN(ValueId rstd, builder.TensorValue(group.rstd));
    dispatch.outputs = {mean, rstd};
    dispatch.inputs = {x};
  }
  char eps[32];
  std::snprintf(eps, sizeof(eps), "%.9g", static_cast<double>(group.eps));
  std::string eps_text = eps;
  if (eps_text.find_first_of(".eE") == std::string::npos) eps_text += ".0";
  dispatch.defines["EPS"] = eps_text;
  dispatch.defines["PIXELS"] = std::to_string(pixels);
  dispatch.defines["SLICES"] = std::to_string(shape.slices());
  dispatch.defines["CHANNELS"] = std::to_string(shape.c);
  dispatch.defines["GROUPS"] = std::to_string(groups);
  // Moved where gamma and beta are slices of a batched GEMM's output
  // (delegate/passes/gemm_batching.h).
  dispatch.defines["GAMMA_BASE"] = "0";
  dispatch.defines["BETA_BASE"] = "0";
  dispatch.defines["CHUNKS"] = std::to_string(chunks);
  dispatch.defines["CHUNK_PIXELS"] = std::to_string(split ? chunk_pixels : pixels);
  if (split) {
    dispatch.defines["SPLIT"] = "";
    dispatch.defines["SPLIT_STEPS"] = std::to_string(kSplitSteps);
    // Per workgroup its run's mean and M2 as floats (room for them in
    // either storage: a vec4 of halves is half as long); per slice a
    // zeroed arrival counter (one uint; a vec4 of zeros reads 0u).
    dispatch.read_write = {
        builder.NewConstant(std::vector<float>(static_cast<size_t>(groups * chunks) * 16, 0.0f)),
        builder.NewConstant(std::vector<float>(static_cast<size_t>(groups) * 4, 0.0f))};
  }
  dispatch.grid = {static_cast<uint32_t>(groups * chunks * local), 1, 1};
  dispatch.local = {local, 1, 1};
  dispatch.label = group.scale >= 0
                       ? "MEAN + SQUARED_DIFFERENCE + MEAN + ADD + RSQRT + MUL + MUL + SUB "
                         "(norm stats, affine)"
                       : "MEAN + SQUARED_DIFFERENCE + MEAN + ADD + RSQRT (norm stats)";
  dispatch.flops = 5 * shape.elements() + (group.scale >= 0 ? 3LL * shape.b * shape.c : 0);
  builder.AddDispatch(std::move(dispatch));
  return Status::Ok();
}

}  // namespace tflite_gles
