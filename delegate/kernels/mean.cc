// MEAN over any of the height, width and channel axes (constant int32 axis
// tensor, negative axes allowed, keep_dims either way): shaders/mean.comp.
// A reduction over batch is declined unless the batch is 1 (then it changes
// nothing but the output's rank).
#include <set>
#include <string>
#include <vector>

#include "delegate/kernels/mean.h"

#include "delegate/kernels/registry.h"
#include "delegate/kernels/common.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckConstantInput;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

enum Dim { kBatch, kHeight, kWidth, kChannels };

// Which BHWC dimension each TFLite axis of a rank-`rank` tensor is (see the
// rank mapping of Shape4).
std::vector<Dim> DimsOfRank(int rank) {
  switch (rank) {
    case 1: return {kChannels};
    case 2: return {kBatch, kChannels};
    case 3: return {kBatch, kWidth, kChannels};
    case 4: return {kBatch, kHeight, kWidth, kChannels};
    default: return {};
  }
}

struct Reduction {
  std::set<Dim> dims;                // reduced BHWC dimensions
  std::vector<int> expected_output;  // TFLite dims of the result
};

StatusOr<Reduction> ReductionOf(const NodeView& node, const GraphContext& graph) {
  TFG_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       graph.ConstantInts(node.input_index(1)));
  const std::vector<int> in_dims = DimsVector(node.input(0).dims);
  const int rank = static_cast<int>(in_dims.size());
  const std::vector<Dim> dim_of = DimsOfRank(rank);
  const auto* params = node.params<abi::ReducerParams>();
  const bool keep_dims = params != nullptr && params->keep_dims;
  Reduction reduction;
  std::set<int> reduced_axes;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return Status::Error("axis " + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(rank));
    }
    const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
    reduced_axes.insert(a);
    reduction.dims.insert(dim_of[a]);
  }
  for (int a = 0; a < rank; ++a) {
    if (reduced_axes.count(a) == 0) {
      reduction.expected_output.push_back(in_dims[a]);
    } else if (keep_dims) {
      reduction.expected_output.push_back(1);
    }
  }
  return reduction;
}

// One dispatch of shaders/mean.comp: reduces `in` over the flagged axes and
// divides by `count` (1 for a partial sum).
struct MeanPass {
  Shape4 in;
  bool reduce_h = false, reduce_w = false, reduce_c = false;
  long long count = 1;
  bool cooperative = false;  // a workgroup per output vec4 (COOPERATIVE)
};

// A spatial mean over at least this many positions runs as one cooperative
// pass where the device wants workgroup reductions (DeviceProfile::
// workgroup_reductions): 64 invocations share each output.
constexpr long long kCooperativeMinWindow = 256;
constexpr int kCooperativeWorkgroup = 64;  // at least; see CooperativeWorkgroup

// Invocations sharing one output: about 8 window positions each (a serial
// chain of 8 fetches), 64, 256 or 1024 (shaders/mean.comp), within the
// device's workgroup limit.
int CooperativeWorkgroup(long long window, const DeviceProfile& device) {
  const int limit = device.gpu != nullptr ? device.gpu->max_workgroup_invocations : 128;
  int size = kCooperativeWorkgroup;
  for (int bigger : {256, 1024}) {
    if (window >= 8LL * bigger && bigger <= limit) size = bigger;
  }
  return size;
}

// Loop iterations one invocation of `pass` runs (see
// kMaxLoopIterationsPerInvocation): the y loop, the x loop inside it, and
// for channel reductions the slice loop inside the lane loop.
long long LoopIterations(const MeanPass& pass) {
  const long long rows = pass.reduce_h ? pass.in.h : 1;
  const long long columns = pass.reduce_w ? pass.in.w : 1;
  if (pass.cooperative) {
    return (rows * columns + kCooperativeWorkgroup - 1) / kCooperativeWorkgroup + 32;
  }
  const long long window = rows * (columns + 1);
  return pass.reduce_c ? 4 * (pass.in.slices() * (window + 1) + 1) : window;
}

