#include "delegate/runtime/runtime.h"

#include <GLES2/gl2ext.h>
#include <GLES3/gl32.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "delegate/passes/dw_fusion.h"
#include "delegate/passes/dw_splitk.h"
#include "delegate/passes/fusion.h"
#include "delegate/passes/schedule.h"
#include "delegate/runtime/host_copy.h"
#include "delegate/passes/upload_fusion.h"
#include "delegate/abi/half.h"
#include "delegate/runtime/half_convert.h"
#include "delegate/runtime/transfer_layout.h"
#include "egl/gl_call.h"

namespace tflite_gles {

namespace {

// Whether a gemm.comp dispatch compiles its shapes in
// (DeviceProfile::specialize_gemm_below_rows). Decided when programs are
// built, after the fusions, which leave specialized dispatches alone.
bool SpecializeGemm(const Dispatch& dispatch, long long below_rows) {
  if (dispatch.shader != "gemm" || below_rows <= 0) return false;
  auto rows = dispatch.defines.find("ROWS");
  if (rows == dispatch.defines.end()) return false;
  char* end = nullptr;
  const long long value = std::strtoll(rows->second.c_str(), &end, 10);
  return *end == '\0' && value < below_rows;
}

size_t ElementBytes(abi::Type type) {
  switch (type) {
    case abi::kFloat32: return sizeof(float);
    case abi::kInt32: return sizeof(int32_t);
    case abi::kBool: return 1;
    default: return 0;
  }
}


// Partition inputs and outputs cross to the GPU through float staging
// buffers: float32 as is, int32 and bool converted (see Transfer). Kernels
// decline other types; this catches one that forgot to, at build time.
Status CheckStagedType(const GraphBuilder& builder, int index, const char* role) {
  const abi::Tensor& tensor = builder.graph().context()->tensors[index];
  if (ElementBytes(tensor.type) == 0) {
    return Status::Error(std::string("partition ") + role + " tensor " +
                         std::to_string(index) + " is " + TypeName(tensor.type) +
                         "; only float32, int32 and bool cross to the GPU");
  }
  return Status::Ok();
}
// Whether PHWC4 puts every element of `shape` where BHWC does: one slice
// of exactly 4 channels, or one pixel per batch with whole slices (or one
// batch). Then a direct transfer is a plain copy (or float <-> half); the
// padded lanes after the last element stay as they are (zeros for uploads,
// see Buffer::CreateMappedForWrite).
bool Phwc4IsBhwc(const Shape4& shape) {
  if (shape.c == 4) return true;
  return shape.h == 1 && shape.w == 1 && (shape.b == 1 || shape.c % 4 == 0);
}

}  // namespace

StatusOr<std::unique_ptr<PartitionRuntime>> PartitionRuntime::Create(
    GraphBuilder& builder, const std::vector<int>& inputs,
    const std::vector<int>& outputs, const DeviceProfile& device,
    ProgramCache& programs) {
  std::unique_ptr<PartitionRuntime> runtime(new PartitionRuntime());
  runtime->device_ = device;
  std::vector<Dispatch> kernel_dispatches = builder.TakeDispatches();

  // Staging buffers hold TFLite's BHWC floats; conversion shaders move them
  // to and from PHWC4 on the GPU.
  auto convert = [&](ValueId tensor, ValueId staging, bool to_phwc4) {
    const Shape4 shape = builder.shape(tensor);
    Dispatch dispatch;
    dispatch.shader = "layout_convert";
    dispatch.defines[to_phwc4 ? "TO_PHWC4" : "TO_BHWC"] = "";
    // One invocation per PHWC4 vec4, or per BHWC float for readbacks where
    // the device wants whole runs of stores (layout_convert.comp).
    const bool per_float = !to_phwc4 && device.per_float_readback;
    if (per_float) dispatch.defines["PER_FLOAT"] = "";
    const long long invocations = per_float ? shape.elements() : shape.vec4_count();
    dispatch.defines["TOTAL"] = std::to_string(invocations);
    dispatch.defines["B"] = std::to_string(shape.b);
    dispatch.defines["H"] = std::to_string(shape.h);
    dispatch.defines["W"] = std::to_string(shape.w);
    dispatch.defines["C"] = std::to_string(shape.c);
    dispatch.defines["S"] = std::to_string(shape.slices());
    dispatch.grid = {static_cast<uint32_t>(invocations), 1, 1};
    dispatch.local = {device.preferred_local_x, 1, 1};
    dispatch.outputs = {to_phwc4 ? tensor : staging};
    dispatch.inputs = {to_phwc4 ? staging : tensor};
    dispatch.label = to_phwc4 ? "upload conversion" : "readback conversion";
    return dispatch;
  };

  std::vector<Dispatch> pre, post;
  // Roots of the values a kernel dispatch writes or reads: a tensor's own
  // buffer is read back directly only where the CPU is its one reader.
  std::vector<bool> written, read;
  auto root_of = [&](ValueId id) {
    const ValueId root = builder.value(id).storage_of;
    return static_cast<size_t>(root >= 0 ? root : id);
  };
  for (const Dispatch& d : kernel_dispatches) {
    for (const auto& [ids, marks] : {std::pair{&d.outputs, &written}, {&d.inputs, &read}}) {
      for (ValueId id : *ids) {
        const size_t root = root_of(id);
        if (marks->size() <= root) marks->resize(root + 1, false);
        (*marks)[root] = true;
      }
    }
  }
  auto marked = [](const std::vector<bool>& marks, size_t id) {
    return id < marks.size() && marks[id];
  };
  // fp16 storage: inputs staged as halves where the conversion reads its
  // staging through a samplerBuffer view, whose R16F format hands the
  // shader floats either way.
  const bool half_staging = device.fp16 && device.half_upload_staging &&
                            (device.texture_buffer_reads || device.staging_texture_reads);
  std::vector<size_t> direct_inputs;
  for (int index : inputs) {
    TFG_RETURN_IF_ERROR(builder.MarkInput(index));
    TFG_ASSIGN_OR_RETURN(ValueId value, builder.TensorValue(index));
    if (builder.value(value).kind == Value::Kind::kConstant) continue;
    TFG_RETURN_IF_ERROR(CheckStagedType(builder, index, "input"));
    const Shape4 shape = builder.shape(value);  // a copy: NewTemporary grows the values
    const abi::Type type = builder.graph().context()->tensors[index].type;
    const size_t elements = static_cast<size_t>(shape.elements());
    const size_t stored_bytes =
        static_cast<size_t>(shape.vec4_count()) * (device.fp16 ? 8 : 16);
    // Direct up to a size (consumers then read host memory over PCIe on a
    // discrete GPU, on every read), relaid out on the CPU where PHWC4 is
    // not BHWC.
    if (device.direct_transfers && builder.value(value).storage_of < 0 &&
        stored_bytes <= device.direct_max_bytes) {
      runtime->uploads_.push_back({index, value, elements, type, device.fp16, true,
                                   !Phwc4IsBhwc(shape), shape});
      direct_inputs.push_back(static_cast<size_t>(value));
      continue;
    }
    ValueId staging = builder.NewTemporary(shape);
    pre.push_back(convert(value, staging, /*to_phwc4=*/true));
    runtime->uploads_.push_back(
        {index, staging, elements, type, half_staging, false, false, shape});
  }
  for (int index : outputs) {
    TFG_ASSIGN_OR_RETURN(ValueId value, builder.TensorValue(index));
    if (builder.value(value).kind == Value::Kind::kConstant) {
      // No GPU work: the folded values are written on every Invoke.
      TFG_ASSIGN_OR_RETURN(std::vector<float> values,
                           builder.graph().ConstantFloats(index));
      runtime->constant_outputs_.push_back({index, std::move(values)});
      continue;
    }
    TFG_RETURN_IF_ERROR(CheckStagedType(builder, index, "output"));
    TFG_RETURN_IF_ERROR(builder.MarkOutput(index));
    const Shape4 shape = builder.shape(value);  // a copy: NewTemporary grows the values
    const size_t elements = static_cast<size_t>(shape.elements());
    const abi::Type type = builder.graph().context()->tensors[index].type;
    const size_t root = root_of(value);
    // Direct: where PHWC4 is BHWC, a kernel writes it, none reads it, and
    // it is no partition input (whose buffer the CPU writes). Not for other
    // layouts, even small ones: the kernel then wrote PHWC4 slices into host
    // memory and the CPU relaid them out, and face detection's two outputs
    // (896x16, 896x1) took 12 us longer that way than with their readback
    // conversions (H200; docs/perf/log.md, "Transfers (xfer)").
    if (device.direct_transfers && Phwc4IsBhwc(shape) && marked(written, root) &&
        !marked(read, root) &&
        std::find(direct_inputs.begin(), direct_inputs.end(), root) == direct_inputs.end() &&
        builder.value(static_cast<ValueId>(root)).kind != Value::Kind::kInput) {
      runtime->downloads_.push_back(
          {index, static_cast<ValueId>(root), elements, type, device.fp16, true,
           false, shape});
      continue;
    }
    ValueId staging = builder.NewTemporary(shape);
    post.push_back(convert(value, staging, /*to_phwc4=*/false));
    runtime->downloads_.push_back(
        {index, staging, elements, type, false, false, false, shape});
  }
  for (const auto& [value, index] : builder.write_backs()) {
    // Only partition inputs: their TFLite buffers are the caller's to read.
    if (std::find(inputs.begin(), inputs.end(), index) == inputs.end()) continue;
    ValueId staging = builder.NewTemporary(builder.shape(value));
    post.push_back(convert(value, staging, /*to_phwc4=*/false));
    runtime->downloads_.push_back(
        {index, staging, static_cast<size_t>(builder.shape(value).elements()),
         builder.graph().context()->tensors[index].type, false, false, false,
         builder.shape(value)});
  }
  runtime->values_ = builder.TakeValues();
  if (device.fuse_epilogues) {
    // Elementwise consumers fold into their convolution's store
    // (delegate/passes/fusion.h); write-back sources must stay in memory.
    std::vector<ValueId> keep;
    for (const auto& [value, index] : builder.write_backs()) keep.push_back(value);
    runtime->fused_ = FuseEpilogues(runtime->values_, keep, &kernel_dispatches,
                                    device.fuse_elementwise_chains);
    runtime->fused_ += FuseDepthwiseIntoGemm(device, &runtime->values_, keep, &kernel_dispatches);
    SplitDepthwiseGemmsAcrossWorkgroups(device, &runtime->values_, &kernel_dispatches);
    runtime->fused_ += FuseMeanIntoGemm(device, runtime->values_, keep, &kernel_dispatches);
    runtime->fused_ += FuseSoftmaxIntoGemm(device, &runtime->values_, keep, &kernel_dispatches);
  }
  if (device.fuse_upload_into_conv) {
    runtime->fused_ += FuseUploadConversions(runtime->values_, &pre, &kernel_dispatches, post);
  }
  // Buffers the CPU writes or reads: each its own buffer, outside the arena.
  runtime->host_.assign(runtime->values_.size(), HostSide());
  for (const Transfer& t : runtime->uploads_) {
    runtime->host_[t.buffer] = {HostSide::kUpload, !t.direct, t.half};
  }
  for (const Transfer& t : runtime->downloads_) {
    runtime->host_[t.buffer] = {HostSide::kDownload, !t.direct, t.half};
  }

  // Independent dispatches next to each other, so that no barrier
  // separates them (delegate/passes/schedule.h); before memory planning, which
  // then sees the lifetimes of this order.
  if (device.order_by_level) OrderByLevel(runtime->values_, &kernel_dispatches);
  for (Dispatch& d : pre) TFG_RETURN_IF_ERROR(runtime->AddStep(std::move(d), programs));
  for (Dispatch& d : kernel_dispatches) {
    TFG_RETURN_IF_ERROR(runtime->AddStep(std::move(d), programs));
  }
  for (Dispatch& d : post) TFG_RETURN_IF_ERROR(runtime->AddStep(std::move(d), programs));
  return runtime;
}

Status PartitionRuntime::AddStep(Dispatch dispatch, ProgramCache& programs) {
  const egl::GpuInfo& gpu = *device_.gpu;
  Step step;
  for (int axis = 0; axis < 3; ++axis) {
    const uint32_t local = dispatch.local[axis] == 0 ? 1 : dispatch.local[axis];
    step.groups[axis] = (dispatch.grid[axis] + local - 1) / local;
    if (step.groups[axis] == 0) step.groups[axis] = 1;
  }
  // A long 1-D grid is folded over y; shaders index it with global_index().
  const uint32_t max_x = static_cast<uint32_t>(gpu.max_workgroup_count[0]);
  if (step.groups[0] > max_x) {
    if (step.groups[1] != 1 || step.groups[2] != 1) {
      return Status::Error(dispatch.label + ": grid of " +
                           std::to_string(step.groups[0]) +
                           " workgroups exceeds the device limit " +
                           std::to_string(max_x));
    }
    step.groups[1] = (step.groups[0] + max_x - 1) / max_x;
    step.groups[0] = max_x;
  }
  for (int axis = 1; axis < 3; ++axis) {
    if (step.groups[axis] > static_cast<uint32_t>(gpu.max_workgroup_count[axis])) {
      return Status::Error(dispatch.label + ": workgroup count exceeds the device limit");
    }
  }
  dispatch.defines["LOCAL_X"] = std::to_string(dispatch.local[0]);
  dispatch.defines["LOCAL_Y"] = std::to_string(dispatch.local[1]);
  dispatch.defines["LOCAL_Z"] = std::to_string(dispatch.local[2]);
  // Read-write buffers follow the outputs and inputs (BindAndDispatch).
  for (size_t k = 0; k < dispatch.read_write.size(); ++k) {
    dispatch.defines["READ_WRITE_BINDING_" + std::to_string(k)] =
        std::to_string(dispatch.outputs.size() + dispatch.inputs.size() + k);
  }
  TFG_ASSIGN_OR_RETURN(std::string body, gl::EmbeddedShader(dispatch.shader));
  const bool specialize = dispatch.specialize || device_.specialize_shapes ||
                          SpecializeGemm(dispatch, device_.specialize_gemm_below_rows);
  gl::StorageChoice storage;
  storage.fp16 = device_.fp16;
  storage.texture_buffer_reads = device_.texture_buffer_reads;
  storage.staging_texture_reads = device_.staging_texture_reads;
  storage.texture_buffer_extension = gpu.texture_buffer_extension;
  TFG_ASSIGN_OR_RETURN(std::string source,
                       gl::AssembleShader(dispatch.shader, body, storage,
                                          dispatch.defines, specialize));
  auto program = programs.Get(source);
  if (!program.ok()) {
    return program.status().WithContext(dispatch.label + " (shader " +
                                        dispatch.shader + ")");
  }
  // The values of the shader's @uniform names (egl/shader_source.h). Every
  // step's block goes into one buffer, written at Allocate; each dispatch
  // binds its own range.
  auto uniforms = gl::ShaderUniformValues(dispatch.shader, body,
                                          dispatch.defines, specialize);
  if (!uniforms.ok()) return uniforms.status().WithContext(dispatch.label);
  const std::vector<int32_t>& block = *uniforms;
  if (!block.empty()) {
    // Ranges start at the device's binding alignment; std140 rounds a
    // block of ints up to 16 bytes.
    const size_t alignment = static_cast<size_t>(
        std::max(16, gpu.uniform_buffer_offset_alignment));
    step.uniform_offset = (uniform_data_.size() + alignment - 1) / alignment * alignment;
    step.uniform_bytes = (block.size() * sizeof(int32_t) + 15) / 16 * 16;
    uniform_data_.resize(step.uniform_offset + step.uniform_bytes, 0);
    std::memcpy(uniform_data_.data() + step.uniform_offset, block.data(),
                block.size() * sizeof(int32_t));
  }
  step.program = *program;
  step.dispatch = std::move(dispatch);
  steps_.push_back(std::move(step));
  return Status::Ok();
}

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
    excluded[i] = host_[i].role != HostSide::kNone;
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

Status PartitionRuntime::Allocate() {
  if (allocated_) return Status::Ok();
  const size_t vec4_bytes = device_.fp16 ? 8 : 16;
  buffers_.resize(values_.size());
  views_.resize(values_.size());
  gpu_bytes_ = 0;
  memory_ = MemoryStats();
  TFG_RETURN_IF_ERROR(AllocateArena());
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
  for (size_t i = 0; i < values_.size(); ++i) {
    const Value& value = values_[i];
    if (value.storage_of >= 0) continue;  // a view: bound through its root
    if (arena_offset_[i] != kOwnBuffer) continue;  // lives in the arena
    // Nor does an input no dispatch reads (its conversion was fused into
    // the kernel that reads the staging buffer, delegate/passes/upload_fusion.h).
    const HostSide& host = host_[i];
    if (!bound[i] && host.role == HostSide::kNone &&
        (value.kind == Value::Kind::kIntermediate || value.kind == Value::Kind::kInput)) {
      continue;
    }
    size_t bytes;
    std::vector<uint16_t> halves;
    const void* initial = nullptr;
    const size_t staged_element_bytes = host.half ? sizeof(uint16_t) : sizeof(float);
    if (host.bhwc) {
      bytes = static_cast<size_t>(value.shape.elements()) * staged_element_bytes;
    } else {
      bytes = static_cast<size_t>(value.vec4_count()) * vec4_bytes;
    }
    if (value.kind == Value::Kind::kConstant) {
      if (device_.fp16) {
        halves.resize(value.constant_data.size());
        for (size_t k = 0; k < halves.size(); ++k) {
          halves[k] = FloatToHalf(value.constant_data[k]);
        }
        initial = halves.data();
      } else {
        initial = value.constant_data.data();
      }
    }
    const bool upload = host.role == HostSide::kUpload;
    const bool download = host.role == HostSide::kDownload;
    GLenum usage = GL_STATIC_DRAW;
    if (upload) usage = device_.upload_usage;
    if (download) usage = device_.download_usage;
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
    StatusOr<gl::Buffer> buffer =
        upload && device_.mapped_upload_staging
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
      const GLenum format = host.bhwc ? (host.half ? GL_R16F : GL_R32F)
                            : device_.fp16 ? GL_RGBA16F : GL_RGBA32F;
      const size_t texel = host.bhwc ? staged_element_bytes : vec4_bytes;
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
  PlaceBarriers();
  std::vector<std::string> labels;
  for (const Step& step : steps_) {
    labels.push_back(step.dispatch.shader + " " + step.dispatch.label);
  }
  timeline_.Configure(device_.report_phases, device_.report_timeline,
                      !device_.gpu->IsLlvmpipe() && device_.gpu->has_timer_query,
                      std::move(labels));
  allocated_ = true;
  return Status::Ok();
}

Status PartitionRuntime::BindForWrite(ValueId view, GLuint binding) const {
  // Views (Value::storage_of) use their root's storage.
  const size_t id = static_cast<size_t>(StorageRoot(values_, view));
  if (arena_offset_[id] != kOwnBuffer) {
    return arena_.BindAsStorage(binding, arena_offset_[id], arena_bytes_[id]);
  }
  return buffers_[id].BindAsStorage(binding, 0, buffers_[id].bytes());
}

Status PartitionRuntime::BindForRead(ValueId view, GLuint binding) const {
  const size_t id = static_cast<size_t>(StorageRoot(values_, view));
  // Texture-buffer reads, or an upload staging buffer read as one
  // (DeviceProfile::staging_texture_reads): only those have a view.
  if (views_[id].id() != 0) return views_[id].Bind(binding);
  return BindForWrite(static_cast<ValueId>(id), binding);
}

Status PartitionRuntime::BindAndDispatch(const Step& step, bool barrier) {
  // What earlier dispatches wrote becomes visible to this one, through SSBO
  // or texture; the texture-fetch bit only where reads go through texture
  // buffers (it costs a texture cache invalidation on some drivers).
  if (barrier) {
    TFG_GL(glMemoryBarrier(device_.texture_buffer_reads
                               ? GL_SHADER_STORAGE_BARRIER_BIT | GL_TEXTURE_FETCH_BARRIER_BIT
                               : GL_SHADER_STORAGE_BARRIER_BIT));
  }
  const Dispatch& d = step.dispatch;
  GLuint binding = 0;
  for (ValueId id : d.outputs) TFG_RETURN_IF_ERROR(BindForWrite(id, binding++));
  for (ValueId id : d.inputs) TFG_RETURN_IF_ERROR(BindForRead(id, binding++));
  for (ValueId id : d.read_write) TFG_RETURN_IF_ERROR(BindForWrite(id, binding++));
  if (step.uniform_bytes > 0) {
    TFG_RETURN_IF_ERROR(uniforms_.BindAsUniforms(
        gl::kShaderUniformBinding, step.uniform_offset, step.uniform_bytes));
  }
  TFG_RETURN_IF_ERROR(step.program->Dispatch(step.groups[0], step.groups[1],
                                             step.groups[2]));
  return Status::Ok();
}

void PartitionRuntime::PlaceBarriers() {
  std::vector<StepMemory> memory(steps_.size());
  auto range_of = [this](ValueId view) {
    const size_t id = static_cast<size_t>(StorageRoot(values_, view));
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
  const std::vector<bool> barriers = device_.barrier_every_dispatch
                                         ? std::vector<bool>(steps_.size(), true)
                                         : BarriersBefore(memory);
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

Status PartitionRuntime::DispatchProfiled() {
  if (!timer_tried_) {
    timer_tried_ = true;
    // Mesa llvmpipe offers GL_EXT_disjoint_timer_query but answers 1 ns
    // for every compute dispatch (it runs them inside glDispatchCompute, on
    // the CPU, outside what its queries measure), so it keeps the
    // synchronous mode, which is exact there.
    if (device_.gpu->has_timer_query && !device_.gpu->IsLlvmpipe()) {
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
      TFG_RETURN_IF_ERROR(BindAndDispatch(steps_[i], /*barrier=*/true));
      TFG_RETURN_IF_ERROR(timer_.End());
    }
    auto milliseconds = timer_.ReadMilliseconds(static_cast<int>(steps_.size()));
    if (!milliseconds.ok()) {
      // The outputs are fine; only this invoke's times are lost.
      std::fprintf(stderr, "WARNING: tflite-gles: %s\n",
                   milliseconds.status().message().c_str());
      return Status::Ok();
    }
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Dispatch& d = steps_[i].dispatch;
      timings_.push_back({d.label, d.shader, (*milliseconds)[i], d.flops, true});
    }
    return Status::Ok();
  }
  // Synchronous profiling: finish before and after each dispatch (on
  // llvmpipe a dispatch runs inside the call anyway).
  for (const Step& step : steps_) {
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
  timings_.clear();
  TFG_RETURN_IF_ERROR(timeline_.Start());
  // Mapped staging (DeviceProfile::mapped_upload_staging) is written while
  // the GPU runs nothing: the last invoke's readback waited for it, and this
  // fence makes sure of it even if that invoke failed half way.
  TFG_RETURN_IF_ERROR(staging_reads_done_.Wait());
  for (const Transfer& upload : uploads_) {
    TFG_RETURN_IF_ERROR(
        UploadInput(upload, context->tensors[upload.tflite_index]));
  }
  TFG_RETURN_IF_ERROR(timeline_.Uploaded());
  if (profile) {
    TFG_RETURN_IF_ERROR(DispatchProfiled());
  } else {
    auto flush_point = [this](size_t issued) {
      const auto& points = device_.early_flush_points;
      return std::find(points.begin(), points.end(), static_cast<int>(issued)) != points.end();
    };
    if (flush_point(0)) TFG_GL(glFlush());
    for (size_t i = 0; i < steps_.size(); ++i) {
      TFG_RETURN_IF_ERROR(BindAndDispatch(steps_[i], steps_[i].barrier_before));
      // The time line's stamp before the flush, so that it travels in the
      // same batch as its dispatch.
      TFG_RETURN_IF_ERROR(timeline_.Dispatched(static_cast<int>(i)));
      if (flush_point(i + 1)) TFG_GL(glFlush());
    }
  }
  // Readback through a map (GL_BUFFER_UPDATE), or through persistent
  // mappings, whose shader writes need the client-mapped barrier before the
  // fence the CPU then waits for.
  const DeviceProfile::Readback readback = device_.readback;
  TFG_GL(glMemoryBarrier(device_.mapped_readback()
                             ? GL_BUFFER_UPDATE_BARRIER_BIT |
                                   GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT_EXT
                             : GL_BUFFER_UPDATE_BARRIER_BIT));
  const bool fenced_readback =
      readback != DeviceProfile::Readback::kMap && !downloads_.empty();
  // One fence serves both: the readback waits for it, and (if the readback
  // did not) the next invoke does before writing mapped upload staging.
  if ((device_.mapped_upload_staging && !uploads_.empty()) || fenced_readback) {
    TFG_ASSIGN_OR_RETURN(staging_reads_done_, gl::Fence::Create());
  }
  TFG_RETURN_IF_ERROR(timeline_.Submitted());
  if (fenced_readback) {
    TFG_RETURN_IF_ERROR(
        staging_reads_done_.Wait(/*spin=*/readback == DeviceProfile::Readback::kFenceSpin ||
                                 readback == DeviceProfile::Readback::kMappedSpin));
  }
  for (const Transfer& download : downloads_) {
    TFG_RETURN_IF_ERROR(
        DownloadOutput(download, context->tensors[download.tflite_index]));
  }
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

namespace {
Status CheckTransferTensor(const abi::Tensor& tensor, size_t elements,
                           int index, const char* role) {
  const size_t element_bytes = ElementBytes(tensor.type);
  if (element_bytes == 0) {
    return Status::Error(std::string(role) + " tensor " + std::to_string(index) +
                         " is " + TypeName(tensor.type) +
                         "; only float32, int32 and bool cross to the GPU");
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
  const float* floats = static_cast<const float*>(tensor.data);
  if (tensor.type != abi::kFloat32) {
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
  if (!upload.half) {
    if (!upload.relayout && stream) {
      StreamingCopy(mapped, floats, bytes);
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
      FloatsToHalvesStreaming(floats, out, upload.elements);
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
  // Direct readbacks exist only where PHWC4 is BHWC: a plain copy.
  if (download.half) {
    half_scratch_.resize(download.elements);
    TFG_RETURN_IF_ERROR(
        buffer.Download(0, download.elements * sizeof(uint16_t), half_scratch_.data()));
    HalvesToFloats(half_scratch_.data(), floats, download.elements);
  } else {
    TFG_RETURN_IF_ERROR(buffer.Download(0, download.elements * sizeof(float), floats));
  }
  if (tensor.type == abi::kFloat32) return Status::Ok();
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
