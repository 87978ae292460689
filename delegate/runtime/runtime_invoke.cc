// PartitionRuntime, invoke: binding, barriers and dispatches of a built
// partition, with the uploads before and the readback after them (Run).
#include "delegate/runtime/runtime.h"

#include <GLES2/gl2ext.h>
#include <GLES3/gl32.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "egl/gl_call.h"

namespace tflite_gles {

Status PartitionRuntime::BindForWrite(ValueId view, GLuint binding) const {
  // Views (Value::storage_of) use their root's storage.
  const size_t id = static_cast<size_t>(StorageRoot(values_, view));
  // A buffer bound to a partition input or output (runtime_gpu_io.cc).
  if (id < external_.size() && external_[id].buffer != 0) {
    TFG_GL(glBindBufferRange(GL_SHADER_STORAGE_BUFFER, binding, external_[id].buffer, 0,
                             static_cast<GLsizeiptr>(external_[id].bytes)));
    return Status::Ok();
  }
  if (IsTexture(id)) return textures_[static_cast<size_t>(texture_of_[id])].BindForWrite(binding);
  if (arena_offset_[id] != kOwnBuffer) {
    return arena_.BindAsStorage(binding, arena_offset_[id], arena_bytes_[id]);
  }
  return buffers_[id].BindAsStorage(binding, 0, buffers_[id].bytes());
}

Status PartitionRuntime::BindForRead(ValueId view, GLuint binding) const {
  const size_t id = static_cast<size_t>(StorageRoot(values_, view));
  if (id < external_.size() && external_[id].buffer != 0 && external_[id].view.id() != 0) {
    return external_[id].view.Bind(binding);
  }
  if (IsTexture(id)) return textures_[static_cast<size_t>(texture_of_[id])].BindForRead(binding);
  // Texture-buffer reads, or an upload staging buffer read as one
  // (DeviceProfile::staging_texture_reads): only those have a view.
  if (views_[id].id() != 0) return views_[id].Bind(binding);
  return BindForWrite(static_cast<ValueId>(id), binding);
}

Status PartitionRuntime::BindAndDispatch(const Step& step, bool barrier,
                                         const Transfer::Band* band) {
  // What earlier dispatches wrote becomes visible to this one, through SSBO
  // or texture; the texture-fetch bit only where reads go through texture
  // buffers (it costs a texture cache invalidation on some drivers).
  if (barrier) {
    // RGBA textures: image stores read back through texelFetch (and the
    // staging and read-write buffers as SSBOs).
    GLbitfield bits = GL_SHADER_STORAGE_BARRIER_BIT;
    if (device_.texture_buffer_reads || device_.rgba_textures) {
      bits |= GL_TEXTURE_FETCH_BARRIER_BIT;
    }
    if (device_.rgba_textures) bits |= GL_SHADER_IMAGE_ACCESS_BARRIER_BIT;
    TFG_GL(glMemoryBarrier(bits));
  }
  const Dispatch& d = step.dispatch;
  GLuint binding = 0;
  for (ValueId id : d.outputs) TFG_RETURN_IF_ERROR(BindForWrite(id, binding++));
  for (size_t k = 0; k < d.inputs.size(); ++k, ++binding) {
    // A bound texture stands in for this input (bound below).
    if (static_cast<int>(k) == step.texture_input) continue;
    TFG_RETURN_IF_ERROR(BindForRead(d.inputs[k], binding));
  }
  for (ValueId id : d.read_write) TFG_RETURN_IF_ERROR(BindForWrite(id, binding++));
  if (step.uniform_bytes > 0) {
    TFG_RETURN_IF_ERROR(uniforms_.BindAsUniforms(
        gl::kShaderUniformBinding, band != nullptr ? band->uniform_offset : step.uniform_offset,
        step.uniform_bytes));
  }
  const uint32_t* groups = band != nullptr ? band->groups : step.groups;
  if (step.texture == nullptr) return step.program->Dispatch(groups[0], groups[1], groups[2]);
  TFG_RETURN_IF_ERROR(step.texture->Bind(*step.program, step.texture_unit));
  Status dispatched = step.program->Dispatch(step.groups[0], step.groups[1], step.groups[2]);
  // Unbound even after a failed dispatch: the application's units as it left them.
  Status unbound = step.texture->Unbind(step.texture_unit);
  return dispatched.ok() ? unbound : dispatched;
}

Status PartitionRuntime::DispatchProfiled() {
  if (!timer_tried_) {
    timer_tried_ = true;
    // DeviceProfile::gpu_timer_queries: off on llvmpipe, whose synchronous
    // mode is exact.
    if (device_.gpu_timer_queries) {
      auto timer = gl::GpuTimer::Create(static_cast<int>(steps_.size()));
      if (timer.ok()) {
        timer_ = std::move(*timer);
      } else {
        std::fprintf(stderr,
                     "WARNING: tflite-gles: profiling with glFinish instead of "
                     "GPU timer queries: %s\n",
                     timer.status().message().c_str());
      }
    }
  }
  if (timer_.size() > 0) {
    for (size_t i = 0; i < steps_.size(); ++i) {
      TFG_RETURN_IF_ERROR(timer_.Begin(static_cast<int>(i)));
      // A step a GPU binding replaced runs as an empty query.
      if (skipped(i)) {
        TFG_RETURN_IF_ERROR(timer_.End());
        continue;
      }
      // DeviceProfile::profile_repeat: N back-to-back dispatches in the query (time / N
      // below), a kernel's steady rate without one dispatch's fill and drain; a read-write
      // step's outputs are then not the model's.
      for (int r = 0; r < device_.profile_repeat; ++r) {
        TFG_RETURN_IF_ERROR(BindAndDispatch(StepAt(i), /*barrier=*/true));
      }
      TFG_RETURN_IF_ERROR(timer_.End());
    }
    auto milliseconds = timer_.ReadMilliseconds(static_cast<int>(steps_.size()));
    if (!milliseconds.ok()) {
      // The outputs are fine; only this invoke's times are lost.
      std::fprintf(stderr, "WARNING: tflite-gles: %s\n",
                   milliseconds.status().message().c_str());
      return Status::Ok();
    }
    // A skipped step ran no dispatch and has no entry, as in the synchronous
    // mode below (its empty query only keeps the query indices aligned).
    // Listed, it looked like a readback conversion still running after an
    // output texture was bound (H100, session 9).
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (skipped(i)) continue;
      const Dispatch& d = StepAt(i).dispatch;
      timings_.push_back(
          {d.label, d.shader, (*milliseconds)[i] / device_.profile_repeat, d.flops, true});
    }
    return Status::Ok();
  }
  // Synchronous profiling: finish before and after each dispatch (on
  // llvmpipe a dispatch runs inside the call anyway).
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& step = StepAt(i);
    if (skipped(i)) continue;
    TFG_GL(glFinish());
    auto start = std::chrono::steady_clock::now();
    TFG_RETURN_IF_ERROR(BindAndDispatch(step, /*barrier=*/true));
    TFG_GL(glFinish());
    std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    timings_.push_back({step.dispatch.label, step.dispatch.shader,
                        elapsed.count(), step.dispatch.flops, false});
  }
  return Status::Ok();
}