// Above this many iterations per invocation a mean over H and W first sums
// each row in a pass of its own: the work then spreads over H times more
// invocations (2 cores and 8-lane vectors want many), and no invocation
// comes near llvmpipe's loop limit.
constexpr long long kSplitRowsAbove = 1024;

StatusOr<std::vector<MeanPass>> PlanPasses(const Shape4& in,
                                           const std::set<Dim>& dims,
                                           const DeviceProfile& device) {
  MeanPass whole;
  whole.in = in;
  whole.reduce_h = dims.count(kHeight) > 0;
  whole.reduce_w = dims.count(kWidth) > 0;
  whole.reduce_c = dims.count(kChannels) > 0;
  if (whole.reduce_h) whole.count *= in.h;
  if (whole.reduce_w) whole.count *= in.w;
  if (whole.reduce_c) whole.count *= in.c;
  std::vector<MeanPass> passes;
  const long long window =
      (whole.reduce_h ? in.h : 1LL) * (whole.reduce_w ? in.w : 1LL);
  whole.cooperative = device.workgroup_reductions && !whole.reduce_c &&
                      window >= kCooperativeMinWindow;
  if (!whole.cooperative && whole.reduce_h && whole.reduce_w && in.h > 1 &&
      LoopIterations(whole) > kSplitRowsAbove) {
    MeanPass rows;  // row sums: (b, h, 1, c)
    rows.in = in;
    rows.reduce_w = true;
    passes.push_back(rows);
    whole.in.w = 1;
    whole.reduce_w = false;
  }
  passes.push_back(whole);
  for (const MeanPass& pass : passes) {
    if (LoopIterations(pass) > kernels::kMaxLoopIterationsPerInvocation) {
      return Status::Error(
          "a mean over " + std::to_string(whole.count) + " elements of " +
          in.ToString() + " needs " + std::to_string(LoopIterations(pass)) +
          " loop iterations in one invocation, over the limit of " +
          std::to_string(kernels::kMaxLoopIterationsPerInvocation) +
          " (llvmpipe stops longer loops silently)");
    }
  }
  return passes;
}

Status Check(const NodeView& node, const GraphContext& graph,
             const DeviceProfile& device) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, 3));
  TFG_RETURN_IF_ERROR(CheckArity(node, 2, 2, 1));
  TFG_RETURN_IF_ERROR(CheckConstantInput(node, graph, 1, "the axis"));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  TFG_RETURN_IF_ERROR(kernels::CheckNotConstantInput(node, graph, 0));
  if (node.input(1).type != abi::kInt32) {
    return Status::Error(std::string("the axis is ") +
                         TypeName(node.input(1).type) + ", expected int32");
  }
  TFG_ASSIGN_OR_RETURN(Reduction reduction, ReductionOf(node, graph));
  if (reduction.dims.count(kBatch) && ShapeOf(node.input(0)).b != 1) {
    return Status::Error("reduction over the batch axis (batch " +
                         std::to_string(ShapeOf(node.input(0)).b) +
                         ") is not supported: batches are separate planes");
  }
  if (DimsVector(node.output(0).dims) != reduction.expected_output) {
    return Status::Error("output shape " + ShapeOf(node.output(0)).ToString() +
                         " does not match the reduced input");
  }
  return PlanPasses(ShapeOf(node.input(0)), reduction.dims, device).status();
}

