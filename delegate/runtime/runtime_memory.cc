// PartitionRuntime, allocation (the plan made real): GL buffers, the arena
// of planned tensors, texture-buffer views, staging buffers, the uniform
// buffer and the barriers between dispatches. The partition's build is in
// runtime.cc, invoke in runtime_invoke.cc, the CPU side of transfers in
// runtime_transfer.cc.
#include "delegate/runtime/runtime.h"

#include <GLES2/gl2ext.h>
#include <GLES3/gl32.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "delegate/abi/half.h"
#include "delegate/passes/memory_planner.h"
#include "delegate/passes/schedule.h"
#include "egl/gl_call.h"

namespace tflite_gles {

namespace {

// Mesa llvmpipe (22.3) keys the machine code it JIT-compiles for a compute
// program on facts about each bound texture view: whether its buffer's size
// is a power of two, and a "level zero only" flag that for a buffer view it
// reads, through a union, from bits 8-15 of the view's byte size. A program
// dispatched on buffers that differ in either is compiled once more
// (MobileNet v1: 3 of its 10 programs twice, ≈ 80 ms each; docs/perf/log.md,
// "Cold init (coldinit)"). Buffers and views a few 256-byte steps longer,
// never a power of two and never zero in those bits, keep one variant per
// program; shaders never read the extra texels. Other drivers get the exact
// size.
size_t ViewBytes(size_t bytes, bool llvmpipe) {
  if (!llvmpipe) return bytes;
  auto power_of_two = [](size_t n) { return n != 0 && (n & (n - 1)) == 0; };
  while (power_of_two(bytes) || ((bytes >> 8) & 0xff) == 0) bytes += 256;
  return bytes;
}

}  // namespace

Status PartitionRuntime::AllocateArena() {
  const size_t vec4_bytes = device_.fp16 ? 8 : 16;
  arena_offset_.assign(values_.size(), kOwnBuffer);
  arena_bytes_.assign(values_.size(), 0);
  if (!device_.plan_memory) return Status::Ok();
  std::vector<const Dispatch*> dispatches;
  for (const Step& step : steps_) dispatches.push_back(&step.dispatch);
  // The CPU reads and writes these outside the dispatches.
  std::vector<bool> excluded(values_.size(), false);
  for (size_t i = 0; i < values_.size(); ++i) {
    excluded[i] = host_[i].role != HostSide::kNone || texture_of_[i] != -1;
  }
  const std::vector<TensorLifetime> lifetimes =
      TensorLifetimes(values_, dispatches, excluded, vec4_bytes);
  // Every range is bound as an SSBO and viewed as a texture buffer, so
  // offsets satisfy both alignments (and whole texels).
  const egl::GpuInfo& gpu = *device_.gpu;
  size_t alignment = std::lcm<size_t>(vec4_bytes, 16);
  alignment = std::lcm<size_t>(alignment, static_cast<size_t>(std::max(1, gpu.ssbo_offset_alignment)));
  alignment = std::lcm<size_t>(
      alignment, static_cast<size_t>(std::max(1, gpu.texture_buffer_offset_alignment)));
  const MemoryPlan plan = PlanMemory(lifetimes, alignment);
  if (plan.arena_bytes == 0) return Status::Ok();
  const bool llvmpipe = gpu.IsLlvmpipe();
  size_t arena_bytes = plan.arena_bytes;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (lifetimes[i].bytes == 0 || !device_.texture_buffer_reads) continue;
    arena_bytes = std::max(arena_bytes,
                           plan.offsets[i] + ViewBytes(lifetimes[i].bytes, llvmpipe));
  }
  arena_bytes = ViewBytes(arena_bytes, llvmpipe);
  auto arena = gl::Buffer::Create(arena_bytes, nullptr, GL_STATIC_DRAW);
  if (!arena.ok()) {
    return arena.status().WithContext("allocating the arena of intermediate tensors");
  }
  arena_ = std::move(*arena);
  for (size_t i = 0; i < values_.size(); ++i) {
    if (lifetimes[i].bytes == 0) continue;
    arena_offset_[i] = plan.offsets[i];
    arena_bytes_[i] = lifetimes[i].bytes;
    ++memory_.arena_tensors;
    if (device_.texture_buffer_reads) {
      const size_t texels = lifetimes[i].bytes / vec4_bytes;
      if (texels > static_cast<size_t>(gpu.max_texture_buffer_texels)) {
        return Status::Error("a tensor of " + std::to_string(texels) +
                             " texels exceeds GL_MAX_TEXTURE_BUFFER_SIZE " +
                             std::to_string(gpu.max_texture_buffer_texels));
      }
      TFG_ASSIGN_OR_RETURN(
          views_[i], gl::TextureBufferView::Create(
                         arena_, device_.fp16 ? GL_RGBA16F : GL_RGBA32F,
                         plan.offsets[i], ViewBytes(lifetimes[i].bytes, llvmpipe)));
    }
  }
  memory_.sum_bytes = static_cast<long long>(plan.sum_bytes);
  memory_.arena_bytes = static_cast<long long>(arena_.bytes());
  memory_.lower_bound_bytes = static_cast<long long>(plan.lower_bound_bytes);
  gpu_bytes_ += memory_.arena_bytes;
  return Status::Ok();
}

