// SLICE, STRIDED_SLICE, SPLIT and SPLIT_V: each output is an affine window
// of the input (shaders/relayout.comp, MODE_AFFINE; whole vec4s move when
// the channel window starts on a slice boundary).
#include <algorithm>
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/layout_common.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckFloatTensors;
using kernels::ConstantIntsOf;

// One output of a slicing op: where it starts in the input, its strides,
// which input axes it drops.
struct Window {
  std::vector<int> begin, stride;  // per input axis
  // The output axis each input axis becomes; -1 when it is dropped
  // (shrink_axis_mask). Output axes no input axis maps to are new size-1
  // axes (new_axis_mask).
  std::vector<int> out_axis;
  int out_rank = 0;
};

// A window that keeps every axis: output axis j is input axis j.
Window IdentityWindow(int rank) {
  Window window{std::vector<int>(rank, 0), std::vector<int>(rank, 1), {}, rank};
  for (int j = 0; j < rank; ++j) window.out_axis.push_back(j);
  return window;
}

Status CheckOperandLength(const std::vector<int64_t>& values, int rank,
                          const char* what) {
  if (static_cast<int>(values.size()) != rank) {
    return Status::Error(std::string(what) + " has " +
                         std::to_string(values.size()) +
                         " entries for an input of rank " +
                         std::to_string(rank));
  }
  return Status::Ok();
}

// The window's output dims must be the output tensor's: a disagreement
// means we misread the op, so it stays on the CPU.
Status CheckWindowDims(const std::vector<int>& counts, const Window& window,
                       const abi::Tensor& output) {
  std::vector<int> expected(window.out_rank, 1);
  for (size_t j = 0; j < counts.size(); ++j) {
    if (window.out_axis[j] >= 0) expected[window.out_axis[j]] = counts[j];
  }
  if (expected != DimsVector(output.dims)) {
    return Status::Error("computed output dims do not match the output tensor");
  }
  return Status::Ok();
}

StatusOr<Window> SliceWindow(const NodeView& node, const GraphContext& graph) {
  const std::vector<int> in = DimsVector(node.input(0).dims);
  const int rank = static_cast<int>(in.size());
  TFG_ASSIGN_OR_RETURN(auto begin, ConstantIntsOf(node, graph, 1, "begin"));
  TFG_ASSIGN_OR_RETURN(auto size, ConstantIntsOf(node, graph, 2, "size"));
  TFG_RETURN_IF_ERROR(CheckOperandLength(begin, rank, "begin"));
  TFG_RETURN_IF_ERROR(CheckOperandLength(size, rank, "size"));
  Window window = IdentityWindow(rank);
  window.begin.clear();
  std::vector<int> counts;
  for (int j = 0; j < rank; ++j) {
    const int64_t count = size[j] == -1 ? in[j] - begin[j] : size[j];
    if (begin[j] < 0 || begin[j] > in[j] || count < 0 ||
        count > in[j] - begin[j]) {
      return Status::Error("slice out of the input's bounds on axis " +
                           std::to_string(j));
    }
    window.begin.push_back(static_cast<int>(begin[j]));
    counts.push_back(static_cast<int>(count));
  }
  TFG_RETURN_IF_ERROR(CheckWindowDims(counts, window, node.output(0)));
  return window;
}

// One axis of TFLite's "dense" slice spec: the sparse spec (begin/end/
// strides with masks, possibly with an ellipsis, new axes, or fewer entries
// than the input's rank) expanded to one entry per input axis, as TF does.
struct DenseAxis {
  int64_t begin = 0, end = 0, stride = 1;
  bool begin_masked = true, end_masked = true, shrink = false;
  int out_axis = -1;
};

