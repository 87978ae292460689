// PartitionRuntime, textures read and written in place (docs/gpu_io.md,
// "Textures"): a texture bound to an image input or output is read or
// written by the partition's own dispatches, with no float buffer between
// the texture and the tensor:
//  - input, upload conversion fused into the first convolution (NVIDIA):
//    that convolution runs a variant that samples the texture itself
//    (conv2d.comp TEXTURE_INPUT) in place of its staging read;
//  - input, staged (an upload conversion) or direct: one texture_io.comp
//    TEXTURE_TO_TENSOR dispatch writes the PHWC4 tensor, in place of the
//    conversion (or of the host upload);
//  - output: one TENSOR_TO_TEXTURE dispatch writes the texture from the PHWC4
//    tensor; the readback conversion goes unless the interpreter may copy the
//    tensor back (then it still fills the binding's float buffer, beside).
// Before, each direction went texture -> BHWC floats -> tensor (and back):
// two dependent dispatches where one, or none, does (docs/perf/log.md, "tex2").
#include <string>

#include "delegate/runtime/runtime.h"

namespace tflite_gles {

const PartitionRuntime::Transfer* PartitionRuntime::BoundTransfer(const GpuBound& bound) const {
  const auto& list = bound.input ? uploads_ : downloads_;
  for (const Transfer& t : list) {
    if (t.tflite_index == bound.tflite_index && !t.write_back) return &t;
  }
  return nullptr;
}

StatusOr<bool> PartitionRuntime::PlanTextureInPlace(GpuBound& bound, bool skip_conversion,
                                                    ProgramCache& programs) {
  GpuTextureAccess* texture =
      bound.input ? bound.binding.producer->texture() : bound.binding.sink->texture();
  const Transfer* transfer = BoundTransfer(bound);
  if (texture == nullptr || transfer == nullptr) return false;
  // The quantized-input refusal and every other check of PlanBound apply
  // alike; a texture is BHWC float32 by contract (texture_binding.cc).
  if (bound.input && (transfer->quantize || transfer->quantize_tail)) return false;
  const Shape4 shape = transfer->shape;
  if (shape.b != 1 || shape.c < 1 || shape.c > 4) return false;
  const ValueId staging = transfer->buffer;
  auto root_is = [&](ValueId id, ValueId target) {
    return StorageRoot(values_, id) == StorageRoot(values_, target);
  };
  // The conversion between the staging value and the tensor, and the
  // kernel that reads the staging itself (the fused first convolution).
  int conversion = -1;
  int fused_reader = -1;
  if (!transfer->direct) {
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Dispatch& d = steps_[i].dispatch;
      if (d.shader == "layout_convert") {
        if (bound.input && d.defines.count("TO_PHWC4") && !d.inputs.empty() &&
            d.inputs[0] == staging) {
          conversion = static_cast<int>(i);
        }
        if (!bound.input && d.defines.count("TO_BHWC") && !d.outputs.empty() &&
            d.outputs[0] == staging) {
          conversion = static_cast<int>(i);
        }
        continue;
      }
      for (ValueId id : d.inputs) {
        if (bound.input && root_is(id, staging)) {
          const bool fits = d.shader == "conv2d" && d.defines.count("BHWC_INPUT") &&
                            d.defines.count("GENERIC") && d.defines.count("ONE_INPUT_SLICE") &&
                            d.inputs[0] == staging && fused_reader < 0;
          // Another reader of the staging, or a read this code does not
          // know how to replace: keep the float buffer path.
          if (!fits) return false;
          fused_reader = static_cast<int>(i);
        }
      }
    }
  }
  // The tensor's PHWC4 value (one slice: vec4 p is pixel p).
  ValueId tensor = -1;
  if (transfer->direct) {
    tensor = staging;
  } else if (conversion >= 0) {
    const Dispatch& d = steps_[static_cast<size_t>(conversion)].dispatch;
    tensor = bound.input ? d.outputs[0] : d.inputs[0];
  }
  if (bound.input && fused_reader >= 0) {
    if (conversion >= 0) return false;  // both at once: not a plan we made
    const Step& original = steps_[static_cast<size_t>(fused_reader)];
    Dispatch dispatch = original.dispatch;
    dispatch.defines.erase("BHWC_INPUT");
    dispatch.defines["TEXTURE_INPUT"] = "";
    dispatch.label += " (reads the bound texture)";
    // The replacement's shape uniforms are the original's range.
    TFG_ASSIGN_OR_RETURN(Step made, MakeStep(std::move(dispatch), programs, &original));
    auto step = std::make_shared<Step>(std::move(made));
    step->barrier_before = original.barrier_before;
    step->texture = texture;
    step->texture_unit = static_cast<GLuint>(step->dispatch.outputs.size());  // input 0's
    step->texture_input = 0;
    bound.replaced_step = fused_reader;
    bound.replacement = std::move(step);
    bound.in_place = texture;
    return true;
  }
  if (tensor < 0) return false;
  if (!bound.input && device_.texture_output_epilogue) {
    TFG_ASSIGN_OR_RETURN(bool folded, PlanTextureEpilogue(bound, tensor, conversion,
                                                          skip_conversion, programs));
    if (folded) return true;
  }
  Dispatch dispatch;
  dispatch.shader = "texture_io";
  dispatch.defines[bound.input ? "TEXTURE_TO_TENSOR" : "TENSOR_TO_TEXTURE"] = "";
  if (!bound.input) {
    const GLenum format = texture->internal_format();
    if (format == GL_RGBA8) dispatch.defines["IMAGE_RGBA8"] = "";
    if (format == GL_RGBA16F) dispatch.defines["IMAGE_RGBA16F"] = "";
  }
  const long long pixels = static_cast<long long>(shape.h) * shape.w;
  dispatch.defines["W"] = std::to_string(shape.w);
  dispatch.defines["H"] = std::to_string(shape.h);
  dispatch.defines["C"] = std::to_string(shape.c);
  dispatch.defines["TOTAL"] = std::to_string(pixels);
  dispatch.grid = {static_cast<uint32_t>(pixels), 1, 1};
  dispatch.local = {device_.preferred_local_x, 1, 1};
  if (bound.input) {
    dispatch.outputs = {tensor};
  } else {
    dispatch.inputs = {tensor};
  }
  dispatch.label = std::string("bound texture ") + (bound.input ? "-> tensor" : "<- tensor");
  TFG_ASSIGN_OR_RETURN(Step step, MakeStep(std::move(dispatch), programs));
  step.texture = texture;
  // texture_io.comp: the sampler on unit 1, the image on image unit 0.
  step.texture_unit = bound.input ? 1 : 0;
  bound.texture_steps.push_back(std::move(step));
  // The conversion this replaces; an output the interpreter may copy back
  // keeps it (it fills the binding's float buffer, PlanBound).
  if (conversion >= 0 && (bound.input || skip_conversion)) bound.skipped_step = conversion;
  bound.in_place = texture;
  return true;
}