Status PartitionRuntime::ChooseTextureValues() {
  texture_of_.assign(values_.size(), -1);
  if (!device_.rgba_textures) return Status::Ok();
  std::vector<bool> read_write(values_.size(), false);
  for (const Step& step : steps_) {
    for (ValueId id : step.dispatch.read_write) read_write[StorageRoot(values_, id)] = true;
  }
  for (const Step& step : steps_) {
    for (const auto* ids : {&step.dispatch.outputs, &step.dispatch.inputs}) {
      for (ValueId id : *ids) {
        const size_t root = static_cast<size_t>(StorageRoot(values_, id));
        // Staging buffers (BHWC floats the CPU writes or reads) are bound
        // through FLOATS_IN / FLOATS_OUT, never as tensors.
        if (host_[root].bhwc) continue;
        if (read_write[root]) {
          return Status::Error(step.dispatch.label +
                               ": a read-write buffer is also bound as a tensor (internal)");
        }
        texture_of_[root] = kTextureWanted;
      }
    }
  }
  return Status::Ok();
}

Status PartitionRuntime::AllocateTextures() {
  std::vector<const Dispatch*> dispatches;
  for (const Step& step : steps_) dispatches.push_back(&step.dispatch);
  std::vector<bool> excluded(values_.size(), false);
  for (size_t i = 0; i < values_.size(); ++i) excluded[i] = texture_of_[i] != kTextureWanted;
  // Lifetimes in texels (1 "byte" per vec4).
  const std::vector<TensorLifetime> lifetimes =
      TensorLifetimes(values_, dispatches, excluded, 1);
  const TexturePlan plan = PlanTextures(lifetimes, device_.plan_memory);
  const int first = static_cast<int>(textures_.size());
  const size_t vec4_bytes = device_.fp16 ? 8 : 16;
  for (size_t s = 0; s < plan.slot_bytes.size(); ++s) {
    const Value& owner = values_[plan.slot_owner[s]];
    TFG_ASSIGN_OR_RETURN(
        gl::TextureExtent extent,
        gl::TensorTextureExtent(static_cast<long long>(plan.slot_bytes[s]), owner.shape.w,
                                device_.gpu->max_texture_size, device_.texture_row_width));
    auto texture = gl::TensorTexture::Create(extent, device_.fp16);
    if (!texture.ok()) {
      return texture.status().WithContext("allocating the textures of intermediate tensors");
    }
    memory_.arena_bytes += static_cast<long long>(texture->bytes());
    gpu_bytes_ += static_cast<long long>(texture->bytes());
    textures_.push_back(std::move(*texture));
  }
  for (size_t i = 0; i < values_.size(); ++i) {
    if (plan.slot[i] < 0) continue;
    texture_of_[i] = first + plan.slot[i];
    ++memory_.arena_tensors;
    memory_.sum_bytes += static_cast<long long>(lifetimes[i].bytes * vec4_bytes);
  }
  return Status::Ok();
}

