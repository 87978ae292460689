#include "delegate/kernels/layout_common.h"

#include <algorithm>

namespace tflite_gles::kernels {
namespace {

std::string Ivec4(const Int4& v) {
  return "ivec4(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," +
         std::to_string(v[2]) + "," + std::to_string(v[3]) + ")";
}

// concat.comp binds at most this many inputs per dispatch (texture units);
// fewer where the device allows fewer buffers per dispatch (one is the output).
constexpr int kMaxConcatInputs = 8;

}  // namespace

StatusOr<int> Shape4Axis(int rank, int axis) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    return Status::Error("axis " + std::to_string(axis) +
                         " is out of range for rank " + std::to_string(rank));
  }
  static constexpr int kAxes[5][4] = {
      {}, {3}, {0, 3}, {0, 2, 3}, {0, 1, 2, 3}};
  if (rank > 4) return Status::Error("rank " + std::to_string(rank) + " > 4");
  return kAxes[rank][axis];
}

Int4 DimsOf(const Shape4& shape) { return {shape.b, shape.h, shape.w, shape.c}; }

StatusOr<std::vector<int64_t>> ConstantIntsOf(const NodeView& node,
                                              const GraphContext& graph, int i,
                                              const char* what) {
  TFG_RETURN_IF_ERROR(CheckConstantInput(node, graph, i, what));
  auto values = graph.ConstantInts(node.input_index(i));
  if (!values.ok()) return values.status().WithContext(what);
  return values;
}

StatusOr<RelayoutSpec> SliceSpec(int in_rank, int out_rank,
                                 const std::vector<int>& begin,
                                 const std::vector<int>& stride,
                                 const std::vector<int>& out_axis) {
  RelayoutSpec spec;
  // Input axes the TFLite tensor does not have are size 1: always read 0.
  spec.begin = {0, 0, 0, 0};
  spec.stride = {0, 0, 0, 0};
  for (int j = 0; j < in_rank; ++j) {
    TFG_ASSIGN_OR_RETURN(int k, Shape4Axis(in_rank, j));
    spec.begin[k] = begin[j];
    if (out_axis[j] < 0) continue;
    TFG_ASSIGN_OR_RETURN(spec.src_axis[k], Shape4Axis(out_rank, out_axis[j]));
    spec.stride[k] = stride[j];
  }
  return spec;
}

void EmitRelayout(GraphBuilder& builder, ValueId in, ValueId out,
                  const RelayoutSpec& spec, const std::string& label) {
  const Shape4 in_shape = builder.shape(in);
  const Shape4 out_shape = builder.shape(out);
  Dispatch dispatch =
      ElementwiseDispatch("relayout", out_shape, builder.device());
  dispatch.label = label;
  dispatch.outputs = {out};
  dispatch.inputs = {in};
  auto& defines = dispatch.defines;
  defines["TOTAL"] = std::to_string(out_shape.vec4_count());
  AddShapeDefines("OUT", out_shape, defines);
  AddShapeDefines("IN", in_shape, defines);
  using Mode = RelayoutSpec::Mode;
  using Pad = RelayoutSpec::Pad;
  switch (spec.mode) {
    case Mode::kAffine: {
      defines["MODE_AFFINE"] = "";
      Int4 src = spec.src_axis;
      // An axis with stride 0 ignores its source; point it at axis 0 so
      // equal programs are shared.
      for (int k = 0; k < 4; ++k) {
        if (spec.stride[k] == 0) src[k] = 0;
      }
      defines["SRC_AXIS"] = Ivec4(src);
      defines["BEGIN"] = Ivec4(spec.begin);
      defines["STRIDE"] = Ivec4(spec.stride);
      // Channels straight through from a slice boundary, never reading past
      // the input's channels: whole vec4s move.
      const int c0 = spec.begin[3];
      if (src[3] == 3 && spec.stride[3] == 1 && c0 % 4 == 0 && c0 >= 0 &&
          c0 + out_shape.c <= in_shape.c) {
        defines["VEC4_COPY"] = "";
      }
      break;
    }
    case Mode::kFlat:
      defines["MODE_FLAT"] = "";
      break;
    case Mode::kDepthToSpace:
      defines["MODE_DEPTH_TO_SPACE"] = "";
      defines["BLOCK"] = std::to_string(spec.block);
      break;
    case Mode::kSpaceToDepth:
      defines["MODE_SPACE_TO_DEPTH"] = "";
      defines["BLOCK"] = std::to_string(spec.block);
      break;
  }
  switch (spec.pad) {
    case Pad::kNone:
      break;
    case Pad::kConstant:
      defines["PAD_CONSTANT"] = "";
      defines["PAD_VALUE"] = FloatLiteral(spec.pad_value);
      break;
    case Pad::kReflect:
      defines["PAD_REFLECT"] = "";
      break;
    case Pad::kSymmetric:
      defines["PAD_SYMMETRIC"] = "";
      break;
  }
  builder.AddDispatch(std::move(dispatch));
}

