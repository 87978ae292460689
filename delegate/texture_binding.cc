// GlesDelegate, texture bindings (docs/gpu_io.md, "Textures"): an
// application's 2D texture bound to a partition's image input or output is
// a GPU binding (delegate/gpu_io.cc) whose producer or sink the partition's
// own dispatches read or write in place (delegate/runtime/texture_io.h,
// runtime_texture_io.cc). Every refusal is an error with a message,
// remembered for LastError(), with nothing changed.
#include <cstdint>
#include <string>

#include "delegate/delegate.h"
#include "delegate/runtime/texture_io.h"

namespace tflite_gles {

Status GlesDelegate::BindTexture(int tensor_index, const TextureParams& params, bool output,
                                 uint32_t flags) {
  bool is_output = false;
  Shape4 shape;
  // Applied yet, this thread and context, the index, a partition's
  // input or output: as for buffers.
  TFG_RETURN_IF_ERROR(CheckBindable(tensor_index, &is_output, &shape, /*need_current=*/true));
  const char* name = context_->tensors[tensor_index].name;
  const std::string what = std::string(output ? "output" : "input") + " tensor " +
                           std::to_string(tensor_index) +
                           (name ? " ('" + std::string(name) + "')" : std::string());
  if (is_output != output) {
    return ApiError("tensor " + std::to_string(tensor_index) + " is a GPU partition's " +
                    (is_output ? "output" : "input") + ", not its " +
                    (output ? "output" : "input") + ": bind it with TfLiteGlesDelegateBind" +
                    (is_output ? "Output" : "Input") + "Texture");
  }
  GpuBinding binding;
  binding.layout = GpuLayout::kBhwcFloat32;
  if (output) {
    auto sink = MakeTextureSink(params, shape, what, *programs_);
    if (!sink.ok()) return ApiError(sink.status().message());
    binding.sink = *sink;
  } else {
    auto producer = MakeTextureProducer(params, shape, what, *programs_);
    if (!producer.ok()) return ApiError(producer.status().message());
    binding.producer = *producer;
  }
  return BindGpu(tensor_index, std::move(binding), flags);
}

int GlesDelegate::TensorIndex(const void* tensor) const {
  // Partitions alive: the interpreter (and so context_) is too.
  if (context_ == nullptr || tensor == nullptr || runtimes_.empty()) return -1;
  // Interpreter tensors are the elements of the context's array; compared
  // as addresses, never dereferenced.
  const auto address = reinterpret_cast<uintptr_t>(tensor);
  const auto first = reinterpret_cast<uintptr_t>(context_->tensors);
  const size_t bytes = sizeof(abi::Tensor);
  if (address < first || (address - first) % bytes != 0) return -1;
  const size_t index = (address - first) / bytes;
  return index < context_->tensors_size ? static_cast<int>(index) : -1;
}

}  // namespace tflite_gles