StatusOr<std::vector<DenseAxis>> DenseSpec(const abi::StridedSliceParams& params,
                                           const std::vector<int64_t>& begin,
                                           const std::vector<int64_t>& end,
                                           const std::vector<int64_t>& strides,
                                           int rank, int* out_rank) {
  const int sparse = static_cast<int>(begin.size());
  if (end.size() != begin.size() || strides.size() != begin.size() || sparse > 32) {
    return Status::Error("begin, end and strides differ in length");
  }
  auto bit = [](int mask, int i) { return ((mask >> i) & 1) != 0; };
  int ellipsis_at = -1, ellipses = 0;
  for (int i = 0; i < sparse; ++i) {
    if (bit(params.ellipsis_mask, i)) {
      ++ellipses;
      if (ellipsis_at < 0) ellipsis_at = i;
    }
  }
  if (ellipses > 1) return Status::Error("more than one ellipsis in ellipsis_mask");
  int new_axes_after_ellipsis = 0;
  for (int i = ellipsis_at + 1; ellipsis_at >= 0 && i < sparse; ++i) {
    if (bit(params.new_axis_mask, i)) ++new_axes_after_ellipsis;
  }
  std::vector<DenseAxis> dense(rank);
  int full = 0, out = 0;
  for (int i = 0; i < sparse; ++i) {
    if (i == ellipsis_at) {
      // Full ranges up to the dims the entries after the ellipsis name.
      const int next = std::min(rank - (sparse - i) + 1 + new_axes_after_ellipsis, rank);
      for (; full < next; ++full) dense[full].out_axis = out++;
    } else if (bit(params.new_axis_mask, i)) {
      ++out;  // a size-1 output axis; reads no input axis
    } else {
      if (full >= rank) return Status::Error("the slice spec names more axes than the input has");
      DenseAxis& axis = dense[full++];
      axis.begin = begin[i];
      axis.end = end[i];
      axis.stride = strides[i];
      axis.begin_masked = bit(params.begin_mask, i);
      axis.end_masked = bit(params.end_mask, i);
      axis.shrink = bit(params.shrink_axis_mask, i);
      if (axis.shrink && axis.begin_masked) {
        // TF reads begin, TFLite's kernel reads the mask: leave it to the CPU.
        return Status::Error("shrink_axis_mask and begin_mask on the same axis");
      }
      axis.out_axis = axis.shrink ? -1 : out++;
    }
  }
  for (; full < rank; ++full) dense[full].out_axis = out++;  // implicit ellipsis
  *out_rank = out;
  return dense;
}

StatusOr<Window> StridedSliceWindow(const NodeView& node,
                                    const GraphContext& graph) {
  const auto* params = node.params<abi::StridedSliceParams>();
  if (params == nullptr) return Status::Error("missing builtin parameters");
  if (node.version() >= 8 && params->offset) {
    return Status::Error("offset=true (end relative to begin) is not supported");
  }
  const std::vector<int> in = DimsVector(node.input(0).dims);
  const int rank = static_cast<int>(in.size());
  TFG_ASSIGN_OR_RETURN(auto begin, ConstantIntsOf(node, graph, 1, "begin"));
  TFG_ASSIGN_OR_RETURN(auto end, ConstantIntsOf(node, graph, 2, "end"));
  TFG_ASSIGN_OR_RETURN(auto strides, ConstantIntsOf(node, graph, 3, "strides"));
  Window window;
  TFG_ASSIGN_OR_RETURN(std::vector<DenseAxis> dense,
                       DenseSpec(*params, begin, end, strides, rank, &window.out_rank));
  std::vector<int> counts;
  for (int j = 0; j < rank; ++j) {
    const DenseAxis& axis = dense[j];
    const int64_t dim = in[j];
    const int64_t stride = axis.stride;
    if (stride == 0) return Status::Error("stride 0 on axis " + std::to_string(j));
    // Keeps the index arithmetic below (and the shader's ints) in range.
    constexpr int64_t kLimit = 1 << 30;
    if (stride < -kLimit || stride > kLimit || axis.begin < -kLimit ||
        axis.begin > kLimit || axis.end < -kLimit || axis.end > kLimit) {
      return Status::Error("begin/end/stride out of range on axis " +
                           std::to_string(j));
    }
    if (axis.shrink && stride < 0) {
      return Status::Error("shrink_axis_mask with a negative stride");
    }
    // Python slicing: negative indices count from the end, then clamp into
    // [0, dim] going forward or [-1, dim - 1] going backward.
    auto clamp = [&](int64_t v) {
      if (v < 0) v += dim;
      return stride > 0 ? std::min(std::max<int64_t>(v, 0), dim)
                        : std::min(std::max<int64_t>(v, -1), dim - 1);
    };
    int64_t first = axis.begin_masked ? (stride > 0 ? 0 : dim - 1) : clamp(axis.begin);
    int64_t stop;
    if (axis.shrink) {
      // The single element at begin (negative begin counts from the end).
      first = axis.begin < 0 ? axis.begin + dim : axis.begin;
      if (first < 0 || first >= dim) {
        return Status::Error("shrunk axis index out of range");
      }
      stop = first + 1;
    } else if (axis.end_masked) {
      stop = stride > 0 ? dim : -1;
    } else {
      stop = clamp(axis.end);
    }
    const int64_t count =
        stride > 0 ? std::max<int64_t>(0, (stop - first + stride - 1) / stride)
                   : std::max<int64_t>(0, (first - stop - stride - 1) / -stride);
    if (count == 0) return Status::Error("empty slice on axis " + std::to_string(j));
    window.begin.push_back(static_cast<int>(first));
    window.stride.push_back(static_cast<int>(stride));
    window.out_axis.push_back(axis.out_axis);
    counts.push_back(static_cast<int>(count));
  }
  TFG_RETURN_IF_ERROR(CheckWindowDims(counts, window, node.output(0)));
  return window;
}

