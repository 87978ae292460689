// PartitionRuntime, GPU bindings (gpu_binding.h): a partition input read
// from, or output written to, a float32 GL buffer outside the runtime
// instead of crossing to the CPU.
//
// Where the runtime's own buffer at the crossing point has the bound layout
// and float32 elements, the external buffer stands in for it (an "alias":
// every dispatch binds it instead, so no dispatch is added):
//  - a BHWC input with a staging buffer: the upload conversion (or the
//    kernel it was fused into) reads the external floats;
//  - a BHWC output with a staging buffer: the readback conversion writes them;
//  - a PHWC4 input or output in fp32 storage: the tensor itself lives in the
//    external buffer and its layout conversion is skipped.
// Elsewhere (fp16 storage, direct transfers, a PHWC4 input whose upload
// conversion was fused into a kernel) one gpu_io.comp dispatch converts.
// A uint8/int8 input whose staging holds its raw bytes (Transfer::packed) is
// bound in its float view like any other: while bound, the steps that read
// the staging run their float-reading variants (UseFloatStaging).
#include "delegate/runtime/runtime.h"

#include <GLES3/gl32.h>

#include <algorithm>
#include "egl/gl_call.h"

namespace tflite_gles {

bool PartitionRuntime::HasInput(int tflite_index) const {
  return std::any_of(uploads_.begin(), uploads_.end(),
                     [&](const Transfer& t) { return t.tflite_index == tflite_index; });
}

bool PartitionRuntime::HasOutput(int tflite_index) const {
  return std::any_of(downloads_.begin(), downloads_.end(), [&](const Transfer& t) {
    return t.tflite_index == tflite_index && !t.write_back;
  });
}

Shape4 PartitionRuntime::TransferShape(int tflite_index) const {
  for (const auto* list : {&uploads_, &downloads_}) {
    for (const Transfer& t : *list) {
      if (t.tflite_index == tflite_index) return t.shape;
    }
  }
  return Shape4();
}

bool PartitionRuntime::IsGpuBound(int tflite_index) const {
  return GpuBindingOf(tflite_index) != nullptr;
}

const GpuBinding* PartitionRuntime::GpuBindingOf(int tflite_index) const {
  for (const GpuBound& bound : gpu_bound_) {
    if (bound.tflite_index == tflite_index) return &bound.binding;
  }
  return nullptr;
}

const GpuBufferRef* PartitionRuntime::GpuRefOf(int tflite_index) const {
  for (const GpuBound& bound : gpu_bound_) {
    if (bound.tflite_index == tflite_index) return &bound.ref;
  }
  return nullptr;
}

bool PartitionRuntime::OwnsBuffer(GLuint name) const {
  if (name == 0) return false;
  if (arena_.id() == name || uniforms_.id() == name) return true;
  for (const gl::Buffer& buffer : buffers_) {
    if (buffer.id() == name) return true;
  }
  for (const GpuBound& bound : gpu_bound_) {
    if (bound.own.id() == name || bound.scratch.id() == name) return true;
  }
  return false;
}

ValueId PartitionRuntime::AddExternalValue(const Shape4& shape, GLuint buffer,
                                           size_t bytes, GpuBound& bound) {
  Value value;
  value.kind = Value::Kind::kIntermediate;
  value.shape = shape;
  values_.push_back(value);
  const size_t id = values_.size() - 1;
  host_.resize(values_.size());
  buffers_.resize(values_.size());
  views_.resize(values_.size());
  arena_offset_.resize(values_.size(), kOwnBuffer);
  arena_bytes_.resize(values_.size(), 0);
  texture_of_.resize(values_.size(), -1);
  external_.resize(values_.size());
  external_[id].buffer = buffer;
  external_[id].bytes = bytes;
  bound.externals.push_back(static_cast<ValueId>(id));
  return static_cast<ValueId>(id);
}

Status PartitionRuntime::AliasValue(ValueId value, GLuint buffer, size_t bytes,
                                    GLenum view_format, GpuBound& bound) {
  const size_t id = static_cast<size_t>(StorageRoot(values_, value));
  external_.resize(values_.size());
  ExternalStorage& storage = external_[id];
  storage.buffer = buffer;
  storage.bytes = bytes;
  storage.view = gl::TextureBufferView();
  // Read through a samplerBuffer where the runtime's own buffer is: the
  // shaders were compiled for that (same format family: R32F for BHWC
  // floats, RGBA32F for fp32 PHWC4; a half staging view R16F reads floats
  // either way).
  if (views_[id].id() != 0) {
    TFG_ASSIGN_OR_RETURN(storage.view,
                         gl::TextureBufferView::CreateForName(buffer, view_format, 0, bytes));
  }
  bound.aliased.push_back(static_cast<ValueId>(id));
  return Status::Ok();
}

StatusOr<PartitionRuntime::Step> PartitionRuntime::GpuIoStep(
    const char* variant, const Shape4& shape, ValueId output, ValueId input,
    ProgramCache& programs) {
  Dispatch dispatch;
  dispatch.shader = "gpu_io";
  dispatch.defines[variant] = "";
  dispatch.defines["TOTAL"] = std::to_string(shape.vec4_count());
  dispatch.defines["B"] = std::to_string(shape.b);
  dispatch.defines["H"] = std::to_string(shape.h);
  dispatch.defines["W"] = std::to_string(shape.w);
  dispatch.defines["C"] = std::to_string(shape.c);
  dispatch.defines["S"] = std::to_string(shape.slices());
  dispatch.grid = {static_cast<uint32_t>(shape.vec4_count()), 1, 1};
  dispatch.local = {device_.preferred_local_x, 1, 1};
  dispatch.outputs = {output};
  dispatch.inputs = {input};
  dispatch.label = std::string("bound buffer conversion (") + variant + ")";
  // The application's buffer read through a samplerBuffer where the device
  // reads staging that way (gpu_io.comp), if the view fits the device's limit.
  if (std::string(variant).rfind("APP_", 0) == 0) {
    const size_t id = static_cast<size_t>(input);
    const bool vec4s = std::string(variant) != "APP_BHWC_TO_TENSOR";
    const size_t texels = external_[id].bytes / (vec4s ? 16 : 4);
    const bool texbuf = device_.texture_buffer_reads || device_.staging_texture_reads;
    if (texbuf && texels <= static_cast<size_t>(device_.gpu->max_texture_buffer_texels)) {
      TFG_ASSIGN_OR_RETURN(external_[id].view,
                           gl::TextureBufferView::CreateForName(
                               external_[id].buffer, vec4s ? GL_RGBA32F : GL_R32F, 0,
                               external_[id].bytes));
    } else {
      dispatch.defines["APP_SSBO"] = "";
    }
  }
  return MakeStep(std::move(dispatch), programs);
}

Status PartitionRuntime::PlanBound(GpuBound& bound, ProgramCache& programs) {
  const Transfer* transfer = nullptr;
  for (const auto* list : {&uploads_, &downloads_}) {
    for (const Transfer& t : *list) {
      if (t.tflite_index == bound.tflite_index && !t.write_back &&
          (list == &uploads_) == bound.input) {
        transfer = &t;
      }
    }
  }
  if (transfer == nullptr) {
    return Status::Error("tensor " + std::to_string(bound.tflite_index) +
                         " is not a partition " + (bound.input ? "input" : "output"));
  }
  if (bound.input && (transfer->quantize || transfer->quantize_tail)) {
    // The upload puts this float input on the grid of the QUANTIZE that
    // reads it, partly on the CPU (TFLite's rounding of a tail of fewer
    // than 8 elements), and that QUANTIZE takes no step of its own: a bound
    // buffer would skip the rounding and the int8 model would read values
    // off its grid.
    return Status::Error("input tensor " + std::to_string(bound.tflite_index) +
                         " is rounded to the grid of the QUANTIZE that reads it while it is "
                         "uploaded; it cannot be bound on the GPU (set it through the "
                         "interpreter)");
  }
  // The binding holds floats (the float view): what read the packed bytes
  // reads them now.
  if (bound.input && transfer->packed) {
    TFG_RETURN_IF_ERROR(UseFloatStaging(transfer->buffer, bound, programs));
  }
  const Shape4 shape = transfer->shape;
  const GpuBufferRef& ref = bound.ref;
  const bool phwc4 = ref.layout == GpuLayout::kPhwc4Float32;
  // The layout conversion between the staging value and the tensor, if the
  // partition has one (a direct transfer has none: the staging value is the
  // tensor's own PHWC4 buffer).
  int conversion = -1;
  if (!transfer->direct) {
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Dispatch& d = steps_[i].dispatch;
      if (d.shader != "layout_convert") continue;
      const bool reads = !d.inputs.empty() && d.inputs[0] == transfer->buffer;
      const bool writes = !d.outputs.empty() && d.outputs[0] == transfer->buffer;
      if ((bound.input && reads && d.defines.count("TO_PHWC4")) ||
          (!bound.input && writes && d.defines.count("TO_BHWC"))) {
        conversion = static_cast<int>(i);
      }
    }
  }
  // The tensor's PHWC4 value: the direct buffer, or the conversion's other side.
  ValueId tensor = -1;
  if (transfer->direct) {
    tensor = transfer->buffer;
  } else if (conversion >= 0) {
    const Dispatch& d = steps_[static_cast<size_t>(conversion)].dispatch;
    tensor = bound.input ? d.outputs[0] : d.inputs[0];
  }
  const bool fp16 = device_.fp16;
  // An alias of the tensor needs its storage to be exactly this tensor's
  // float vec4s (a view's root may be laid out for another shape), with no
  // padded lanes: kernels read an input's as they are (an application's
  // may hold anything there) and may leave an output's nonzero.
  auto tensor_aliasable = [&]() {
    // A texture cannot be an application's buffer: RGBA textures convert.
    if (tensor < 0 || fp16 || shape.c % 4 != 0 || device_.rgba_textures) return false;
    // A BHWC buffer aliases a direct output's PHWC4 tensor only where the
    // layouts coincide (not where the CPU would relay it out).
    if (!phwc4 && transfer->relayout) return false;
    const ValueId root = StorageRoot(values_, tensor);
    return values_[static_cast<size_t>(root)].vec4_count() == shape.vec4_count();
  };
  const ValueId external = AddExternalValue(shape, ref.buffer, ref.bytes, bound);
  if (bound.input) {
    if (!phwc4 && !transfer->direct) {
      return AliasValue(transfer->buffer, ref.buffer, ref.bytes, GL_R32F, bound);
    }
    if (!phwc4) {  // direct: the tensor's own buffer is PHWC4
      TFG_ASSIGN_OR_RETURN(Step step, GpuIoStep("APP_BHWC_TO_TENSOR", shape, tensor,
                                                external, programs));
      bound.steps.push_back(std::move(step));
      return Status::Ok();
    }
    if (tensor >= 0) {
      bound.skipped_step = conversion;
      if (tensor_aliasable()) {
        return AliasValue(tensor, ref.buffer, ref.bytes, GL_RGBA32F, bound);
      }
      TFG_ASSIGN_OR_RETURN(Step step, GpuIoStep("APP_PHWC4_TO_TENSOR", shape, tensor,
                                                external, programs));
      bound.steps.push_back(std::move(step));
      return Status::Ok();
    }
    // The upload conversion was fused into the kernel that reads the BHWC
    // staging: PHWC4 -> BHWC floats into a buffer that stands in for it.
    const size_t bytes = GpuLayoutBytes(GpuLayout::kBhwcFloat32, shape);
    TFG_ASSIGN_OR_RETURN(bound.scratch, gl::Buffer::Create(bytes, nullptr, GL_STREAM_COPY));
    const ValueId scratch = AddExternalValue(shape, bound.scratch.id(), bytes, bound);
    TFG_ASSIGN_OR_RETURN(Step step, GpuIoStep("APP_PHWC4_TO_BHWC", shape, scratch,
                                              external, programs));
    bound.steps.push_back(std::move(step));
    return AliasValue(transfer->buffer, bound.scratch.id(), bytes, GL_R32F, bound);
  }
  // Outputs.
  if (!phwc4 && !transfer->direct) {
    return AliasValue(transfer->buffer, ref.buffer, ref.bytes, GL_R32F, bound);
  }
  if (phwc4 && conversion >= 0) bound.skipped_step = conversion;
  if (tensor_aliasable()) {
    return AliasValue(tensor, ref.buffer, ref.bytes, GL_RGBA32F, bound);
  }
  if (tensor < 0) {
    return Status::Error("output tensor " + std::to_string(bound.tflite_index) +
                         " has no GPU value to read (internal)");
  }
  TFG_ASSIGN_OR_RETURN(Step step, GpuIoStep(phwc4 ? "TENSOR_TO_APP_PHWC4"
                                                  : "TENSOR_TO_APP_BHWC",
                                            shape, external, tensor, programs));
  bound.steps.push_back(std::move(step));
  return Status::Ok();
}

