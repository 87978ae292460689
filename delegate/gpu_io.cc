// GlesDelegate, GPU bindings: the checks of TfLiteGlesDelegateBindBuffer and
// friends, the bookkeeping across partitions, and TfLiteDelegate's
// buffer-handle callbacks (CopyFromBufferHandle, CopyToBufferHandle,
// FreeBufferHandle) through which the interpreter copies a bound output back
// on its own rules (docs/gpu_io.md). The GPU side is
// delegate/runtime/runtime_gpu_io.cc.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "delegate/delegate.h"
#include "delegate/graph/quantization.h"
#include "delegate/runtime/transfer_layout.h"
#include "egl/foreign_buffer.h"

namespace tflite_gles {

namespace {

std::string TensorName(const abi::Context* context, int index) {
  const char* name = context->tensors[index].name;
  return "tensor " + std::to_string(index) + (name ? " ('" + std::string(name) + "')" : "");
}

// BHWC floats of `shape` from a float32 buffer in `layout`, or into it.
void FromLayout(const float* stored, GpuLayout layout, const Shape4& shape, float* bhwc) {
  if (layout == GpuLayout::kBhwcFloat32) {
    std::memcpy(bhwc, stored, static_cast<size_t>(shape.elements()) * sizeof(float));
    return;
  }
  const int slices = shape.slices();
  for (int b = 0; b < shape.b; ++b) {
    for (int s = 0; s < slices; ++s) {
      for (int h = 0; h < shape.h; ++h) {
        for (int w = 0; w < shape.w; ++w) {
          const float* v = stored + 4 * (((static_cast<size_t>(b) * slices + s) * shape.h + h) *
                                             shape.w + w);
          for (int k = 0; k < 4 && s * 4 + k < shape.c; ++k) {
            bhwc[((static_cast<size_t>(b) * shape.h + h) * shape.w + w) * shape.c + s * 4 + k] =
                v[k];
          }
        }
      }
    }
  }
}

// A TFLite tensor's values as floats (its float view), or the reverse.
Status TensorToFloats(const abi::Tensor& tensor, size_t elements, float* out) {
  if (IsQuantizedType(tensor.type)) return DequantizeTensor(tensor, elements, out);
  for (size_t i = 0; i < elements; ++i) {
    switch (tensor.type) {
      case abi::kFloat32: out[i] = static_cast<const float*>(tensor.data)[i]; break;
      case abi::kInt32: out[i] = static_cast<float>(static_cast<const int32_t*>(tensor.data)[i]); break;
      case abi::kBool: out[i] = static_cast<const uint8_t*>(tensor.data)[i] ? 1.0f : 0.0f; break;
      default: return Status::Error("tensor type " + std::string(TypeName(tensor.type)) +
                                    " has no float view");
    }
  }
  return Status::Ok();
}

Status FloatsToTensor(const float* values, size_t elements, abi::Tensor& tensor) {
  if (IsQuantizedType(tensor.type)) return QuantizeTensor(values, elements, tensor);
  for (size_t i = 0; i < elements; ++i) {
    const float v = values[i];
    switch (tensor.type) {
      case abi::kFloat32: static_cast<float*>(tensor.data)[i] = v; break;
      case abi::kBool: static_cast<uint8_t*>(tensor.data)[i] = v != 0.0f ? 1 : 0; break;
      case abi::kInt32: {
        const float bounded =
            std::isnan(v) ? 0.0f : std::min(std::max(v, -2147483648.0f), 2147483520.0f);
        static_cast<int32_t*>(tensor.data)[i] = static_cast<int32_t>(std::lrint(bounded));
        break;
      }
      default: return Status::Error("tensor type " + std::string(TypeName(tensor.type)) +
                                    " has no float view");
    }
  }
  return Status::Ok();
}

}  // namespace

Status GlesDelegate::ApiError(const std::string& message) {
  last_error_ = "tflite-gles: " + message;
  return Status::Error(last_error_);
}

Status GlesDelegate::CheckBindable(int tensor_index, bool* output, Shape4* shape,
                                   bool need_current) {
  if (!env_ || context_ == nullptr || runtimes_.empty()) {
    return ApiError(
        "no GPU partition to bind to: bind after ModifyGraphWithDelegate has "
        "applied this delegate with nodes on the GPU");
  }
  const EGLContext current = gl::CurrentContext();
  if (need_current && current != env_->context()) {
    char text[160];
    std::snprintf(text, sizeof(text),
                  "the delegate's EGLContext %p is not current on this thread (%p is): "
                  "bind and unbind on the thread that runs Invoke, with that context current",
                  env_->context(), current);
    return ApiError(text);
  }
  if (tensor_index < 0 || static_cast<size_t>(tensor_index) >= context_->tensors_size) {
    return ApiError("unknown tensor index " + std::to_string(tensor_index) + " (the graph has " +
                    std::to_string(context_->tensors_size) + " tensors)");
  }
  bool input = false, out = false;
  for (const auto& [id, runtime] : runtimes_) {
    if (runtime->HasInput(tensor_index)) {
      input = true;
      *shape = runtime->TransferShape(tensor_index);
    }
    if (runtime->HasOutput(tensor_index)) {
      out = true;
      *shape = runtime->TransferShape(tensor_index);
    }
  }
  if (!input && !out) {
    return ApiError(TensorName(context_, tensor_index) +
                    " is not an input or output of a GPU partition (it is inside one, "
                    "runs on the CPU or is a constant): only tensors that cross between "
                    "the CPU and the GPU can be bound");
  }
  if (input && out) {
    // One partition's output feeding another's input: both sides would
    // need the buffer at once, and nothing copies between them.
    return ApiError(TensorName(context_, tensor_index) +
                    " is both a GPU partition's output and another's input; bind the "
                    "model's inputs and outputs instead");
  }
  *output = out;
  return Status::Ok();
}

StatusOr<size_t> GlesDelegate::BoundBufferBytes(int tensor_index, int layout) {
  bool output = false;
  Shape4 shape;
  // Only a size: no GL work, any thread.
  TFG_RETURN_IF_ERROR(CheckBindable(tensor_index, &output, &shape, /*need_current=*/false));
  if (layout != 0 && layout != 1) {
    return ApiError("unknown buffer layout " + std::to_string(layout));
  }
  return GpuLayoutBytes(static_cast<GpuLayout>(layout), shape);
}

Status GlesDelegate::BindBuffer(int tensor_index, GLuint buffer, int layout, uint32_t flags) {
  if (layout != 0 && layout != 1) {
    return ApiError("unknown buffer layout " + std::to_string(layout) +
                    " (0: BHWC float32, 1: PHWC4 float32)");
  }
  GpuBinding binding;
  binding.layout = static_cast<GpuLayout>(layout);
  binding.buffer = buffer;
  if (buffer == 0) return ApiError("buffer 0 is no buffer object");
  return BindGpu(tensor_index, std::move(binding), flags);
}

Status GlesDelegate::BindGpu(int tensor_index, GpuBinding binding, uint32_t flags) {
  bool output = false;
  Shape4 shape;
  TFG_RETURN_IF_ERROR(CheckBindable(tensor_index, &output, &shape, /*need_current=*/true));
  if ((flags & ~TFLITE_GLES_BIND_NO_HOST_COPY) != 0) {
    return ApiError("unknown bind flags " + std::to_string(flags));
  }
  if (binding.buffer != 0) {
    // A name this context does not know: deleted, never made, or made in a
    // context that shares no objects with this one. (Such a context's name
    // may also happen to name one of ours: that is refused below.)
    if (!gl::IsBufferObject(binding.buffer)) {
      return ApiError("GL name " + std::to_string(binding.buffer) +
                      " is not a buffer object in the delegate's EGLContext (deleted, never "
                      "bound, or made in a context that shares no objects with it)");
    }
    // The context's witness (egl/context_identity.h) is ours too.
    bool ours = identity_ && identity_->witness() == binding.buffer;
    for (const auto& [id, runtime] : runtimes_) ours = ours || runtime->OwnsBuffer(binding.buffer);
    if (ours) {
      return ApiError("buffer " + std::to_string(binding.buffer) +
                      " is one of the delegate's own buffers, not the application's "
                      "(a name from a context that shares no objects with the "
                      "delegate's?)");
    }
    TFG_ASSIGN_OR_RETURN(binding.bytes, gl::BufferObjectSize(binding.buffer));
    const size_t needed = GpuLayoutBytes(binding.layout, shape);
    if (binding.bytes != needed) {
      return ApiError("buffer " + std::to_string(binding.buffer) + " holds " +
                      std::to_string(binding.bytes) + " bytes; " +
                      TensorName(context_, tensor_index) + " (" + std::to_string(shape.b) +
                      "x" + std::to_string(shape.h) + "x" + std::to_string(shape.w) + "x" +
                      std::to_string(shape.c) + ") in " + GpuLayoutName(binding.layout) +
                      " needs " + std::to_string(needed));
    }
  }
  if (bound_.count(tensor_index)) TFG_RETURN_IF_ERROR(Unbind(tensor_index));
  // A sink written in place keeps a float buffer only for the interpreter's
  // copy back (runtime_texture_io.cc).
  binding.host_copy = output && (flags & TFLITE_GLES_BIND_NO_HOST_COPY) == 0;
  BoundTensor bound;
  bound.output = output;
  bound.flags = flags;
  bound.shape = shape;
  bound.binding = binding;
  for (auto& [id, runtime] : runtimes_) {
    if (!(output ? runtime->HasOutput(tensor_index) : runtime->HasInput(tensor_index))) {
      continue;
    }
    Status status = runtime->BindGpu(tensor_index, binding, *programs_);
    if (!status.ok()) {
      for (int done : bound.partitions) runtimes_[done]->UnbindGpu(tensor_index);
      return ApiError("binding " + TensorName(context_, tensor_index) + " to " +
                      binding.Describe() + ": " + status.message());
    }
    bound.partitions.push_back(id);
    if (bound.ref.buffer == 0) bound.ref = *runtime->GpuRefOf(tensor_index);
  }
  if (output && (flags & TFLITE_GLES_BIND_NO_HOST_COPY) == 0) {
    // The interpreter's rules from here on: a stale tensor with our handle
    // is copied back through CopyFromBufferHandle when it must be readable.
    bound.handle = next_handle_++;
    abi::Tensor& tensor = context_->tensors[tensor_index];
    tensor.buffer_handle = bound.handle;
    tensor.delegate = &delegate_;
    tensor.data_is_stale = false;
  }
  bound_[tensor_index] = std::move(bound);
  return Status::Ok();
}

void GlesDelegate::ClearHandle(const BoundTensor& bound, abi::Context* context) {
  if (bound.handle < 0 || context == nullptr) return;
  for (size_t i = 0; i < context->tensors_size; ++i) {
    abi::Tensor& tensor = context->tensors[i];
    if (tensor.delegate == &delegate_ && tensor.buffer_handle == bound.handle) {
      tensor.buffer_handle = -1;
      tensor.delegate = nullptr;
      tensor.data_is_stale = false;
    }
  }
}

Status GlesDelegate::Unbind(int tensor_index) {
  auto it = bound_.find(tensor_index);
  if (it == bound_.end()) {
    return ApiError("tensor " + std::to_string(tensor_index) + " is not bound");
  }
  if (!env_ || gl::CurrentContext() != env_->context()) {
    return ApiError("the delegate's EGLContext is not current on this thread: unbind on "
                    "the thread that runs Invoke");
  }
  BoundTensor& bound = it->second;
  abi::Tensor& tensor = context_->tensors[tensor_index];
  // The host copy becomes the tensor's truth again: make it current first.
  if (bound.handle >= 0 && tensor.data_is_stale && tensor.buffer_handle == bound.handle) {
    abi::Status copied = GpuIoCallbacks::CopyFromBufferHandle(context_, &delegate_,
                                                              bound.handle, &tensor);
    if (copied != abi::kOk) return ApiError("unbinding: " + last_error_);
  }
  ClearHandle(bound, context_);
  for (int id : bound.partitions) {
    auto runtime = runtimes_.find(id);
    if (runtime != runtimes_.end()) runtime->second->UnbindGpu(tensor_index);
  }
  bound_.erase(it);
  return Status::Ok();
}

void GlesDelegate::DropBindingsOf(int partition_id, abi::Context* context) {
  for (auto it = bound_.begin(); it != bound_.end();) {
    auto& parts = it->second.partitions;
    parts.erase(std::remove(parts.begin(), parts.end(), partition_id), parts.end());
    if (!parts.empty()) {
      ++it;
      continue;
    }
    std::fprintf(stderr,
                 "WARNING: tflite-gles: the GPU binding of tensor %d (%s) ends: its "
                 "partition was freed (the delegate re-applied after a resize, or the "
                 "interpreter destroyed); bind again after ModifyGraphWithDelegate\n",
                 it->first, it->second.binding.Describe().c_str());
    ClearHandle(it->second, context);
    it = bound_.erase(it);
  }
}

void GlesDelegate::MarkBoundOutputsStale(int partition_id, abi::Context* context) {
  for (auto& [index, bound] : bound_) {
    if (!bound.output || bound.handle < 0) continue;
    if (std::find(bound.partitions.begin(), bound.partitions.end(), partition_id) ==
        bound.partitions.end()) {
      continue;
    }
    abi::Tensor& tensor = context->tensors[index];
    if (tensor.buffer_handle == bound.handle && tensor.delegate == &delegate_) {
      tensor.data_is_stale = true;
    }
  }
}

GlesDelegate::BoundTensor* GlesDelegate::FindHandle(int handle) {
  for (auto& [index, bound] : bound_) {
    if (bound.handle == handle) return &bound;
  }
  return nullptr;
}

// TfLiteDelegate's buffer-handle callbacks. The handle names a bound output;
// its data is the float32 buffer it lives in (BoundTensor::ref: the
// application's, or the runtime's own behind a sink).
abi::Status GpuIoCallbacks::CopyFromBufferHandle(abi::Context* context,
                                                 abi::Delegate* delegate, int handle,
                                                 abi::Tensor* tensor) {
  GlesDelegate* self = GlesDelegate::FromAbi(delegate);
  Status status = self->CopyBuffer(handle, tensor, /*to_tensor=*/true);
  if (!status.ok()) {
    self->Report(context, status.message());
    return abi::kError;
  }
  return abi::kOk;
}

abi::Status GpuIoCallbacks::CopyToBufferHandle(abi::Context* context, abi::Delegate* delegate,
                                               int handle, abi::Tensor* tensor) {
  GlesDelegate* self = GlesDelegate::FromAbi(delegate);
  Status status = self->CopyBuffer(handle, tensor, /*to_tensor=*/false);
  if (!status.ok()) {
    self->Report(context, status.message());
    return abi::kError;
  }
  return abi::kOk;
}

void GpuIoCallbacks::FreeBufferHandle(abi::Context* context, abi::Delegate* delegate,
                                      int* handle) {
  if (handle == nullptr) return;
  GlesDelegate* self = GlesDelegate::FromAbi(delegate);
  // The interpreter drops the handle (tensor freed, or another handle set):
  // the binding ends with it. GL work only with our context current (made
  // so for this where it can be: egl/context_identity.h); otherwise the
  // partition's runtime keeps the binding until it is freed.
  for (auto it = self->bound_.begin(); it != self->bound_.end(); ++it) {
    if (it->second.handle != *handle) continue;
    gl::ScopedTeardown teardown(self->identity_.get(), "a tflite-gles buffer handle");
    const bool current = self->env_ && teardown.deletes();
    for (int id : it->second.partitions) {
      auto runtime = self->runtimes_.find(id);
      if (runtime != self->runtimes_.end() && current) runtime->second->UnbindGpu(it->first);
    }
    // The tensor forgets us too (the interpreter sets its own next, or
    // frees it), so nothing calls back into a deleted delegate later.
    self->ClearHandle(it->second, context != nullptr ? context : self->context_);
    self->bound_.erase(it);
    break;
  }
  *handle = -1;
}

Status GlesDelegate::CopyBuffer(int handle, abi::Tensor* tensor, bool to_tensor) {
  BoundTensor* bound = FindHandle(handle);
  if (bound == nullptr || tensor == nullptr) {
    return ApiError("buffer handle " + std::to_string(handle) + " is not one of this delegate's");
  }
  Status current = env_->EnsureCurrent();
  if (!current.ok()) return ApiError("buffer handle copy: " + current.message());
  const Shape4& shape = bound->shape;
  const size_t elements = static_cast<size_t>(shape.elements());
  const size_t element_bytes = ElementBytes(tensor->type);
  if (element_bytes == 0 || tensor->data == nullptr || tensor->bytes < elements * element_bytes) {
    return ApiError("buffer handle copy: the tensor has no data or does not match the " +
                    std::to_string(elements) + " elements bound");
  }
  const size_t bytes = bound->ref.bytes;
  std::vector<float> stored(bytes / sizeof(float));
  std::vector<float> bhwc(elements);
  Status status = Status::Ok();
  if (to_tensor) {
    status = gl::ReadBufferObject(bound->ref.buffer, bytes, stored.data());
    if (status.ok()) {
      FromLayout(stored.data(), bound->binding.layout, shape, bhwc.data());
      status = FloatsToTensor(bhwc.data(), elements, *tensor);
    }
  } else {
    status = TensorToFloats(*tensor, elements, bhwc.data());
    if (status.ok()) {
      if (bound->binding.layout == GpuLayout::kPhwc4Float32) {
        BhwcToPhwc4(bhwc.data(), shape, stored.data());
      } else {
        stored = bhwc;
      }
      status = gl::WriteBufferObject(bound->ref.buffer, bytes, stored.data());
    }
  }
  if (!status.ok()) return ApiError("buffer handle copy: " + status.message());
  return Status::Ok();
}

}  // namespace tflite_gles
