// PartitionRuntime, transfers in row bands (DeviceProfile::transfer_bands):
// a large staged input or output crosses in bands of rows, each band's
// layout conversion its own dispatch of the same program (layout_convert.comp
// BAND_BEGIN/BAND_END, one uniform range per band), so that the CPU and the
// GPU work on different bands at once:
//  - upload: the copy threads write band k into the mapped staging while
//    the GPU converts band k - 1; each band's dispatch is issued and flushed
//    as soon as its rows are in, so the GPU's conversion ends one band's
//    conversion after the CPU's copy instead of a whole one (plus the
//    flush's latency) after it;
//  - readback: the conversion's bands are fenced one by one, and the copy
//    threads copy band k into TFLite's tensor while the GPU converts band
//    k + 1 (they wake while it converts the second band, or with
//    band_early_wake the first).
// Only float32 tensors with a conversion dispatch and a persistently
// mapped staging buffer; everything else, and profiled runs, cross whole
// (runtime_transfer.cc). The hair stand-in's time line (H200, session 14):
// 167-209 us of copy before the GPU starts, ~150 us after it ends; with 4
// bands its invoke took 1.446 instead of 1.568 ms fp32, 1.344 instead of
// 1.448 fp16 (docs/perf/log.md, "io4, session 15").
#include "delegate/runtime/runtime.h"

#include <GLES2/gl2ext.h>
#include <GLES3/gl32.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "delegate/runtime/half_convert.h"
#include "delegate/runtime/host_copy.h"
#include "egl/gl_call.h"
#include "egl/shader_source.h"