Status PartitionRuntime::BindGpu(int tflite_index, GpuBinding binding,
                                 ProgramCache& programs) {
  TFG_RETURN_IF_ERROR(Allocate());
  const bool input = HasInput(tflite_index);
  if (!input && !HasOutput(tflite_index)) {
    return Status::Error("tensor " + std::to_string(tflite_index) +
                         " is not an input or output of this GPU partition");
  }
  UnbindGpu(tflite_index);
  // The output's own steps again (a fused readback's producer and conversion).
  if (!input) ApplyReadbackFusions(tflite_index);
  // A binding reads the resized tensor: the GPU's resize writes it again
  // (DeviceProfile::cpu_readback_resize), for as long as the runtime lives.
  for (Transfer& t : downloads_) {
    if (!input && t.tflite_index == tflite_index && t.resize.active) UseGpuResize(t);
  }
  programs_ = &programs;
  GpuBound bound;
  bound.tflite_index = tflite_index;
  bound.input = input;
  const Shape4 shape = TransferShape(tflite_index);
  bound.ref.layout = binding.layout;
  bound.ref.shape = shape;
  bound.ref.bytes = GpuLayoutBytes(binding.layout, shape);
  if (binding.buffer != 0) {
    if (binding.bytes != bound.ref.bytes) {
      return Status::Error("buffer " + std::to_string(binding.buffer) + " holds " +
                           std::to_string(binding.bytes) + " bytes; tensor " +
                           std::to_string(tflite_index) + " in " +
                           GpuLayoutName(binding.layout) + " needs " +
                           std::to_string(bound.ref.bytes));
    }
    bound.ref.buffer = binding.buffer;
  } else if (input ? binding.producer == nullptr : binding.sink == nullptr) {
    return Status::Error(std::string("a binding without a buffer needs a ") +
                         (input ? "producer" : "sink"));
  }
  bound.binding = std::move(binding);
  const GpuBinding& b = bound.binding;
  // A texture the partition's own dispatches read or write in place
  // (runtime_texture_io.cc); else, or for an output the interpreter may
  // copy back, a float buffer of our own that the producer fills / the sink
  // reads and that the runtime treats like an application's.
  bool in_place = false;
  if (b.buffer == 0) {
    GpuTextureAccess* texture = input ? b.producer->texture() : b.sink->texture();
    if (texture != nullptr) {
      auto planned = PlanTextureInPlace(bound, /*skip_conversion=*/!b.host_copy, programs);
      if (!planned.ok()) {
        ReleaseBound(bound);
        return planned.status();
      }
      in_place = *planned;
    }
  }
  if (b.buffer != 0 || !in_place || (!input && b.host_copy)) {
    if (b.buffer == 0) {
      TFG_ASSIGN_OR_RETURN(bound.own,
                           gl::Buffer::Create(bound.ref.bytes, nullptr, GL_STREAM_COPY));
      bound.ref.buffer = bound.own.id();
    }
    Status planned = PlanBound(bound, programs);
    if (!planned.ok()) {
      ReleaseBound(bound);
      return planned;
    }
  }
  skip_step_.resize(steps_.size(), 0);
  replaced_by_.resize(steps_.size(), nullptr);
  if (bound.skipped_step >= 0) skip_step_[static_cast<size_t>(bound.skipped_step)] = 1;
  if (bound.replaced_step >= 0) {
    replaced_by_[static_cast<size_t>(bound.replaced_step)] = bound.replacement.get();
  }
  for (auto* list : {&uploads_, &downloads_}) {
    for (Transfer& t : *list) {
      if (t.tflite_index == tflite_index && !t.write_back && (list == &uploads_) == input) {
        t.gpu_bound = true;
      }
    }
  }
  gpu_bound_.push_back(std::move(bound));
  return Status::Ok();
}