// The output's producer writes the texture in its epilogue (conv2d.comp's
// TEXTURE_INPUT, the other way): one dependent dispatch (and a barrier) less
// per invoke than a TENSOR_TO_TEXTURE dispatch after it. Where: the one step
// that writes the tensor is a kernel with the epilogue (transpose_conv.comp,
// selfie segmentation's last layer), writes it as its first output and as
// its own storage (not a view into a larger value, whose indices would be
// offset), and no other binding replaced that step. It still stores the
// tensor (a readback conversion the interpreter's copy needs reads it).
StatusOr<bool> PartitionRuntime::PlanTextureEpilogue(GpuBound& bound, ValueId tensor,
                                                     int conversion, bool skip_conversion,
                                                     ProgramCache& programs) {
  GpuTextureAccess* texture = bound.binding.sink->texture();
  const ValueId root = StorageRoot(values_, tensor);
  if (root != tensor) return false;
  int producer = -1;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Dispatch& d = steps_[i].dispatch;
    for (const auto* list : {&d.outputs, &d.read_write}) {
      for (ValueId id : *list) {
        if (StorageRoot(values_, id) != root) continue;
        if (producer >= 0) return false;  // written twice (or read-modify-write)
        producer = static_cast<int>(i);
      }
    }
  }
  if (producer < 0) return false;
  const size_t index = static_cast<size_t>(producer);
  if (index < replaced_by_.size() && replaced_by_[index] != nullptr) return false;
  if (skipped(index)) return false;
  const Step& original = steps_[index];
  const Dispatch& d = original.dispatch;
  if (d.shader != "transpose_conv" || d.outputs.empty() || d.outputs[0] != tensor ||
      !d.read_write.empty() || d.defines.count("TEXTURE_OUTPUT")) {
    return false;
  }
  Dispatch dispatch = d;
  const Shape4 shape = bound.ref.shape;
  // Image unit 1: out0 holds unit 0 where tensors are RGBA textures; the
  // inputs are samplers or buffers, other binding points.
  const GLuint unit = 1;
  dispatch.defines["TEXTURE_OUTPUT"] = "";
  dispatch.defines["TEXTURE_OUT_UNIT"] = std::to_string(unit);
  dispatch.defines["TEXTURE_OUT_W"] = std::to_string(shape.w);
  dispatch.defines["TEXTURE_OUT_C"] = std::to_string(shape.c);
  const GLenum format = texture->internal_format();
  dispatch.defines["TEXTURE_OUT_FORMAT"] =
      format == GL_RGBA8 ? "1" : format == GL_RGBA16F ? "2" : "0";
  dispatch.label += " (writes the bound texture)";
  TFG_ASSIGN_OR_RETURN(Step made, MakeStep(std::move(dispatch), programs, &original));
  auto step = std::make_shared<Step>(std::move(made));
  step->barrier_before = original.barrier_before;
  step->texture = texture;
  step->texture_unit = unit;
  bound.replaced_step = producer;
  bound.replacement = std::move(step);
  if (conversion >= 0 && skip_conversion) bound.skipped_step = conversion;
  bound.in_place = texture;
  return true;
}

}  // namespace tflite_gles