Status CheckSlice(const NodeView& node, const GraphContext& graph,
                  const DeviceProfile&) {
  const bool strided = node.op() == abi::kTfLiteBuiltinStridedSlice;
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, strided ? 8 : 6));
  TFG_RETURN_IF_ERROR(CheckArity(node, strided ? 4 : 3, strided ? 4 : 3, 1));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  return (strided ? StridedSliceWindow(node, graph) : SliceWindow(node, graph))
      .status();
}

Status BuildWindow(const NodeView& node, GraphBuilder& builder, int input,
                   int output, const Window& window) {
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, input));
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, output));
  TFG_ASSIGN_OR_RETURN(
      kernels::RelayoutSpec spec,
      kernels::SliceSpec(node.input(input).dims->size, window.out_rank,
                         window.begin, window.stride, window.out_axis));
  kernels::EmitRelayout(builder, in, out, spec, node.Describe());
  return Status::Ok();
}

Status BuildSlice(const NodeView& node, GraphBuilder& builder) {
  const bool strided = node.op() == abi::kTfLiteBuiltinStridedSlice;
  TFG_ASSIGN_OR_RETURN(Window window,
                       strided ? StridedSliceWindow(node, builder.graph())
                               : SliceWindow(node, builder.graph()));
  return BuildWindow(node, builder, 0, 0, window);
}

// SPLIT: (axis, data); SPLIT_V: (data, size_splits, axis).
int DataInput(const NodeView& node) {
  return node.op() == abi::kTfLiteBuiltinSplit ? 1 : 0;
}

