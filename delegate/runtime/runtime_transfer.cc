// PartitionRuntime, transfers: the CPU side of moving a partition's inputs
// into their staging buffers (or straight into the GPU's own layout) and
// its outputs back into TFLite tensors.
#include "delegate/runtime/runtime.h"

#include <GLES2/gl2ext.h>
#include <GLES3/gl32.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "delegate/abi/half.h"
#include "delegate/graph/quantization.h"
#include "delegate/runtime/half_convert.h"
#include "delegate/runtime/host_copy.h"
#include "delegate/runtime/readback_resize_rows.h"
#include "delegate/runtime/transfer_layout.h"
#include "egl/gl_call.h"

namespace tflite_gles {

namespace {
Status CheckTransferTensor(const abi::Tensor& tensor, size_t elements,
                           int index, const char* role) {
  const size_t element_bytes = ElementBytes(tensor.type);
  if (element_bytes == 0) {
    return Status::Error(std::string(role) + " tensor " + std::to_string(index) +
                         " is " + TypeName(tensor.type) +
                         "; only float32, int32, bool, uint8 and int8 cross to the GPU");
  }
  if (tensor.data == nullptr || tensor.bytes < elements * element_bytes) {
    return Status::Error(std::string(role) + " tensor " + std::to_string(index) +
                         " has no data or fewer bytes than its shape needs");
  }
  return Status::Ok();
}
}  // namespace

Status PartitionRuntime::UploadInput(const Transfer& upload,
                                     const abi::Tensor& tensor) {
  TFG_RETURN_IF_ERROR(CheckTransferTensor(tensor, upload.elements,
                                          upload.tflite_index, "input"));
  const gl::Buffer& buffer = buffers_[upload.buffer];
  if (upload.packed) return UploadBytes(upload, tensor);
  const float* floats = static_cast<const float*>(tensor.data);
  if (IsQuantizedType(tensor.type)) {
    // The float view: real = scale * (q - zero_point), the per-tensor params
    // the kernels' checks validated (ActivationQuantization).
    conversion_scratch_.resize(upload.elements);
    TFG_RETURN_IF_ERROR(
        DequantizeTensor(tensor, upload.elements, conversion_scratch_.data()));
    floats = conversion_scratch_.data();
  } else if (upload.quantize && tensor.type == abi::kFloat32) {
    // Only QUANTIZE reads it: TFLite's rounding, exactly as its kernel does.
    conversion_scratch_.resize(upload.elements);
    for (size_t i = 0; i < upload.elements; ++i) {
      conversion_scratch_[i] = DequantizeValue(
          QuantizeElementLikeTflite(floats[i], i, upload.elements, upload.quantization),
          upload.quantization);
    }
    floats = conversion_scratch_.data();
  } else if (tensor.type != abi::kFloat32) {
    conversion_scratch_.resize(upload.elements);
    for (size_t i = 0; i < upload.elements; ++i) {
      conversion_scratch_[i] =
          tensor.type == abi::kBool
              ? (static_cast<const uint8_t*>(tensor.data)[i] ? 1.0f : 0.0f)
              : static_cast<float>(static_cast<const int32_t*>(tensor.data)[i]);
    }
    floats = conversion_scratch_.data();
  }
  // Stored elements: BHWC, or PHWC4 with padded lanes where relaid out.
  const size_t stored = upload.relayout
                            ? static_cast<size_t>(upload.shape.vec4_count()) * 4
                            : upload.elements;
  const size_t bytes = stored * (upload.half ? sizeof(uint16_t) : sizeof(float));
  if (bytes > buffer.bytes()) {
    return Status::Error("input tensor " + std::to_string(upload.tflite_index) +
                         " exceeds its GPU buffer");
  }
  // Written straight into a persistent mapping where there is one.
  void* mapped = buffer.mapped_for_write() ? buffer.mapped() : nullptr;
  const bool stream = mapped != nullptr && device_.streaming_upload;
  if (upload.quantize_tail) return UploadRoundedOnGpu(upload, floats, mapped, stream);
  if (!upload.half) {
    if (!upload.relayout && stream) {
      copy_workers().Copy(mapped, floats, bytes, /*streaming=*/true);
      return Status::Ok();
    }
    if (!upload.relayout) return buffer.Upload(0, bytes, floats);
    float* out = mapped != nullptr ? static_cast<float*>(mapped)
                                   : (phwc4_floats_.resize(stored), phwc4_floats_.data());
    BhwcToPhwc4(floats, upload.shape, out);
    return mapped != nullptr ? Status::Ok() : buffer.Upload(0, bytes, out);
  }
  if (!upload.relayout) {
    uint16_t* out = mapped != nullptr ? static_cast<uint16_t*>(mapped)
                                      : (half_scratch_.resize(stored), half_scratch_.data());
    if (stream) {
      copy_workers().ConvertToHalves(floats, out, upload.elements);
    } else {
      FloatsToHalves(floats, out, upload.elements);
    }
    return mapped != nullptr ? Status::Ok() : buffer.Upload(0, bytes, out);
  }
  half_scratch_.resize(upload.elements);
  FloatsToHalves(floats, half_scratch_.data(), upload.elements);
  uint16_t* out = mapped != nullptr ? static_cast<uint16_t*>(mapped)
                                    : (phwc4_halves_.resize(stored), phwc4_halves_.data());
  BhwcToPhwc4(half_scratch_.data(), upload.shape, out);
  return mapped != nullptr ? Status::Ok() : buffer.Upload(0, bytes, out);
}

Status PartitionRuntime::UploadBytes(const Transfer& upload, const abi::Tensor& tensor) {
  // The tensor's bytes as they are (Transfer::packed): the GPU dequantizes.
  const gl::Buffer& buffer = buffers_[upload.buffer];
  if (upload.elements > buffer.bytes()) {
    return Status::Error("input tensor " + std::to_string(upload.tflite_index) +
                         " exceeds its GPU buffer");
  }
  if (buffer.mapped_for_write() && buffer.mapped() != nullptr) {
    if (device_.streaming_upload) {
      StreamingCopy(buffer.mapped(), tensor.data, upload.elements);
    } else {
      std::memcpy(buffer.mapped(), tensor.data, upload.elements);
    }
    return Status::Ok();
  }
  return buffer.Upload(0, upload.elements, tensor.data);
}

Status PartitionRuntime::UploadRoundedOnGpu(const Transfer& upload, const float* floats,
                                            void* mapped, bool stream) {
  // The conversion rounds every element as TFLite's vector path does (whole
  // groups of 8); the few after them TFLite rounds half away from zero of
  // x / scale, which a GPU's division cannot promise on ties: put on the
  // grid here, where the GPU's rounding leaves them as they are.
  const gl::Buffer& buffer = buffers_[upload.buffer];
  const size_t grouped = upload.elements / 8 * 8;
  float tail[8];
  for (size_t i = grouped; i < upload.elements; ++i) {
    tail[i - grouped] = DequantizeValue(
        QuantizeElementLikeTflite(floats[i], i, upload.elements, upload.quantization),
        upload.quantization);
  }
  const size_t tail_bytes = (upload.elements - grouped) * sizeof(float);
  if (mapped != nullptr) {
    if (stream) {
      StreamingCopy(mapped, floats, grouped * sizeof(float));
    } else {
      std::memcpy(mapped, floats, grouped * sizeof(float));
    }
    std::memcpy(static_cast<float*>(mapped) + grouped, tail, tail_bytes);
    return Status::Ok();
  }
  TFG_RETURN_IF_ERROR(buffer.Upload(0, grouped * sizeof(float), floats));
  return tail_bytes > 0 ? buffer.Upload(grouped * sizeof(float), tail_bytes, tail)
                        : Status::Ok();
}

Status PartitionRuntime::DownloadOutput(const Transfer& download,
                                        abi::Tensor& tensor) {
  TFG_RETURN_IF_ERROR(CheckTransferTensor(tensor, download.elements,
                                          download.tflite_index, "output"));
  const gl::Buffer& buffer = buffers_[download.buffer];
  float* floats = static_cast<float*>(tensor.data);
  if (tensor.type != abi::kFloat32) {
    conversion_scratch_.resize(download.elements);
    floats = conversion_scratch_.data();
  }
  if (download.relayout) return DownloadRelaidOut(download, floats, tensor);
  // Other direct readbacks exist only where PHWC4 is BHWC: a plain copy.
  if (download.half) {
    half_scratch_.resize(download.elements);
    TFG_RETURN_IF_ERROR(
        buffer.Download(0, download.elements * sizeof(uint16_t), half_scratch_.data()));
    HalvesToFloats(half_scratch_.data(), floats, download.elements);
  } else if (buffer.mapped_for_read()) {
    // Persistent coherent mapping (the caller waited for the GPU's fence).
    const size_t bytes = download.elements * sizeof(float);
    if (bytes > buffer.bytes()) {
      return Status::Error("output tensor " + std::to_string(download.tflite_index) +
                           " exceeds its GPU buffer");
    }
    copy_workers().Copy(floats, buffer.mapped(), bytes, device_.streaming_readback);
  } else {
    TFG_RETURN_IF_ERROR(buffer.Download(0, download.elements * sizeof(float), floats));
  }
  return FinishDownload(download, tensor);
}

Status PartitionRuntime::DownloadRelaidOut(const Transfer& download, float* floats,
                                           abi::Tensor& tensor) {
  // A direct readback of a PHWC4 tensor (DeviceProfile::cpu_readback_relayout):
  // its vec4s, padded lanes included, relaid out into BHWC here.
  const gl::Buffer& buffer = buffers_[download.buffer];
  // With a CPU resize the buffer is the resize's input (its own shape).
  const Shape4& layout = download.resize.active ? download.resize.source : download.shape;
  const size_t stored = static_cast<size_t>(layout.vec4_count()) * 4;
  const size_t bytes = stored * (download.half ? sizeof(uint16_t) : sizeof(float));
  if (bytes > buffer.bytes()) {
    return Status::Error("output tensor " + std::to_string(download.tflite_index) +
                         " exceeds its GPU buffer");
  }
  const float* phwc4 = nullptr;
  if (download.half && download.resize.active && device_.row_readback_resize &&
      device_.half_readback_rows && buffer.mapped_for_read()) {
    // The copy threads convert the source rows they blend from the mapping
    // (the caller waited for the GPU's fence): no serial copy and conversion.
    ResizeBilinearRowsHalfPhwc4ToBhwc(static_cast<const uint16_t*>(buffer.mapped()),
                                      download.resize, download.shape, floats,
                                      &resize_scratch_, &copy_workers(),
                                      device_.streaming_readback);
    return FinishDownload(download, tensor);
  }
  if (download.half) {
    phwc4_halves_.resize(stored);
    TFG_RETURN_IF_ERROR(buffer.Download(0, bytes, phwc4_halves_.data()));
    phwc4_floats_.resize(stored);
    HalvesToFloats(phwc4_halves_.data(), phwc4_floats_.data(), stored);
    phwc4 = phwc4_floats_.data();
  } else if (buffer.mapped_for_read()) {
    // Persistent coherent mapping (the caller waited for the GPU's fence).
    phwc4 = static_cast<const float*>(buffer.mapped());
  } else {
    phwc4_floats_.resize(stored);
    TFG_RETURN_IF_ERROR(buffer.Download(0, bytes, phwc4_floats_.data()));
    phwc4 = phwc4_floats_.data();
  }
  if (download.resize.active && device_.row_readback_resize) {
    ResizeBilinearRowsPhwc4ToBhwc(phwc4, download.resize, download.shape, floats,
                                  &resize_scratch_, &copy_workers(), device_.streaming_readback);
  } else if (download.resize.active) {
    ResizeBilinearPhwc4ToBhwc(phwc4, download.resize, download.shape, floats, &resize_scratch_,
                              &copy_workers());
  } else {
    Phwc4ToBhwc(phwc4, download.shape, floats);
  }
  return FinishDownload(download, tensor);
}

Status PartitionRuntime::FinishDownload(const Transfer& download, abi::Tensor& tensor) {
  // Non-float outputs were read into conversion_scratch_ as floats.
  if (tensor.type == abi::kFloat32) return Status::Ok();
  if (IsQuantizedType(tensor.type)) {
    // As TFLite's QUANTIZE would from the same floats (QuantizeValue).
    return QuantizeTensor(conversion_scratch_.data(), download.elements, tensor);
  }
  for (size_t i = 0; i < download.elements; ++i) {
    const float v = conversion_scratch_[i];
    if (tensor.type == abi::kBool) {
      static_cast<uint8_t*>(tensor.data)[i] = v != 0.0f ? 1 : 0;
    } else {
      // Saturating: a NaN or out-of-range float must not reach lrint (UB).
      const float bounded =
          std::isnan(v) ? 0.0f : std::min(std::max(v, -2147483648.0f), 2147483520.0f);
      static_cast<int32_t*>(tensor.data)[i] = static_cast<int32_t>(std::lrint(bounded));
    }
  }
  return Status::Ok();
}

}  // namespace tflite_gles
