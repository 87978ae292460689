// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (align_corners,
// half_pixel_centers; the size is a constant int32 input):
// shaders/resize.comp.
#include <string>
#include <vector>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/common.h"

namespace tflite_gles {
namespace {

using kernels::CheckArity;
using kernels::CheckConstantInput;
using kernels::CheckFloatTensors;
using kernels::ShapeOf;

struct ResizeFlags {
  bool align_corners = false;
  bool half_pixel_centers = false;
};

// Both params structs are {align_corners, half_pixel_centers}, but each is
// read through its own type.
StatusOr<ResizeFlags> FlagsOf(const NodeView& node) {
  ResizeFlags flags;
  if (node.op() == abi::kTfLiteBuiltinResizeBilinear) {
    const auto* params = node.params<abi::ResizeBilinearParams>();
    if (params == nullptr) return Status::Error("missing builtin parameters");
    flags.align_corners = params->align_corners;
    flags.half_pixel_centers = params->half_pixel_centers;
  } else {
    const auto* params = node.params<abi::ResizeNearestNeighborParams>();
    if (params == nullptr) return Status::Error("missing builtin parameters");
    flags.align_corners = params->align_corners;
    flags.half_pixel_centers = params->half_pixel_centers;
  }
  return flags;
}

// Source pixels per output pixel along one axis, in float as TFLite computes
// it (the shader must see the very same value).
float Scale(int in, int out, bool align_corners) {
  return align_corners && out > 1
             ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
             : static_cast<float>(in) / static_cast<float>(out);
}

Status Check(const NodeView& node, const GraphContext& graph,
             const DeviceProfile& device) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, 4));
  TFG_RETURN_IF_ERROR(CheckArity(node, 2, 2, 1));
  TFG_RETURN_IF_ERROR(CheckConstantInput(node, graph, 1, "the size"));
  TFG_RETURN_IF_ERROR(CheckFloatTensors(node, graph));
  TFG_RETURN_IF_ERROR(kernels::CheckNotConstantInput(node, graph, 0));
  if (node.input(0).dims->size != 4) {
    return Status::Error("input rank " + std::to_string(node.input(0).dims->size) +
                         ", resizing needs 4");
  }
  if (node.input(1).type != abi::kInt32) {
    return Status::Error(std::string("the size is ") +
                         TypeName(node.input(1).type) + ", expected int32");
  }
  TFG_ASSIGN_OR_RETURN(ResizeFlags flags, FlagsOf(node));
  // TFLite's bilinear kernel refuses this pair (the nearest one accepts it).
  if (node.op() == abi::kTfLiteBuiltinResizeBilinear && flags.align_corners &&
      flags.half_pixel_centers) {
    return Status::Error(
        "align_corners and half_pixel_centers together (TFLite rejects it)");
  }
  TFG_ASSIGN_OR_RETURN(std::vector<int64_t> size,
                       graph.ConstantInts(node.input_index(1)));
  if (size.size() != 2 || size[0] < 1 || size[1] < 1 || size[0] > (1 << 24) ||
      size[1] > (1 << 24)) {
    return Status::Error("the size must be two values in 1..2^24");
  }
  Shape4 expected = ShapeOf(node.input(0));
  expected.h = static_cast<int>(size[0]);
  expected.w = static_cast<int>(size[1]);
  if (ShapeOf(node.output(0)) != expected) {
    return Status::Error("output shape " + ShapeOf(node.output(0)).ToString() +
                         " is not the requested " + expected.ToString());
  }
  return Status::Ok();
}

Status Build(const NodeView& node, GraphBuilder& builder) {
  const bool bilinear = node.op() == abi::kTfLiteBuiltinResizeBilinear;
  TFG_ASSIGN_OR_RETURN(ResizeFlags flags, FlagsOf(node));
  TFG_ASSIGN_OR_RETURN(ValueId in, builder.Input(node, 0));
  const Shape4 in_shape = builder.shape(in);
  // To the input's own size the scale is exactly 1 under every rule, so a
  // bilinear source is the output pixel itself (weights 1, 0, 0, 0), and a
  // nearest one too, except with align_corners and half_pixel_centers
  // together, which rounds o + 0.5 up to the next pixel. Then the output
  // is the input: a view, no dispatch (DeepLab's 33 -> 33 resize).
  if (builder.device().identity_resize_view &&
      ShapeOf(node.output(0)) == in_shape &&
      (bilinear || !(flags.align_corners && flags.half_pixel_centers))) {
    return builder.Alias(node.output_index(0), builder.NewView(in, in_shape));
  }
  TFG_ASSIGN_OR_RETURN(ValueId out, builder.Output(node, 0));
  const Shape4 out_shape = builder.shape(out);

  Dispatch dispatch =
      kernels::ElementwiseDispatch("resize", out_shape, builder.device());
  dispatch.label = node.Describe();
  auto& defines = dispatch.defines;
  defines[bilinear ? "BILINEAR" : "NEAREST"] = "";
  // Bilinear sampling uses align_corners only through the scale.
  if (!bilinear && flags.align_corners) defines["ALIGN_CORNERS"] = "";
  if (flags.half_pixel_centers) defines["HALF_PIXEL"] = "";
  defines["TOTAL"] = std::to_string(out_shape.vec4_count());
  defines["IN_H"] = std::to_string(in_shape.h);
  defines["IN_W"] = std::to_string(in_shape.w);
  defines["OUT_H"] = std::to_string(out_shape.h);
  defines["OUT_W"] = std::to_string(out_shape.w);
  defines["OUT_S"] = std::to_string(out_shape.slices());
  defines["OUT_C"] = std::to_string(out_shape.c);
  defines["SCALE_H"] = kernels::FloatLiteral(
      Scale(in_shape.h, out_shape.h, flags.align_corners));
  defines["SCALE_W"] = kernels::FloatLiteral(
      Scale(in_shape.w, out_shape.w, flags.align_corners));
  dispatch.outputs = {out};
  dispatch.inputs = {in};
  dispatch.flops = out_shape.elements() * (bilinear ? 8 : 0);
  builder.AddDispatch(std::move(dispatch));
  return Status::Ok();
}

}  // namespace

void RegisterResizeKernels(KernelRegistry& registry) {
  registry.AddBuiltin(
      abi::kTfLiteBuiltinResizeBilinear,
      {"resize", Check, Build,
       "A 4-D input to a constant int32 size, with align_corners or "
       "half_pixel_centers; source coordinates computed in float as "
       "TFLite's kernel does.",
       "align_corners with half_pixel_centers (TFLite refuses the pair); a "
       "size that is not a constant int32 pair in 1..2^24; non-4-D or "
       "constant inputs; an output shape other than the requested size; "
       "newer versions",
       4});
  registry.AddBuiltin(
      abi::kTfLiteBuiltinResizeNearestNeighbor,
      {"resize", Check, Build,
       "A 4-D input to a constant int32 size, with align_corners and/or "
       "half_pixel_centers; source pixels chosen in float as TFLite's "
       "kernel does.",
       "a size that is not a constant int32 pair in 1..2^24; non-4-D or "
       "constant inputs; an output shape other than the requested size; "
       "newer versions",
       4});
}

}  // namespace tflite_gles