Status PartitionRuntime::UseFloatStaging(ValueId staging, GpuBound& bound,
                                         ProgramCache& programs) {
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Dispatch& d = steps_[i].dispatch;
    if (std::find(d.inputs.begin(), d.inputs.end(), staging) == d.inputs.end()) continue;
    Dispatch floats = d;
    for (const char* name : {"STAGED_BYTES", "STAGED_SCALE", "STAGED_ZERO_POINT",
                             "STAGED_FLIP"}) {
      floats.defines.erase(name);
    }
    if (floats.defines.erase("BHWC_BYTES_INPUT") != 0) floats.defines["BHWC_INPUT"] = "";
    // Only compiled-in defines differ: the step keeps its uniform range.
    StatusOr<Step> swapped = MakeStep(std::move(floats), programs, &steps_[i]);
    if (!swapped.ok()) return swapped.status();
    swapped->barrier_before = steps_[i].barrier_before;
    bound.swapped.emplace_back(i, std::move(steps_[i]));
    steps_[i] = std::move(*swapped);
  }
  return Status::Ok();
}

void PartitionRuntime::ReleaseBound(GpuBound& bound) {
  for (auto& [index, original] : bound.swapped) steps_[index] = std::move(original);
  bound.swapped.clear();
  // The views on the application's buffer go now (the values made for the
  // binding stay in values_, unused: ids must not move).
  for (const auto* ids : {&bound.aliased, &bound.externals}) {
    for (ValueId id : *ids) {
      if (static_cast<size_t>(id) < external_.size()) external_[id] = ExternalStorage();
    }
  }
  bound.aliased.clear();
  bound.externals.clear();
  if (bound.skipped_step >= 0 && static_cast<size_t>(bound.skipped_step) < skip_step_.size()) {
    skip_step_[static_cast<size_t>(bound.skipped_step)] = 0;
  }
  if (bound.replaced_step >= 0 &&
      static_cast<size_t>(bound.replaced_step) < replaced_by_.size()) {
    replaced_by_[static_cast<size_t>(bound.replaced_step)] = nullptr;
  }
}

