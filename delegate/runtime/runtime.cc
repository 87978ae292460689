// PartitionRuntime, build: a partition's dispatches (the kernels' after the
// passes, plus the layout conversions of its inputs and outputs), their
// transfers and their programs. Allocation is runtime_memory.cc, invoke
// runtime_invoke.cc, the CPU side of transfers runtime_transfer.cc.
#include "delegate/runtime/runtime.h"

#include <GLES2/gl2ext.h>
#include <GLES3/gl32.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "delegate/abi/half.h"
#include "delegate/graph/quantization.h"
#include "delegate/device/device_tuning.h"
#include "delegate/kernels/quantize.h"
#include "delegate/passes/dead_dispatches.h"
#include "delegate/passes/dw_fusion.h"
#include "delegate/passes/dw_splitk.h"
#include "delegate/passes/fusion.h"
#include "delegate/passes/gemm_batching.h"
#include "delegate/passes/gemm_chain.h"
#include "delegate/passes/gemm_chain_head.h"
#include "delegate/passes/mirror_pad_fusion.h"
#include "delegate/passes/norm_prologue.h"
#include "delegate/passes/prologue_fusion.h"
#include "delegate/passes/schedule.h"
#include "delegate/passes/upload_fusion.h"
#include "delegate/passes/pool_fusion.h"
#include "delegate/passes/upsample_conv.h"
#include "delegate/passes/upsample_fusion.h"
#include "delegate/passes/window_conv.h"
#include "delegate/runtime/shader_dump.h"
#include "delegate/runtime/transfer_layout.h"
#include "egl/gl_call.h"
#include "egl/init_phases.h"
#include "egl/program_limits.h"
#include "egl/tensor_texture.h"

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

