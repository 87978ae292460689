#include "delegate/graph/node_checks.h"

#include <string>

#include "delegate/graph/tensor_checks.h"

namespace tflite_gles {
namespace {

// A tensor as the runtime stores it: PHWC4 vec4s (fp16 packs a vec4 in 8
// bytes) and, at partition boundaries, a BHWC float staging buffer read as
// R32F texels and written as an SSBO.
Status CheckTensorFits(const abi::Tensor& tensor, const DeviceProfile& device,
                       const std::string& role) {
  auto shape = ShapeFromDims(tensor.dims);
  if (!shape.ok()) return Status::Ok();  // the kernel's check says why
  if (device.gpu == nullptr) return Status::Ok();
  const egl::GpuInfo& gpu = *device.gpu;
  const long long vec4_bytes = device.fp16 ? 8 : 16;
  const long long tensor_bytes = shape->vec4_count() * vec4_bytes;
  const long long staging_bytes = shape->elements() * 4;
  const long long largest = tensor_bytes > staging_bytes ? tensor_bytes : staging_bytes;
  if (gpu.max_ssbo_bytes > 0 && largest > gpu.max_ssbo_bytes) {
    return Status::Error(role + " " + shape->ToString() + " needs " +
                         std::to_string(largest) +
                         " bytes of storage; GL_MAX_SHADER_STORAGE_BLOCK_SIZE is " +
                         std::to_string(gpu.max_ssbo_bytes));
  }
  if (device.texture_buffer_reads && gpu.max_texture_buffer_texels > 0 &&
      shape->elements() > gpu.max_texture_buffer_texels) {
    return Status::Error(role + " " + shape->ToString() + " needs " +
                         std::to_string(shape->elements()) +
                         " texels; GL_MAX_TEXTURE_BUFFER_SIZE is " +
                         std::to_string(gpu.max_texture_buffer_texels));
  }
  return Status::Ok();
}

}  // namespace

Status CheckNodeForDevice(const NodeView& node, const GraphContext& graph,
                          const DeviceProfile& device) {
  // First: the tensor indices below are only valid once this passed.
  TFG_RETURN_IF_ERROR(CheckNodeTensors(node, graph));
  for (int o = 0; o < node.num_outputs(); ++o) {
    for (int i = 0; i < node.num_inputs(); ++i) {
      if (node.output_index(o) == node.input_index(i)) {
        return Status::Error("output " + std::to_string(o) + " is also input " +
                             std::to_string(i) + " (an in-place op)");
      }
    }
  }
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i) || graph.IsConstant(node.input_index(i))) continue;
    TFG_RETURN_IF_ERROR(
        CheckTensorFits(node.input(i), device, "input " + std::to_string(i)));
  }
  for (int o = 0; o < node.num_outputs(); ++o) {
    TFG_RETURN_IF_ERROR(
        CheckTensorFits(node.output(o), device, "output " + std::to_string(o)));
  }
  return Status::Ok();
}

}  // namespace tflite_gles