bool PartitionRuntime::UnbindGpu(int tflite_index) {
  auto it = std::find_if(gpu_bound_.begin(), gpu_bound_.end(), [&](const GpuBound& b) {
    return b.tflite_index == tflite_index;
  });
  if (it == gpu_bound_.end()) return false;
  ReleaseBound(*it);
  for (auto* list : {&uploads_, &downloads_}) {
    for (Transfer& t : *list) {
      if (t.tflite_index == tflite_index && (list == &uploads_) == it->input) {
        t.gpu_bound = false;
      }
    }
  }
  gpu_bound_.erase(it);
  ApplyReadbackFusions();
  return true;
}

Status PartitionRuntime::RunBoundInputs() {
  bool any = false;
  bool dispatched = false;
  // An output texture written by a kernel's epilogue (runtime_texture_io.cc,
  // PlanTextureEpilogue) is used before RunBoundOutputs: checked here,
  // before any dispatch.
  for (GpuBound& bound : gpu_bound_) {
    if (!bound.input && bound.in_place != nullptr && bound.replaced_step >= 0) {
      TFG_RETURN_IF_ERROR(bound.in_place->Check());
    }
  }
  for (GpuBound& bound : gpu_bound_) {
    if (!bound.input) continue;
    // A texture read in place: still the one that was bound?
    if (bound.in_place != nullptr) TFG_RETURN_IF_ERROR(bound.in_place->Check());
    if (!any) {
      // Whatever the application did to its buffers and textures before
      // this invoke (shader writes, buffer updates) is visible to the
      // dispatches below. Where everything bound is a texture read or
      // written in place: the bits of our accesses to them (texelFetch;
      // image stores, which also wait for the application's earlier reads
      // of an output texture), not the buffer ones (see RunBoundOutputs).
      bool textures_only = true;
      for (const GpuBound& other : gpu_bound_) {
        if (other.in_place == nullptr) textures_only = false;
      }
      TFG_GL(glMemoryBarrier(textures_only ? GL_TEXTURE_FETCH_BARRIER_BIT |
                                                 GL_SHADER_IMAGE_ACCESS_BARRIER_BIT
                                           : GL_ALL_BARRIER_BITS));
      any = true;
    }
    if (bound.binding.producer && bound.in_place == nullptr) {
      TFG_RETURN_IF_ERROR(bound.binding.producer->Produce(bound.ref, *programs_));
      TFG_GL(glMemoryBarrier(GL_ALL_BARRIER_BITS));
    }
    for (const auto* list : {&bound.steps, &bound.texture_steps}) {
      for (const Step& step : *list) {
        TFG_RETURN_IF_ERROR(BindAndDispatch(step, /*barrier=*/false));
        dispatched = true;
      }
    }
  }
  // The partition's first dispatches read what the conversions wrote (SSBO
  // stores, read as SSBOs or texture buffers). A texture the first
  // convolution samples itself needs only the barrier above.
  if (dispatched) {
    TFG_GL(glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_TEXTURE_FETCH_BARRIER_BIT));
  }
  return Status::Ok();
}