void EmitConcat(GraphBuilder& builder, const std::vector<ValueId>& inputs,
                int axis4, ValueId out, const std::string& activation,
                const std::string& label) {
  const Shape4 out_shape = builder.shape(out);
  // Where each input starts and how far it spans along the axis, in the
  // units concat.comp indexes (channels in lanes mode, else whole units).
  bool lanes = false;
  if (axis4 == 3) {
    for (size_t k = 0; k + 1 < inputs.size(); ++k) {
      if (builder.shape(inputs[k]).c % 4 != 0) lanes = true;
    }
  }
  std::vector<int> offset, length;
  int position = 0;
  for (ValueId input : inputs) {
    const Shape4 shape = builder.shape(input);
    int span = DimsOf(shape)[axis4];
    if (axis4 == 3 && !lanes) span = shape.slices();
    offset.push_back(position);
    length.push_back(span);
    position += span;
  }
  // Output units along the axis: slices for channels, else the dimension.
  const int units = axis4 == 3 ? out_shape.slices() : DimsOf(out_shape)[axis4];
  // Inputs overlapping unit u (a contiguous range): in lanes mode a slice
  // may hold channels of up to 4 inputs.
  auto first_input = [&](int u) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      const int last = lanes ? (offset[k] + length[k] - 1) / 4
                             : offset[k] + length[k] - 1;
      if (length[k] > 0 && last >= u) return static_cast<int>(k);
    }
    return static_cast<int>(inputs.size()) - 1;
  };
  auto last_input = [&](int u) {
    for (int k = static_cast<int>(inputs.size()) - 1; k >= 0; --k) {
      const int first = lanes ? offset[k] / 4 : offset[k];
      if (length[k] > 0 && first <= u) return k;
    }
    return 0;
  };
  const char* axis_define = axis4 == 0   ? "AXIS_B"
                            : axis4 == 1 ? "AXIS_H"
                            : axis4 == 2 ? "AXIS_W"
                            : lanes      ? "AXIS_C_LANES"
                                         : "AXIS_C_SLICES";
  // Disjoint unit ranges, each reading at most max_inputs inputs.
  const int max_inputs =
      std::max(2, std::min(kMaxConcatInputs, builder.device().max_dispatch_buffers - 1));
  // In lanes mode one output slice may hold channels of up to 4 inputs,
  // more than a dispatch may bind on a GPU with 4 SSBOs per shader (3 inputs
  // and the output). Then the first max_inputs inputs are joined into a
  // temporary first, which replaces them: each step binds at most
  // max_inputs inputs, and the activation applies once, at the last.
  for (int u = 0; u < units; ++u) {
    if (last_input(u) - first_input(u) + 1 <= max_inputs) continue;
    Shape4 joined = out_shape;
    joined.c = 0;
    for (int k = 0; k < max_inputs; ++k) joined.c += builder.shape(inputs[k]).c;
    const ValueId temporary = builder.NewTemporary(joined);
    const std::vector<ValueId> head(inputs.begin(), inputs.begin() + max_inputs);
    EmitConcat(builder, head, axis4, temporary, "", label);
    std::vector<ValueId> rest = {temporary};
    rest.insert(rest.end(), inputs.begin() + max_inputs, inputs.end());
    EmitConcat(builder, rest, axis4, out, activation, label);
    return;
  }
  int begin = 0;
  while (begin < units) {
    const int k_first = first_input(begin);
    int end = begin + 1;
    while (end < units && last_input(end) - k_first + 1 <= max_inputs) {
      ++end;
    }
    const int k_last = last_input(end - 1);
    Shape4 range = out_shape;
    const int count = end - begin;
    switch (axis4) {
      case 0: range.b = count; break;
      case 1: range.h = count; break;
      case 2: range.w = count; break;
      default: range.c = count * 4; break;
    }
    Dispatch dispatch = ElementwiseDispatch("concat", range, builder.device());
    dispatch.label = label;
    dispatch.outputs = {out};
    auto& defines = dispatch.defines;
    defines[axis_define] = "";
    if (!activation.empty()) defines[activation] = "";
    defines["TOTAL"] = std::to_string(range.vec4_count());
    defines["UNIT_BEGIN"] = std::to_string(begin);
    defines["UNIT_COUNT"] = std::to_string(count);
    AddShapeDefines("OUT", out_shape, defines);
    defines["NUM_INPUTS"] = std::to_string(k_last - k_first + 1);
    for (int k = k_first; k <= k_last; ++k) {
      const std::string n = std::to_string(k - k_first);
      defines["OFF" + n] = std::to_string(offset[k]);
      defines["LEN" + n] = std::to_string(length[k]);
      dispatch.inputs.push_back(inputs[k]);
    }
    builder.AddDispatch(std::move(dispatch));
    begin = end;
  }
}

}  // namespace tflite_gles::kernels