Status PartitionRuntime::Run(abi::Context* context, bool profile) {
  TFG_RETURN_IF_ERROR(Allocate());
  ApplyReadbackFusions();  // a failed binding's output fuses again
  timings_.clear();
  TFG_RETURN_IF_ERROR(timeline_.Start());
  // Mapped staging (DeviceProfile::mapped_upload_staging) is written while
  // the GPU runs nothing: the last invoke's readback waited for it, and this
  // fence makes sure of it even if that invoke failed half way.
  TFG_RETURN_IF_ERROR(staging_reads_done_.Wait());
  // Upload conversions already dispatched, band by band (runtime_bands.cc).
  std::vector<int> issued;
  bool aliased_inputs = false;
  for (const Transfer& upload : uploads_) {
    if (upload.gpu_bound) continue;  // read on the GPU (RunBoundInputs)
    const abi::Tensor& tensor = context->tensors[upload.tflite_index];
    // The tensor is its staging (runtime_alias.cc): nothing to copy, and
    // the conversion runs whole with the other steps.
    if (IsAliased(upload, tensor)) {
      aliased_inputs = true;
      continue;
    }
    if (!profile) {
      TFG_ASSIGN_OR_RETURN(bool banded, UploadInBands(upload, tensor));
      if (banded) {
        issued.push_back(upload.band_step);
        continue;
      }
    }
    TFG_RETURN_IF_ERROR(UploadInput(upload, tensor));
  }
  TFG_RETURN_IF_ERROR(RunBoundInputs());
  TFG_RETURN_IF_ERROR(timeline_.Uploaded());
  readback_banded_ = false;  // until DispatchReadbackBands (not when profiling)
  download_aliased_.assign(downloads_.size(), 0);
  for (size_t k = 0; k < downloads_.size(); ++k) {
    download_aliased_[k] =
        IsAliased(downloads_[k], context->tensors[downloads_[k].tflite_index]) ? 1 : 0;
  }
  for (int step : issued) TFG_RETURN_IF_ERROR(timeline_.Dispatched(step));
  if (profile) {
    TFG_RETURN_IF_ERROR(DispatchProfiled());
  } else {
    auto flush_point = [this](size_t issued) {
      const auto& points = device_.early_flush_points;
      return std::find(points.begin(), points.end(), static_cast<int>(issued)) != points.end();
    };
    if (flush_point(0)) TFG_GL(glFlush());
    // After banded uploads the GPU is soon past them and would wait for the
    // driver's next batch (~60 us after its first command): flushes after
    // the next few dispatches (DeviceProfile::band_flush_points).
    int after_bands = 0;
    auto band_flush = [&]() {
      const auto& points = device_.band_flush_points;
      return !issued.empty() &&
             std::find(points.begin(), points.end(), ++after_bands) != points.end();
    };
    // A barrier scheduled before a resize the CPU stands in for
    // (kCpuResizeSkip) may cover what a later dispatch reads: it moves on.
    bool pending_barrier = false;
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (std::find(issued.begin(), issued.end(), static_cast<int>(i)) != issued.end()) continue;
      if (skipped(i)) {
        pending_barrier |= (skip_step_[i] == kCpuResizeSkip ||
                            skip_step_[i] == kFusedReadbackSkip) && steps_[i].barrier_before;
        TFG_RETURN_IF_ERROR(timeline_.Skipped(static_cast<int>(i)));
        continue;
      }
      const bool barrier = steps_[i].barrier_before || pending_barrier;
      if (ReadbackInBands(i)) {
        TFG_RETURN_IF_ERROR(DispatchReadbackBands(StepAt(i), barrier));
      } else {
        TFG_RETURN_IF_ERROR(BindAndDispatch(StepAt(i), barrier));
      }
      pending_barrier = false;
      // The time line's stamp before the flush, so that it travels in the
      // same batch as its dispatch.
      TFG_RETURN_IF_ERROR(timeline_.Dispatched(static_cast<int>(i)));
      const bool after_bands_flush = band_flush();  // counts every dispatch
      if (after_bands_flush || flush_point(i + 1)) TFG_GL(glFlush());
    }
  }
  TFG_RETURN_IF_ERROR(RunBoundOutputs());
  const DeviceProfile::Readback readback = device_.readback;
  const bool host_downloads =
      std::any_of(downloads_.begin(), downloads_.end(),
                  [](const Transfer& t) { return !t.gpu_bound; });
  // Readback through a map (GL_BUFFER_UPDATE), or through persistent
  // mappings, whose shader writes need the client-mapped barrier before the
  // fence the CPU then waits for. Every output bound on the GPU: nothing is
  // read back (RunBoundOutputs ended with the barrier the application needs).
  if (host_downloads) {
    TFG_GL(glMemoryBarrier(device_.mapped_readback()
                               ? GL_BUFFER_UPDATE_BARRIER_BIT |
                                     GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT_EXT
                               : GL_BUFFER_UPDATE_BARRIER_BIT));
  }
  const bool fenced_readback = readback != DeviceProfile::Readback::kMap && host_downloads;
  // One fence serves both: the readback waits for it, and (if the readback
  // did not) the next invoke does before writing mapped upload staging.
  // Inputs all bound on the GPU wrote no staging this invoke (a bound
  // input's staging value is the application's object, or not read at
  // all), so the next invoke has nothing to wait for: no fence.
  const bool host_uploads =
      std::any_of(uploads_.begin(), uploads_.end(),
                  [](const Transfer& t) { return !t.gpu_bound; });
  if ((device_.mapped_upload_staging && host_uploads) || fenced_readback) {
    TFG_ASSIGN_OR_RETURN(staging_reads_done_, gl::Fence::Create());
  }
  TFG_RETURN_IF_ERROR(timeline_.Submitted());
  const bool spin = readback == DeviceProfile::Readback::kFenceSpin ||
                    readback == DeviceProfile::Readback::kMappedSpin;
  // A banded readback waits for its bands' fences itself, the last one
  // this fence; the other downloads after it.
  if (fenced_readback && !readback_banded_) {
    TFG_RETURN_IF_ERROR(staging_reads_done_.Wait(spin));
    timeline_.Waited();
  }
  for (size_t k = 0; k < downloads_.size(); ++k) {
    const Transfer& download = downloads_[k];
    if (download.gpu_bound) continue;  // written on the GPU (RunBoundOutputs)
    // The tensor is its staging: the fence above made the GPU's writes visible.
    if (download_aliased_[k]) continue;
    abi::Tensor& tensor = context->tensors[download.tflite_index];
    if (readback_banded_ && static_cast<int>(k) == banded_download_) {
      TFG_RETURN_IF_ERROR(DownloadInBands(download, tensor));
      continue;
    }
    if (readback_banded_) TFG_RETURN_IF_ERROR(staging_reads_done_.Wait(spin));
    TFG_RETURN_IF_ERROR(DownloadOutput(download, tensor));
  }
  // TFLite's side writes aliased inputs between invokes, straight into what
  // the GPU reads: it must be done with them before the invoke returns (the
  // readback waited for this fence already, unless every output is bound).
  if (aliased_inputs) TFG_RETURN_IF_ERROR(staging_reads_done_.Wait(spin));
  TFG_RETURN_IF_ERROR(timeline_.Done());
  for (const ConstantOutput& output : constant_outputs_) {
    abi::Tensor& tensor = context->tensors[output.tflite_index];
    const size_t bytes = output.values.size() * sizeof(float);
    if (tensor.type != abi::kFloat32 || tensor.data == nullptr ||
        tensor.bytes < bytes) {
      return Status::Error("constant output tensor " +
                           std::to_string(output.tflite_index) +
                           " is not a float32 tensor of " +
                           std::to_string(output.values.size()) + " elements");
    }
    std::memcpy(tensor.data, output.values.data(), bytes);
  }
  return Status::Ok();
}

}  // namespace tflite_gles