// Partition inputs and outputs cross to the GPU through float staging
// buffers: float32 as is, int32 and bool converted (see Transfer). Kernels
// decline other types; this catches one that forgot to, at build time.
Status CheckStagedType(const GraphBuilder& builder, int index, const char* role) {
  const abi::Tensor& tensor = builder.graph().context()->tensors[index];
  if (ElementBytes(tensor.type) == 0) {
    return Status::Error(std::string("partition ") + role + " tensor " +
                         std::to_string(index) + " is " + TypeName(tensor.type) +
                         "; only float32, int32, bool, uint8 and int8 cross to the GPU");
  }
  return Status::Ok();
}
// layout_convert.comp's STAGED_BYTES defines for a uint8/int8 input with
// `q`: the scale as its exact bits, int8 read as uint8 with its sign bit
// flipped (the byte's value + 128) against zero_point + 128.
void AddStagedBytesDefines(abi::Type type, const QuantParams& q,
                           std::map<std::string, std::string>& defines) {
  const bool int8 = type == abi::kInt8;
  uint32_t bits = 0;
  std::memcpy(&bits, &q.scale, sizeof(bits));
  defines["STAGED_BYTES"] = "";
  defines["STAGED_SCALE"] = "uintBitsToFloat(" + std::to_string(bits) + "u)";
  defines["STAGED_ZERO_POINT"] = std::to_string(q.zero_point + (int8 ? 128 : 0));
  defines["STAGED_FLIP"] = int8 ? "128u" : "0u";
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

// Whether every value fits a tensor texture (gl::TensorTextureExtent at
// its widest rows; a view's root is sized for the largest of its views).
Status TexturesHoldValues(const std::vector<Value>& values, const DeviceProfile& device) {
  for (const Value& value : values) {
    auto extent = gl::TensorTextureExtent(value.vec4_count(), 0, device.gpu->max_texture_size,
                                          device.texture_row_width);
    if (!extent.ok()) {
      return extent.status().WithContext(value.kind == Value::Kind::kConstant
                                             ? "a constant"
                                             : "tensor " + value.shape.ToString());
    }
  }
  return Status::Ok();
}

// DeviceProfile::cpu_readback_resize: if the one dispatch that writes the
// partition output `value` is a bilinear resize whose input is its own
// root, written by a kernel, read by that resize alone and not crossing to
// the CPU otherwise, returns how the CPU interpolates that input (`source`)
// at readback; inactive otherwise. The dispatch stays, skipped at invoke
// until the output is bound on the GPU (BindGpu).
ReadbackResize FindReadbackResize(const GraphBuilder& builder, ValueId value,
                                  const std::vector<int>& outputs,
                                  const std::vector<size_t>& direct_inputs,
                                  std::vector<Dispatch>* dispatches, ValueId* source) {
  auto has = [](const std::vector<ValueId>& ids, ValueId id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  auto writer = std::find_if(dispatches->begin(), dispatches->end(),
                             [&](const Dispatch& d) { return has(d.outputs, value); });
  if (writer == dispatches->end() || writer->outputs.size() != 1 ||
      writer->inputs.size() != 1 || !writer->read_write.empty()) {
    return {};
  }
  ValueId in = writer->inputs[0];
  // A view of its root's own shape (an identity resize or reshape, such as
  // DeepLab's 33 -> 33 resize before the final one) has the root's layout:
  // the root is what the CPU reads.
  const Value& view = builder.value(in);
  if (view.storage_of >= 0 && builder.value(view.storage_of).shape == view.shape) {
    in = view.storage_of;
  }
  const Value& input = builder.value(in);
  if (input.storage_of >= 0 || input.kind != Value::Kind::kIntermediate ||
      std::find(outputs.begin(), outputs.end(), input.tflite_index) != outputs.end() ||
      std::find(direct_inputs.begin(), direct_inputs.end(), static_cast<size_t>(in)) !=
          direct_inputs.end()) {
    return {};
  }
  for (const auto& [written_back, index] : builder.write_backs()) {
    if (written_back == in) return {};
  }
  int writers = 0, readers = 0;
  for (const Dispatch& d : *dispatches) {
    auto touches = [&](const std::vector<ValueId>& ids) {
      return std::any_of(ids.begin(), ids.end(), [&](ValueId id) {
        const ValueId root = builder.value(id).storage_of;
        return (root >= 0 ? root : id) == in;
      });
    };
    writers += touches(d.outputs) ? 1 : 0;
    readers += touches(d.inputs) || touches(d.read_write) ? 1 : 0;
  }
  if (writers == 0 || readers != 1) return {};
  ReadbackResize resize = ReadbackResizeOf(*writer, input.shape);
  if (!resize.active || input.shape.b != builder.shape(value).b ||
      input.shape.c != builder.shape(value).c) {
    return {};
  }
  resize.gpu_output = value;
  *source = in;
  return resize;
}

}  // namespace

StatusOr<std::unique_ptr<PartitionRuntime>> PartitionRuntime::Create(
    GraphBuilder& builder, const std::vector<int>& inputs,
    const std::vector<int>& outputs, const DeviceProfile& device,
    ProgramCache& programs) {
  std::unique_ptr<PartitionRuntime> runtime(new PartitionRuntime());
  runtime->device_ = device;
  runtime->model_data_ = programs.model_data();
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
    dispatch.defines["BAND_BEGIN"] = "0";  // all of it (runtime_bands.cc)
    dispatch.defines["BAND_END"] = std::to_string(invocations);
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
  // Inputs of the resizes the CPU does at readback (cpu_readback_resize).
  std::vector<ValueId> cpu_resized;
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
    Dispatch conversion = convert(value, staging, /*to_phwc4=*/true);
    auto grid = builder.quantized_uploads().find(index);
    const bool gpu_rounded = grid != builder.quantized_uploads().end() &&
                             type == abi::kFloat32;
    if (gpu_rounded) {
      // A float input that only QUANTIZE reads: rounded to its grid by the
      // conversion (or, fused, by the convolution that reads the staging),
      // from fp32 staging (halves would round before the grid does).
      conversion.defines[kInputQuantDefine] = QuantizeInputExpression(grid->second);
    }
    // A uint8/int8 input crosses as its bytes (a quarter of fp32 staging's,
    // and no CPU loop) and is dequantized by the conversion, or by the
    // convolution it fuses into. Params the kernels would refuse keep the
    // CPU path, whose upload then reports them.
    StatusOr<QuantParams> params =
        IsQuantizedType(type)
            ? ActivationQuantization(builder.graph().context()->tensors[index])
            : StatusOr<QuantParams>(Status::Error("not quantized"));
    const bool packed = params.ok();
    if (packed) AddStagedBytesDefines(type, *params, conversion.defines);
    pre.push_back(std::move(conversion));
    runtime->uploads_.push_back({index, staging, elements, type,
                                 half_staging && !gpu_rounded && !packed, false, false,
                                 shape});
    runtime->uploads_.back().packed = packed;
    if (gpu_rounded) {
      runtime->uploads_.back().quantize_tail = true;
      runtime->uploads_.back().quantization = grid->second;
    }
  }
  for (Transfer& upload : runtime->uploads_) {
    auto grid = builder.quantized_uploads().find(upload.tflite_index);
    if (upload.direct && grid != builder.quantized_uploads().end() &&
        upload.type == abi::kFloat32) {
      upload.quantize = true;  // no conversion dispatch: rounded on the CPU
      upload.quantization = grid->second;
    }
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
    // cpu_readback_relayout (llvmpipe) takes any layout, relaid out on the
    // CPU, where the tensor is its own root (a view's root may be laid out
    // for another shape).
    if (device.cpu_readback_resize && device.direct_transfers &&
        root == static_cast<size_t>(value) && !marked(read, root)) {
      ValueId source = -1;
      ReadbackResize resize = FindReadbackResize(builder, value, outputs, direct_inputs,
                                                 &kernel_dispatches, &source);
      if (resize.active) {
        runtime->downloads_.push_back(
            {index, source, elements, type, device.fp16, true, true, shape});
        runtime->downloads_.back().resize = resize;
        cpu_resized.push_back(source);
        continue;
      }
    }
    const bool relayout = !Phwc4IsBhwc(shape);
    if (device.direct_transfers &&
        (!relayout || (device.cpu_readback_relayout && root == static_cast<size_t>(value))) &&
        marked(written, root) && !marked(read, root) &&
        std::find(direct_inputs.begin(), direct_inputs.end(), root) == direct_inputs.end() &&
        builder.value(static_cast<ValueId>(root)).kind != Value::Kind::kInput) {
      runtime->downloads_.push_back(
          {index, static_cast<ValueId>(root), elements, type, device.fp16, true,
           relayout, shape});
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
    runtime->downloads_.back().write_back = true;
  }
  runtime->values_ = builder.TakeValues();
  // RGBA textures hold every tensor of the partition or none: one program
  // declares all its tensors alike, so a tensor too large for a texture
  // keeps the whole partition in buffers (a note says so).
  if (device.rgba_textures) {
    Status fits = TexturesHoldValues(runtime->values_, device);
    if (!fits.ok()) {
      std::fprintf(stderr, "WARNING: tflite-gles: a partition keeps buffer storage: %s\n",
                   fits.message().c_str());
      runtime->device_.rgba_textures = false;
      runtime->device_.texture_buffer_reads = false;
      FitDeviceLimits(&runtime->device_);
    }
  }
  const DeviceProfile& dev = runtime->device_;
  // Values the CPU reads back stay in memory: no pass fuses their producer away.
  std::vector<ValueId> keep;
  for (const auto& [value, index] : builder.write_backs()) keep.push_back(value);
  keep.insert(keep.end(), cpu_resized.begin(), cpu_resized.end());
  if (dev.broadcast_concat_bias) {
    // What a convolution read around (kernels/conv.cc) goes first.
    runtime->fused_ += RemoveDeadDispatches(runtime->values_, keep, &kernel_dispatches);
  }
  if (dev.fuse_mirror_pad) {  // before the epilogues: the pad's reader becomes the convolution
    runtime->fused_ += FuseMirrorPadIntoConv(runtime->values_, keep, &kernel_dispatches);
  }
  if (dev.fuse_upsample) {
    // After the mirror pads, so that the convolution reads the resize's
    // output itself (delegate/passes/upsample_fusion.h).
    runtime->fused_ += FuseUpsampleIntoConv(runtime->values_, keep, &kernel_dispatches);
  }
  if (dev.fuse_epilogues) {
    // Elementwise consumers fold into their convolution's store
    // (delegate/passes/fusion.h); write-back sources must stay in memory.
    runtime->fused_ += FuseEpilogues(runtime->values_, keep, &kernel_dispatches,
                                    dev.fuse_elementwise_chains, dev.max_dispatch_buffers,
                                    dev.epilogue_second_operand, dev.fuse_concat_epilogues);
    runtime->fused_ += FuseDepthwiseIntoGemm(dev, &runtime->values_, keep, &kernel_dispatches);
    SplitDepthwiseGemmsAcrossWorkgroups(dev, &runtime->values_, &kernel_dispatches);
    runtime->fused_ += FuseMeanIntoGemm(dev, runtime->values_, keep, &kernel_dispatches);
    runtime->fused_ += FuseSoftmaxIntoGemm(dev, &runtime->values_, keep, &kernel_dispatches);
    runtime->fused_ += FuseElementwiseIntoGemm(dev, runtime->values_, keep, &kernel_dispatches);
    runtime->fused_ += FuseResizeIntoGemm(dev, runtime->values_, keep, &kernel_dispatches);
    runtime->fused_ += FuseGemmChains(dev, runtime->values_, keep, &kernel_dispatches);
    runtime->fused_ += FuseGemmPairs(dev, runtime->values_, &kernel_dispatches);
    runtime->fused_ += FuseGemmChainHeads(dev, runtime->values_, keep, &kernel_dispatches);
    // Into their readers' loads (delegate/passes/pool_fusion.h).
    runtime->fused_ += FusePoolings(dev, runtime->values_, keep, &kernel_dispatches);
  }
  if (dev.batch_gemms) {  // after the fusions, which may still give a GEMM an epilogue
    runtime->fused_ += BatchSharedInputGemms(&runtime->values_, keep, &kernel_dispatches);
  }
  if (dev.fuse_upload_into_conv) {
    runtime->fused_ += runtime->FuseUploads(&pre, &kernel_dispatches, post);  // runtime_alias.cc
  }
  if (dev.fuse_epilogues && dev.fuse_norm_prologue) {
    // After the epilogues, which make the norm's apply one dispatch, and
    // the mirror pads, which leave the convolution reading it
    // (delegate/passes/norm_prologue.h).
    runtime->fused_ += FuseNormApplyIntoConv(runtime->values_, keep, dev.max_dispatch_buffers,
                                             &kernel_dispatches);
  }
  // Last, as the fusions above left the convolutions (upsampled 3x3 layers first).
  UseUpsampleConvolutions(dev, &runtime->values_, &kernel_dispatches);
  UseWindowConvolutions(dev, runtime->values_, &kernel_dispatches);
  runtime->PlanAliasedTransfers(pre);  // before host_: it stages those inputs as floats
  // Buffers the CPU writes or reads: each its own buffer, outside the arena.
  runtime->host_.assign(runtime->values_.size(), HostSide());
  for (const Transfer& t : runtime->uploads_) {
    runtime->host_[t.buffer] = {HostSide::kUpload, !t.direct, t.half, t.packed};
  }
  for (const Transfer& t : runtime->downloads_) {
    runtime->host_[t.buffer] = {HostSide::kDownload, !t.direct, t.half};
    // The resize's own output too: read back instead if the output is
    // bound on the GPU and the resize runs after all (BindGpu).
    if (t.resize.active) {
      runtime->host_[t.resize.gpu_output] = {HostSide::kDownload, false, t.half};
    }
  }

  // Independent dispatches next to each other, so that no barrier
  // separates them (delegate/passes/schedule.h); before memory planning, which
  // then sees the lifetimes of this order.
  OrderByLevel(runtime->values_, &kernel_dispatches);
  for (Dispatch& d : pre) TFG_RETURN_IF_ERROR(runtime->AddStep(std::move(d), programs));
  for (Dispatch& d : kernel_dispatches) {
    TFG_RETURN_IF_ERROR(runtime->AddStep(std::move(d), programs));
  }
  for (Dispatch& d : post) TFG_RETURN_IF_ERROR(runtime->AddStep(std::move(d), programs));
  runtime->SkipCpuResizes();
  runtime->PlanReadbackFusions(programs);  // before the bands: a fused output has none
  runtime->PlanTransferBands();
  return runtime;
}

void PartitionRuntime::SkipCpuResizes() {
  for (Transfer& t : downloads_) {
    if (!t.resize.active) continue;
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Dispatch& d = steps_[i].dispatch;
      if (d.shader == "resize" && d.outputs.size() == 1 && d.outputs[0] == t.resize.gpu_output) {
        skip_step_.resize(steps_.size(), 0);
        skip_step_[i] = kCpuResizeSkip;
        t.resize.step = static_cast<int>(i);
        ++cpu_resizes_;
      }
    }
    if (t.resize.step < 0) UseGpuResize(t);  // a pass changed it: the GPU's
  }
}