Status PartitionRuntime::RunBoundOutputs() {
  bool any = false;
  bool converting = false;
  for (GpuBound& bound : gpu_bound_) {
    if (bound.input) continue;
    const bool epilogue = bound.in_place != nullptr && bound.replaced_step >= 0;
    if (bound.in_place != nullptr && !epilogue) TFG_RETURN_IF_ERROR(bound.in_place->Check());
    any = true;
    // Written by the producer's epilogue, with nothing left to dispatch
    // (no float buffer for the interpreter's copy): no barrier of its own.
    if (bound.in_place != nullptr && bound.steps.empty() && bound.texture_steps.empty()) {
      continue;
    }
    if (!converting) {
      // The partition's last stores (SSBO) before the conversions read
      // them (as SSBOs or texture buffers).
      TFG_GL(glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_TEXTURE_FETCH_BARRIER_BIT));
      converting = true;
    }
    // The float buffer's conversions and a texture written in place both
    // read the tensor: no barrier between them.
    for (const auto* list : {&bound.steps, &bound.texture_steps}) {
      for (const Step& step : *list) {
        TFG_RETURN_IF_ERROR(BindAndDispatch(step, /*barrier=*/false));
      }
    }
    if (bound.binding.sink && bound.in_place == nullptr) {
      TFG_GL(glMemoryBarrier(GL_ALL_BARRIER_BITS));
      TFG_RETURN_IF_ERROR(bound.binding.sink->Consume(bound.ref, *programs_));
    }
  }
  // The application may read its buffers and textures any way next (map,
  // copy, vertex fetch, sampling, framebuffer reads, shader): every kind of
  // access sees these writes. Where every bound output is a texture written
  // in place and nothing of ours is read back for the interpreter, only the
  // bits of accesses a texture can have (GLES 3.1, glMemoryBarrier:
  // sampling, image load/store, framebuffer attachment reads and blits,
  // glTexSubImage/glCopyTexSubImage, glReadPixels into a pixel buffer); the
  // others concern buffer objects, and on the H100 a barrier with the
  // client-mapped bit cost ~8 us per frame (docs/perf/log.md, "tex4").
  if (any) {
    bool textures_only = true;
    for (const GpuBound& bound : gpu_bound_) {
      if (!bound.input && (bound.in_place == nullptr || bound.binding.host_copy)) {
        textures_only = false;
      }
    }
    TFG_GL(glMemoryBarrier(textures_only ? GL_TEXTURE_FETCH_BARRIER_BIT |
                                               GL_SHADER_IMAGE_ACCESS_BARRIER_BIT |
                                               GL_FRAMEBUFFER_BARRIER_BIT |
                                               GL_TEXTURE_UPDATE_BARRIER_BIT |
                                               GL_PIXEL_BUFFER_BARRIER_BIT
                                         : GL_ALL_BARRIER_BITS));
  }
  return Status::Ok();
}

}  // namespace tflite_gles