Status PartitionRuntime::Allocate() {
  if (allocated_) return Status::Ok();
  const size_t vec4_bytes = device_.fp16 ? 8 : 16;
  buffers_.resize(values_.size());
  views_.resize(values_.size());
  gpu_bytes_ = 0;
  memory_ = MemoryStats();
  TFG_RETURN_IF_ERROR(ChooseTextureValues());
  TFG_RETURN_IF_ERROR(AllocateArena());
  if (device_.rgba_textures) TFG_RETURN_IF_ERROR(AllocateTextures());
  if (!uniform_data_.empty()) {
    auto uniforms = gl::Buffer::Create(uniform_data_.size(), uniform_data_.data(),
                                       GL_STATIC_DRAW);
    if (!uniforms.ok()) {
      return uniforms.status().WithContext("allocating the dispatch uniforms");
    }
    uniforms_ = std::move(*uniforms);
    gpu_bytes_ += static_cast<long long>(uniforms_.bytes());
    memory_.other_bytes += static_cast<long long>(uniforms_.bytes());
  }
  // Values no dispatch binds (e.g. a convolution output that fusion folded
  // into its consumer, delegate/passes/fusion.h) get no buffer.
  std::vector<bool> bound(values_.size(), false);
  for (const Step& step : steps_) {
    for (const auto* ids : {&step.dispatch.outputs, &step.dispatch.inputs,
                            &step.dispatch.read_write}) {
      for (ValueId id : *ids) {
        bound[StorageRoot(values_, id)] = true;
      }
    }
  }
  // Cacheable constants get empty buffers here, filled after the loop from
  // the cache entry or by converting them (UploadModelData).
  ModelData data = PlanModelData(vec4_bytes);
  for (size_t i = 0; i < values_.size(); ++i) {
    Value& value = values_[i];
    if (value.storage_of >= 0) continue;  // a view: bound through its root
    if (arena_offset_[i] != kOwnBuffer) continue;  // lives in the arena
    if (texture_of_[i] >= 0) continue;  // in a shared texture (AllocateTextures)
    // Nor does an input no dispatch reads (its conversion was fused into
    // the kernel that reads the staging buffer, delegate/passes/upload_fusion.h).
    const HostSide& host = host_[i];
    // Nor a constant a pass emptied when it joined its data into another
    // (delegate/passes/gemm_batching.h).
    if (!bound[i] && host.role == HostSide::kNone &&
        (value.kind == Value::Kind::kIntermediate || value.kind == Value::Kind::kInput ||
         (value.kind == Value::Kind::kConstant && !value.lazy &&
          value.constant_data.empty()))) {
      continue;
    }
    size_t bytes;
    std::vector<uint16_t> halves;
    const void* initial = nullptr;
    const size_t staged_element_bytes = host.half ? sizeof(uint16_t) : sizeof(float);
    if (host.packed) {  // 8-bit elements in whole uints
      bytes = (static_cast<size_t>(value.shape.elements()) + 3) / 4 * 4;
    } else if (host.bhwc) {
      bytes = static_cast<size_t>(value.shape.elements()) * staged_element_bytes;
    } else {
      bytes = static_cast<size_t>(value.vec4_count()) * vec4_bytes;
    }
    if (value.kind == Value::Kind::kConstant && data.slot.count(i) == 0) {
      initial = ConstantUploadBytes(value, &halves);
    }
    if (texture_of_[i] == kTextureWanted) {
      // A constant (or a tensor no lifetime covers): a texture of its own,
      // rows of its W (constants: as wide as the device allows).
      const int width = value.kind == Value::Kind::kConstant ? 0 : value.shape.w;
      TFG_ASSIGN_OR_RETURN(gl::TextureExtent extent,
                           gl::TensorTextureExtent(value.vec4_count(), width,
                                                   device_.gpu->max_texture_size,
                                                   device_.texture_row_width));
      TFG_ASSIGN_OR_RETURN(gl::TensorTexture texture,
                           gl::TensorTexture::Create(extent, device_.fp16));
      if (initial != nullptr) {
        TFG_RETURN_IF_ERROR(texture.Upload(initial, value.vec4_count()));
      }
      gpu_bytes_ += static_cast<long long>(texture.bytes());
      memory_.other_bytes += static_cast<long long>(texture.bytes());
      texture_of_[i] = static_cast<int>(textures_.size());
      textures_.push_back(std::move(texture));
      continue;
    }
    const bool upload = host.role == HostSide::kUpload;
    const bool download = host.role == HostSide::kDownload;
    GLenum usage = GL_STATIC_DRAW;
    if (upload) usage = device_.upload_usage;
    if (download) usage = GL_STREAM_READ;  // docs/perf/log.md, "Retired switches"
    const bool viewed = device_.texture_buffer_reads ||
                        (device_.staging_texture_reads && host.bhwc && upload);
    const size_t buffer_bytes =
        viewed ? ViewBytes(bytes, device_.gpu->IsLlvmpipe()) : bytes;
    // A direct upload writes only the elements: PHWC4's padded lanes must
    // read as zero (a NaN there would reach a GEMM's sums).
    std::vector<uint8_t> zeros;
    if (upload && !host.bhwc && !device_.mapped_upload_staging) {
      zeros.assign(buffer_bytes, 0);
      initial = zeros.data();
    }
    // Staging that may be a TFLite tensor's memory (runtime_alias.cc) is
    // mapped for both: TFLite's side may read an input and write an output.
    StatusOr<gl::Buffer> buffer =
        SharedWithTflite(i) ? gl::Buffer::CreateMappedReadWrite(buffer_bytes)
        : upload && device_.mapped_upload_staging
            ? gl::Buffer::CreateMappedForWrite(buffer_bytes)
        : download && device_.mapped_readback()
            ? gl::Buffer::CreateMappedForRead(buffer_bytes)
            : gl::Buffer::Create(buffer_bytes,
                                 buffer_bytes == bytes || !zeros.empty() ? initial : nullptr,
                                 usage);
    if (!buffer.ok()) return buffer.status();
    if (buffer_bytes != bytes && initial != nullptr && zeros.empty()) {
      TFG_RETURN_IF_ERROR(buffer->Upload(0, bytes, initial));
    }
    gpu_bytes_ += static_cast<long long>(buffer->bytes());
    memory_.other_bytes += static_cast<long long>(buffer->bytes());
    if (viewed) {
      const GLenum format = host.packed ? GL_R32UI
                            : host.bhwc ? (host.half ? GL_R16F : GL_R32F)
                            : device_.fp16 ? GL_RGBA16F : GL_RGBA32F;
      const size_t texel = host.packed ? sizeof(uint32_t)
                           : host.bhwc ? staged_element_bytes : vec4_bytes;
      if (bytes / texel > static_cast<size_t>(device_.gpu->max_texture_buffer_texels)) {
        return Status::Error("a tensor of " + std::to_string(bytes / texel) +
                             " texels exceeds GL_MAX_TEXTURE_BUFFER_SIZE " +
                             std::to_string(device_.gpu->max_texture_buffer_texels));
      }
      TFG_ASSIGN_OR_RETURN(views_[i], gl::TextureBufferView::Create(
                                          *buffer, format, 0, buffer->bytes()));
    }
    buffers_[i] = std::move(*buffer);
  }
  TFG_RETURN_IF_ERROR(UploadModelData(&data));
  StoreModelData(data);
  PlaceBarriers();
  std::vector<std::string> labels;
  for (const Step& step : steps_) {
    labels.push_back(step.dispatch.shader + " " + step.dispatch.label);
  }
  timeline_.Configure(device_.report_phases, device_.report_timeline,
                      device_.gpu_timer_queries,
                      std::move(labels));
  allocated_ = true;
  return Status::Ok();
}