namespace tflite_gles {

namespace {
// Part `part` of `parts` of [begin, end), split at multiples of `align`.
std::pair<size_t, size_t> PartOf(size_t begin, size_t end, int part, int parts, size_t align) {
  const size_t step = (end - begin) / static_cast<size_t>(parts) / align * align;
  const size_t first = begin + step * static_cast<size_t>(part);
  return {first, part + 1 == parts ? end : first + step};
}
}  // namespace

void PartitionRuntime::PlanTransferBands() {
  if (device_.transfer_bands < 2 && device_.readback_bands < 2) return;
  auto plan = [&](Transfer& t, bool upload) {
    if (t.direct || t.packed || t.quantize || t.quantize_tail || t.write_back ||
        t.resize.active || t.type != abi::kFloat32 || (!upload && t.half)) {
      return false;
    }
    const size_t bytes = t.elements * (t.half ? sizeof(uint16_t) : sizeof(float));
    const long long rows = static_cast<long long>(t.shape.b) * t.shape.h;
    const size_t min_band = std::max<size_t>(device_.transfer_band_min_bytes / 4, 1);
    const int most = upload ? device_.transfer_bands : device_.readback_bands;
    const int bands = static_cast<int>(
        std::min<long long>({most, static_cast<long long>(bytes / min_band), rows}));
    if (bytes < device_.transfer_band_min_bytes || bands < 2) return false;
    // The conversion that reads (upload) or writes (readback) the staging,
    // or the kernel that writes a fused readback's staging itself
    // (runtime_readback_fusion.cc: its pixel groups are rows of the output).
    int index = -1;
    const Step* step = nullptr;
    for (const FusedReadback& f : fused_readbacks_) {
      if (upload || f.tflite_index != t.tflite_index) continue;
      if (!device_.fused_readback_bands) return false;  // whole (DeviceProfile)
      index = f.producer;
      step = f.step.get();
    }
    for (size_t i = 0; i < steps_.size() && step == nullptr; ++i) {
      const Dispatch& d = steps_[i].dispatch;
      if (d.shader != "layout_convert") continue;
      if (upload ? d.defines.count("TO_PHWC4") && d.inputs[0] == t.buffer
                 : d.defines.count("TO_BHWC") && d.outputs[0] == t.buffer) {
        index = static_cast<int>(i);
        step = &steps_[i];
      }
    }
    if (step == nullptr || step->uniform_bytes == 0) return false;
    const Dispatch& d = step->dispatch;
    const int axis = d.defines.count("SLICES_ON_X") ? 1 : 0;  // transpose_conv.comp's
    if (d.grid[axis] % static_cast<uint32_t>(rows) != 0) return false;
    // A band of rows is one run of invocations (pixel groups) in either order.
    const size_t per_row = d.grid[axis] / static_cast<size_t>(rows);
    const size_t row_elements = t.elements / static_cast<size_t>(rows);
    std::vector<Transfer::Band> planned;
    for (int k = 0; k < bands; ++k) {
      const size_t r0 = static_cast<size_t>(rows * k / bands);
      const size_t r1 = static_cast<size_t>(rows * (k + 1) / bands);
      Dispatch band = d;
      band.defines["BAND_BEGIN"] = std::to_string(r0 * per_row);
      band.defines["BAND_END"] = std::to_string(r1 * per_row);
      band.grid[axis] = static_cast<uint32_t>((r1 - r0) * per_row);
      Transfer::Band b;
      b.begin = r0 * row_elements;
      b.end = r1 * row_elements;
      StatusOr<std::string> body = gl::EmbeddedShader(d.shader);
      if (!body.ok()) return false;
      auto block = gl::ShaderUniformValues(d.shader, *body, band.defines);
      if (!block.ok() || !CountGroups(band, b.groups).ok()) return false;
      b.uniform_offset = AddUniformBlock(*block);
      planned.push_back(b);
    }
    t.band_step = index;
    t.bands = std::move(planned);
    if (device_.report_phases || device_.report_timeline) {
      std::fprintf(stderr, "INFO: tflite-gles: tensor %d crosses in %d row bands (%s%s)\n",
                   t.tflite_index, bands, upload ? "upload" : "readback",
                   step == &steps_[static_cast<size_t>(index)] ? "" : ", fused");
    }
    return true;
  };
  for (Transfer& t : uploads_) plan(t, true);
  for (size_t k = 0; k < downloads_.size() && banded_download_ < 0; ++k) {
    if (plan(downloads_[k], false)) banded_download_ = static_cast<int>(k);
  }
}

StatusOr<bool> PartitionRuntime::UploadInBands(const Transfer& upload,
                                               const abi::Tensor& tensor) {
  const size_t i = static_cast<size_t>(upload.band_step);
  if (upload.bands.empty() || skipped(i) || &StepAt(i) != &steps_[i]) return false;
  const gl::Buffer& buffer = buffers_[upload.buffer];
  if (!buffer.mapped_for_write() || buffer.mapped() == nullptr ||
      tensor.type != abi::kFloat32 || tensor.data == nullptr ||
      tensor.bytes < upload.elements * sizeof(float)) {
    return false;  // UploadInput takes it (and reports what is wrong)
  }
  const float* in = static_cast<const float*>(tensor.data);
  void* mapped = buffer.mapped();
  const bool stream = device_.streaming_upload;
  const Step& step = steps_[i];
  Status error;
  const size_t bytes = upload.elements * (upload.half ? sizeof(uint16_t) : sizeof(float));
  const int bands = static_cast<int>(upload.bands.size());
  copy_workers().Banded(
      bytes, bands, nullptr,
      [&](int band, int part, int parts) {
        const Transfer::Band& b = upload.bands[static_cast<size_t>(band)];
        // Whole 64-byte lines of the staging per part (16 floats, 32 halves).
        const auto [first, last] = PartOf(b.begin, b.end, part, parts, upload.half ? 32 : 16);
        if (upload.half) {
          uint16_t* out = static_cast<uint16_t*>(mapped) + first;
          if (stream) {
            FloatsToHalvesStreaming(in + first, out, last - first);
          } else {
            FloatsToHalves(in + first, out, last - first);
          }
        } else if (stream) {
          StreamingCopy(static_cast<float*>(mapped) + first, in + first,
                        (last - first) * sizeof(float));
        } else {
          std::memcpy(static_cast<float*>(mapped) + first, in + first,
                      (last - first) * sizeof(float));
        }
      },
      [&](int band) {
        // The band's rows are in memory (each part fenced its streaming
        // stores): its conversion goes to the GPU now.
        error = [&]() -> Status {
          TFG_RETURN_IF_ERROR(BindAndDispatch(step, band == 0 && step.barrier_before,
                                              &upload.bands[static_cast<size_t>(band)]));
          TFG_GL(glFlush());
          return Status::Ok();
        }();
        return error.ok();
      });
  TFG_RETURN_IF_ERROR(error);
  return true;
}

bool PartitionRuntime::ReadbackInBands(size_t step) const {
  if (banded_download_ < 0) return false;
  const Transfer& t = downloads_[static_cast<size_t>(banded_download_)];
  // The planned step itself: the conversion, or a fused readback's variant
  // (not the original a binding runs again, nor a binding's replacement).
  const bool planned = ReadbackFused(t) ? &StepAt(step) != &steps_[step]
                                        : &StepAt(step) == &steps_[step];
  // An aliased output has no copy to overlap: its conversion runs whole.
  const bool aliased = static_cast<size_t>(banded_download_) < download_aliased_.size() &&
                       download_aliased_[static_cast<size_t>(banded_download_)];
  return static_cast<int>(step) == t.band_step && !t.gpu_bound && !skipped(step) && planned &&
         !aliased && device_.mapped_readback() &&
         buffers_[t.buffer].mapped_for_read() && buffers_[t.buffer].mapped() != nullptr;
}

Status PartitionRuntime::DispatchReadbackBands(const Step& step, bool barrier) {
  const Transfer& t = downloads_[static_cast<size_t>(banded_download_)];
  // DeviceProfile::band_early_wake: a fence as the conversion starts (no
  // barrier: it orders nothing), so that the copy threads wake while the
  // GPU converts the first band.
  if (device_.band_early_wake) {
    TFG_ASSIGN_OR_RETURN(readback_start_, gl::Fence::Create());
  }
  band_fences_.resize(t.bands.size() - 1);
  for (size_t k = 0; k < t.bands.size(); ++k) {
    TFG_RETURN_IF_ERROR(BindAndDispatch(step, barrier && k == 0, &t.bands[k]));
    if (k + 1 == t.bands.size()) break;  // Run's fence after the last step
    // As Run's before its fence: the shader's writes visible to the CPU's
    // reads of the persistent mapping once the fence has signalled.
    TFG_GL(glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT | GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT_EXT));
    TFG_ASSIGN_OR_RETURN(band_fences_[k], gl::Fence::Create());
  }
  readback_banded_ = true;
  return Status::Ok();
}