void PartitionRuntime::UseGpuResize(Transfer& t) {
  if (t.resize.step >= 0) skip_step_[static_cast<size_t>(t.resize.step)] = 0;
  t.buffer = t.resize.gpu_output;
  t.relayout = !Phwc4IsBhwc(t.shape);
  t.resize = ReadbackResize();
}

Status PartitionRuntime::AddStep(Dispatch dispatch, ProgramCache& programs) {
  TFG_ASSIGN_OR_RETURN(Step step, MakeStep(std::move(dispatch), programs));
  steps_.push_back(std::move(step));
  return Status::Ok();
}

Status PartitionRuntime::CountGroups(const Dispatch& dispatch, uint32_t groups[3]) const {
  const egl::GpuInfo& gpu = *device_.gpu;
  for (int axis = 0; axis < 3; ++axis) {
    const uint32_t local = dispatch.local[axis] == 0 ? 1 : dispatch.local[axis];
    groups[axis] = (dispatch.grid[axis] + local - 1) / local;
    if (groups[axis] == 0) groups[axis] = 1;
  }
  // A long 1-D grid is folded over y; shaders index it with global_index().
  const uint32_t max_x = static_cast<uint32_t>(gpu.max_workgroup_count[0]);
  if (groups[0] > max_x) {
    if (groups[1] != 1 || groups[2] != 1) {
      return Status::Error(dispatch.label + ": grid of " + std::to_string(groups[0]) +
                           " workgroups exceeds the device limit " + std::to_string(max_x));
    }
    groups[1] = (groups[0] + max_x - 1) / max_x;
    groups[0] = max_x;
  }
  for (int axis = 1; axis < 3; ++axis) {
    if (groups[axis] > static_cast<uint32_t>(gpu.max_workgroup_count[axis])) {
      return Status::Error(dispatch.label + ": workgroup count exceeds the device limit");
    }
  }
  return Status::Ok();
}