void PartitionRuntime::PlaceBarriers() {
  std::vector<StepMemory> memory(steps_.size());
  auto range_of = [this](ValueId view) {
    const size_t id = static_cast<size_t>(StorageRoot(values_, view));
    // Texture names are another namespace than buffer names: the high bit
    // keeps a texture from matching the buffer of the same number.
    if (IsTexture(id)) {
      const gl::TensorTexture& texture = textures_[static_cast<size_t>(texture_of_[id])];
      return MemoryRange{texture.id() | 0x80000000u, 0, texture.bytes()};
    }
    if (arena_offset_[id] != kOwnBuffer) {
      return MemoryRange{arena_.id(), arena_offset_[id], arena_offset_[id] + arena_bytes_[id]};
    }
    return MemoryRange{buffers_[id].id(), 0, buffers_[id].bytes()};
  };
  for (size_t i = 0; i < steps_.size(); ++i) {
    for (ValueId id : steps_[i].dispatch.inputs) memory[i].reads.push_back(range_of(id));
    for (ValueId id : steps_[i].dispatch.outputs) memory[i].writes.push_back(range_of(id));
    for (ValueId id : steps_[i].dispatch.read_write) {
      memory[i].reads.push_back(range_of(id));
      memory[i].writes.push_back(range_of(id));
    }
  }
  const std::vector<bool> barriers = BarriersBefore(memory);
  barriers_ = 0;
  for (size_t i = 0; i < steps_.size(); ++i) {
    steps_[i].barrier_before = barriers[i];
    barriers_ += barriers[i] ? 1 : 0;
  }
  if (device_.report_phases) {
    std::fprintf(stderr, "INFO: tflite-gles: %zu dispatches, %d memory barriers\n",
                 steps_.size(), barriers_);
  }
}

}  // namespace tflite_gles