// The windows of every output of SPLIT / SPLIT_V, from the output dims
// (SPLIT_V's size_splits may hold a -1 that TFLite resolved into them).
StatusOr<std::vector<Window>> SplitWindows(const NodeView& node,
                                           const GraphContext& graph) {
  const bool split_v = node.op() == abi::kTfLiteBuiltinSplitV;
  const int data = DataInput(node);
  TFG_ASSIGN_OR_RETURN(auto axis_values,
                       ConstantIntsOf(node, graph, split_v ? 2 : 0, "axis"));
  if (axis_values.size() != 1) return Status::Error("axis is not a scalar");
  const std::vector<int> in = DimsVector(node.input(data).dims);
  const int rank = static_cast<int>(in.size());
  if (axis_values[0] < -rank || axis_values[0] >= rank) {
    return Status::Error("axis out of range");
  }
  int axis = static_cast<int>(axis_values[0]);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Status::Error("axis out of range");
  // Both params structs are {int num_splits}; the CPU kernels refuse a
  // count that differs from the outputs, so must we.
  const auto* params = node.params<abi::SplitParams>();
  if (params == nullptr) return Status::Error("missing builtin parameters");
  if (params->num_splits != node.num_outputs()) {
    return Status::Error("num_splits " + std::to_string(params->num_splits) +
                         " differs from the " +
                         std::to_string(node.num_outputs()) + " outputs");
  }
  if (!split_v && in[axis] % node.num_outputs() != 0) {
    return Status::Error("the axis does not divide into equal splits");
  }
  if (split_v) {
    TFG_ASSIGN_OR_RETURN(auto sizes,
                         ConstantIntsOf(node, graph, 1, "size_splits"));
    if (static_cast<int>(sizes.size()) != node.num_outputs()) {
      return Status::Error("size_splits does not have one entry per output");
    }
  }
  std::vector<Window> windows;
  int position = 0;
  for (int o = 0; o < node.num_outputs(); ++o) {
    std::vector<int> out = DimsVector(node.output(o).dims);
    if (static_cast<int>(out.size()) != rank) {
      return Status::Error("output rank differs from the input's");
    }
    Window window = IdentityWindow(rank);
    window.begin[axis] = position;
    for (int j = 0; j < rank; ++j) {
      if (j != axis && out[j] != in[j]) {
        return Status::Error("output " + std::to_string(o) +
                             " differs from the input off the split axis");
      }
    }
    if (!split_v && out[axis] != in[axis] / node.num_outputs()) {
      return Status::Error("SPLIT outputs are not equal parts of the input");
    }
    position += out[axis];
    windows.push_back(window);
  }
  if (position != in[axis]) {
    return Status::Error("outputs do not add up to the input along the axis");
  }
  return windows;
}

Status CheckSplit(const NodeView& node, const GraphContext& graph,
                  const DeviceProfile&) {
  const bool split_v = node.op() == abi::kTfLiteBuiltinSplitV;
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, split_v ? 3 : 4));
  if (node.num_inputs() != (split_v ? 3 : 2) || node.num_outputs() < 1) {
    return Status::Error(split_v ? "expected 3 inputs" : "expected 2 inputs");
  }
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  if (graph.IsConstant(node.input_index(DataInput(node)))) {
    return Status::Error("constant data input (fold it offline)");
  }
  return SplitWindows(node, graph).status();
}

Status BuildSplit(const NodeView& node, GraphBuilder& builder) {
  TFG_ASSIGN_OR_RETURN(std::vector<Window> windows,
                       SplitWindows(node, builder.graph()));
  for (int o = 0; o < node.num_outputs(); ++o) {
    TFG_RETURN_IF_ERROR(BuildWindow(node, builder, DataInput(node), o, windows[o]));
  }
  return Status::Ok();
}

}  // namespace

void RegisterSliceKernels(KernelRegistry& registry) {
  registry.AddBuiltin(abi::kTfLiteBuiltinSlice,
                      {"slice", CheckSlice, BuildSlice,
                       "Constant int32/int64 begin and size (-1: to the end), "
                       "any axis including channels.",
                       "Non-constant begin/size; windows outside the input.",
                       6});
  registry.AddBuiltin(
      abi::kTfLiteBuiltinStridedSlice,
      {"strided_slice", CheckSlice, BuildSlice,
       "Constant begin/end/strides, negative indices and strides, "
       "begin/end/shrink/ellipsis/new-axis masks, specs shorter than the rank "
       "(TF's dense-spec expansion).",
       "Two ellipses; offset=true; shrink_axis_mask with a negative stride or "
       "with begin_mask on the same axis (TF and TFLite's kernel differ).",
       8});
  registry.AddBuiltin(abi::kTfLiteBuiltinSplit,
                      {"split", CheckSplit, BuildSplit,
                       "Constant axis; one dispatch per output.",
                       "num_splits that differs from the outputs or does not "
                       "divide the axis; a constant data input.",
                       4});
  registry.AddBuiltin(abi::kTfLiteBuiltinSplitV,
                      {"split_v", CheckSplit, BuildSplit,
                       "Constant axis and size_splits (-1 resolved); one "
                       "dispatch per output.",
                       "num_splits that differs from the outputs; a constant "
                       "data input.",
                       3});
}

}  // namespace tflite_gles