// Emits `passes`, the last one writing `out` with the fused activation
// `activation` ("" for none).
Status EmitPasses(const std::string& label, const std::vector<MeanPass>& passes,
                  ValueId in, ValueId out, const std::string& activation,
                  GraphBuilder& builder) {
  for (size_t i = 0; i < passes.size(); ++i) {
    const MeanPass& pass = passes[i];
    const bool last = i + 1 == passes.size();
    // A partial pass keeps every dimension but the reduced width.
    const ValueId target =
        last ? out : builder.NewTemporary({pass.in.b, pass.in.h, 1, pass.in.c});
    const Shape4 out_shape = builder.shape(target);
    Dispatch dispatch =
        kernels::ElementwiseDispatch("mean", out_shape, builder.device());
    dispatch.label = label;
    auto& defines = dispatch.defines;
    if (pass.cooperative) {
      defines["COOPERATIVE"] = "";
      const long long window =
          (pass.reduce_h ? pass.in.h : 1LL) * (pass.reduce_w ? pass.in.w : 1LL);
      const int size = CooperativeWorkgroup(window, builder.device());
      dispatch.grid = {static_cast<uint32_t>(out_shape.vec4_count() * size), 1, 1};
      dispatch.local = {static_cast<uint32_t>(size), 1, 1};
    }
    defines[pass.reduce_c ? "REDUCE_C" : "KEEP_C"] = "";
    if (pass.reduce_h) defines["REDUCE_H"] = "";
    if (pass.reduce_w) defines["REDUCE_W"] = "";
    if (last && !activation.empty()) defines[activation] = "";
    defines["TOTAL"] = std::to_string(out_shape.vec4_count());
    defines["IN_H"] = std::to_string(pass.in.h);
    defines["IN_W"] = std::to_string(pass.in.w);
    defines["IN_S"] = std::to_string(pass.in.slices());
    defines["OUT_H"] = std::to_string(out_shape.h);
    defines["OUT_W"] = std::to_string(out_shape.w);
    defines["OUT_S"] = std::to_string(out_shape.slices());
    defines["OUT_C"] = std::to_string(out_shape.c);
    defines["KEPT_H"] = std::to_string(pass.reduce_h ? 1 : pass.in.h);
    defines["KEPT_W"] = std::to_string(pass.reduce_w ? 1 : pass.in.w);
    defines["COUNT"] = std::to_string(pass.count);
    dispatch.outputs = {target};
    dispatch.inputs = {in};
    dispatch.flops = pass.in.elements();
    builder.AddDispatch(std::move(dispatch));
    in = target;
  }
  return Status::Ok();
}

Status Build(const NodeView& node, GraphBuilder& builder) {
  TFG_ASSIGN_OR_RETURN(Reduction reduction, ReductionOf(node, builder.graph()));
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  TFG_ASSIGN_OR_RETURN(std::vector<MeanPass> passes,
                       PlanPasses(builder.shape(in), reduction.dims, builder.device()));
  return EmitPasses(node.Describe(), passes, in, out, "", builder);
}

}  // namespace

namespace kernels {

Status CheckSpatialMean(const Shape4& in) {
  // Without workgroup reductions: the plan with the longest loops, so what
  // passes here passes on every device.
  return PlanPasses(in, {kHeight, kWidth}, DeviceProfile()).status();
}

Status BuildSpatialMean(const std::string& label, ValueId in, ValueId out,
                        const std::string& activation, GraphBuilder& builder) {
  TFG_ASSIGN_OR_RETURN(std::vector<MeanPass> passes,
                       PlanPasses(builder.shape(in), {kHeight, kWidth}, builder.device()));
  return EmitPasses(label, passes, in, out, activation, builder);
}

}  // namespace kernels

void RegisterMeanKernels(KernelRegistry& registry) {
  registry.AddBuiltin(
      abi::kTfLiteBuiltinMean,
      {"mean", Check, Build,
       "Over any of the height, width and channel axes (constant int32 "
       "axes, negative ones allowed, keep_dims either way), in one or more "
       "passes (large windows shared by a workgroup); over the batch axis "
       "only when the batch is 1.",
       "a reduction over a batch > 1; non-constant or non-int32 axes; a "
       "constant input; an output shape that is not the reduced input's; "
       "newer versions",
       3});
}

}  // namespace tflite_gles