Status PartitionRuntime::DownloadInBands(const Transfer& download, abi::Tensor& tensor) {
  const size_t bytes = download.elements * sizeof(float);
  if (tensor.type != abi::kFloat32 || tensor.data == nullptr || tensor.bytes < bytes) {
    // Not what was planned (a float32 output): whole, which reports it.
    TFG_RETURN_IF_ERROR(staging_reads_done_.Wait());
    return DownloadOutput(download, tensor);
  }
  float* out = static_cast<float*>(tensor.data);
  const float* in = static_cast<const float*>(buffers_[download.buffer].mapped());
  const bool spin = device_.readback == DeviceProfile::Readback::kMappedSpin;
  const int bands = static_cast<int>(download.bands.size());
  // The copy threads wake once the GPU has reached the conversion (they
  // would spin through the rest of its work otherwise), or with
  // band_early_wake off once it has converted the first band.
  TFG_RETURN_IF_ERROR(device_.band_early_wake ? readback_start_.Wait(spin)
                                              : band_fences_[0].Wait(spin));
  Status error;
  copy_workers().Banded(
      bytes, bands,
      [&](int band) {
        // Waiting (and flushing, the first time) on the caller's thread,
        // which holds the context; the other parts spin meanwhile.
        error = band + 1 < bands ? band_fences_[static_cast<size_t>(band)].Wait(spin)
                                 : staging_reads_done_.Wait(spin);
        return error.ok();
      },
      [&](int band, int part, int parts) {
        const Transfer::Band& b = download.bands[static_cast<size_t>(band)];
        const auto [first, last] = PartOf(b.begin, b.end, part, parts, 16);
        if (device_.streaming_readback) {
          StreamingCopy(out + first, in + first, (last - first) * sizeof(float));
        } else {
          std::memcpy(out + first, in + first, (last - first) * sizeof(float));
        }
      },
      nullptr);
  return error;
}

}  // namespace tflite_gles