size_t PartitionRuntime::AddUniformBlock(const std::vector<int32_t>& block) {
  // Ranges start at the device's binding alignment; std140 rounds a block
  // of ints up to 16 bytes.
  const size_t alignment =
      static_cast<size_t>(std::max(16, device_.gpu->uniform_buffer_offset_alignment));
  const size_t offset = (uniform_data_.size() + alignment - 1) / alignment * alignment;
  const size_t bytes = (block.size() * sizeof(int32_t) + 15) / 16 * 16;
  uniform_data_.resize(offset + bytes, 0);
  std::memcpy(uniform_data_.data() + offset, block.data(), block.size() * sizeof(int32_t));
  return offset;
}

StatusOr<PartitionRuntime::Step> PartitionRuntime::MakeStep(Dispatch dispatch,
                                                            ProgramCache& programs,
                                                            const Step* same_uniforms) {
  const egl::GpuInfo& gpu = *device_.gpu;
  Step step;
  TFG_RETURN_IF_ERROR(CountGroups(dispatch, step.groups));
  dispatch.defines["LOCAL_X"] = std::to_string(dispatch.local[0]);
  dispatch.defines["LOCAL_Y"] = std::to_string(dispatch.local[1]);
  dispatch.defines["LOCAL_Z"] = std::to_string(dispatch.local[2]);
  // Read-write buffers follow the outputs and inputs (BindAndDispatch).
  for (size_t k = 0; k < dispatch.read_write.size(); ++k) {
    dispatch.defines["READ_WRITE_BINDING_" + std::to_string(k)] =
        std::to_string(dispatch.outputs.size() + dispatch.inputs.size() + k);
  }
  std::optional<gl::ScopedInitPhase> timed;
  timed.emplace(gl::InitPhase::kShaderAssembly);
  TFG_ASSIGN_OR_RETURN(std::string body, gl::EmbeddedShader(dispatch.shader));
  const bool specialize = dispatch.specialize || device_.specialize_shapes ||
                          SpecializeGemm(dispatch, device_.specialize_gemm_below_rows);
  gl::StorageChoice storage;
  storage.fp16 = device_.fp16;
  storage.texture_buffer_reads = device_.texture_buffer_reads;
  storage.rgba_textures = device_.rgba_textures;
  for (int width = device_.texture_row_width; width > 1; width >>= 1) ++storage.texture_row_shift;
  storage.staging_texture_reads = device_.staging_texture_reads;
  storage.texture_buffer_extension = gpu.texture_buffer_extension;
  TFG_ASSIGN_OR_RETURN(std::string source,
                       gl::AssembleShader(dispatch.shader, body, storage,
                                          dispatch.defines, specialize));
  timed.reset();
  auto program = programs.Get(source);
  if (!program.ok()) {
    return program.status().WithContext(dispatch.label + " (shader " +
                                        dispatch.shader + ")");
  }
  // Before its first dispatch: the program fits the device's limits, as
  // clamped by the device profile (a few GL queries per step, at init only).
  // A kernel or fusion that exceeds one is a bug the profile tests are there
  // to catch: debug builds stop at it, release builds fail Prepare with it.
  auto used = programs.Resources(**program);
  if (!used.ok()) return used.status().WithContext(dispatch.label);
  Status fits = gl::CheckProgramResources(*used, gpu);
  if (!fits.ok()) {
    fits = fits.WithContext(dispatch.label + " (shader " + dispatch.shader +
                            ", device profile " + gpu.profile + ")");
    std::fprintf(stderr, "ERROR: tflite-gles: %s\n", fits.message().c_str());
    assert(false && "a dispatch exceeds the device's limits");
    return fits;
  }
  // The values of the shader's @uniform names (egl/shader_source.h). Every
  // step's block goes into one buffer, written at Allocate; each dispatch
  // binds its own range.
  timed.emplace(gl::InitPhase::kShaderAssembly);
  auto uniforms = gl::ShaderUniformValues(dispatch.shader, body,
                                          dispatch.defines, specialize);
  timed.reset();
  if (!uniforms.ok()) return uniforms.status().WithContext(dispatch.label);
  const std::vector<int32_t>& block = *uniforms;
  const size_t block_bytes = (block.size() * sizeof(int32_t) + 15) / 16 * 16;
  if (same_uniforms != nullptr) {
    // Written at Allocate already, or about to be: the range is shared.
    if (block_bytes != same_uniforms->uniform_bytes) {
      return Status::Error(dispatch.label + ": " + std::to_string(block_bytes) +
                           " bytes of uniforms where the step it replaces has " +
                           std::to_string(same_uniforms->uniform_bytes));
    }
    step.uniform_offset = same_uniforms->uniform_offset;
    step.uniform_bytes = same_uniforms->uniform_bytes;
  } else if (!block.empty()) {
    step.uniform_offset = AddUniformBlock(block);
    step.uniform_bytes = block_bytes;
  }
  step.program = *program;
  if (!device_.dump_shaders.empty()) DumpStep(device_.dump_shaders, step.groups, dispatch, source, block);
  step.dispatch = std::move(dispatch);
  return step;
}

}  // namespace tflite_gles
