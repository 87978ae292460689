// PartitionRuntime, zero-copy model I/O (DeviceProfile::alias_model_io): a
// partition input or output that crosses as BHWC floats through a
// persistently mapped, coherent staging buffer gets that mapping as its
// TFLite tensor's memory. set_tensor (or the CPU op that produces it) then
// writes where the conversion reads, get_tensor reads where the readback
// conversion wrote, and the invoke copies nothing: the hair stand-in's 3 MB
// input and 2 MB output were ~0.3 ms of its 1.3 ms invoke on the H200
// (docs/perf/log.md, "zc5, session 16", which also has what TFLite's
// subgraph.cc and arena_planner.cc do with such a tensor).
//
// The tensor becomes kTfLiteCustom in the kernel's Prepare, which TFLite
// runs before its arena planner allocates: the planner allocates and
// resolves only kTfLiteArenaRw/kTfLiteArenaRwPersistent tensors, so it
// leaves the pointer alone and spends no bytes on it; TFLite never frees a
// custom tensor's data. The kernel's Free (interpreter destroyed, delegate
// undone for a resize) and a failing Prepare give it back as an arena tensor
// with no data (as ResizeTensorImpl leaves one), so that nothing points into
// a buffer that goes with the partition and the next AllocateTensors
// allocates it. Each invoke skips the copy only where the tensor's data *is*
// the staging (and its bytes are the staging's), so that anything that
// moved it (an application's custom allocation, a resize) copies as before.
#include "delegate/runtime/runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>

#include "delegate/passes/upload_fusion.h"

namespace tflite_gles {

namespace {
// TFLite's own tensor alignment (kDefaultTensorAlignment), which its custom
// allocations must meet and its CPU kernels may assume.
constexpr uintptr_t kTensorAlignment = 64;
// The smallest input left unfused to be aliased (FuseUploads): MobileNet v1's
// 602 KB and larger gained 10-110 us on the H100, palm's 442 KB and face
// detection's 196 KB moved within +-7 us.
constexpr size_t kUnfuseMinBytes = 512 * 1024;
}  // namespace

bool PartitionRuntime::PlainFloats(const Transfer& t) {
  return !t.direct && !t.packed && !t.quantize && !t.quantize_tail && !t.write_back &&
         !t.resize.active && t.type == abi::kFloat32;
}

void PartitionRuntime::PlanAliasedTransfers(const std::vector<Dispatch>& uploads) {
  if (!device_.alias_model_io) return;
  // An input's staging is aliased only where its own conversion reads it,
  // once and in order. Memory mapped for reading too is memory the GPU
  // reads through the CPU's caches: a convolution fused with the upload
  // (upload_fusion.h), which reads each pixel several times, ran ~0.1 ms
  // longer reading MobileNet v1's 602 KB input that way than the 23 us copy
  // into write-only staging saved (H200, docs/perf/log.md, "zc5, session 16").
  auto converted = [&](ValueId staging) {
    return std::any_of(uploads.begin(), uploads.end(), [&](const Dispatch& d) {
      return d.shader == "layout_convert" && d.defines.count("TO_PHWC4") &&
             !d.inputs.empty() && d.inputs[0] == staging;
    });
  };
  for (Transfer& t : uploads_) {
    if (!MayAliasUpload(t) || !converted(t.buffer)) continue;
    t.aliasable = true;
    // TFLite's floats as they are: the conversion (or the convolution that
    // reads the staging, upload_fusion.h) reads them through an R32F view
    // instead of R16F halves converted by the CPU.
    t.half = false;
  }
  for (Transfer& t : downloads_) {
    if (PlainFloats(t) && !t.half && device_.mapped_readback()) t.aliasable = true;
  }
}

bool PartitionRuntime::MayAliasUpload(const Transfer& t) const {
  if (!device_.alias_model_io || !device_.mapped_upload_staging || !PlainFloats(t)) return false;
  if (t.half && !device_.alias_half_inputs) return false;  // fp16's halves kept
  // A partition input that is also written back stays copied (its staging
  // holds what the GPU reads, the tensor what the caller reads after).
  return std::none_of(downloads_.begin(), downloads_.end(),
                      [&](const Transfer& d) { return d.tflite_index == t.tflite_index; });
}

int PartitionRuntime::FuseUploads(std::vector<Dispatch>* uploads, std::vector<Dispatch>* kernels,
                                  const std::vector<Dispatch>& readbacks) const {
  std::vector<Dispatch> kept;
  if (device_.alias_unfuses_upload) {
    // Set aside the conversions of large inputs that could be aliased: they
    // stay their own dispatches, which read the staging once.
    auto aliasable = [&](const Dispatch& d) {
      return !d.inputs.empty() &&
             std::any_of(uploads_.begin(), uploads_.end(), [&](const Transfer& t) {
               return t.buffer == d.inputs[0] && MayAliasUpload(t) &&
                      t.elements * sizeof(float) >= kUnfuseMinBytes;
             });
    };
    auto split = std::stable_partition(uploads->begin(), uploads->end(),
                                       [&](const Dispatch& d) { return !aliasable(d); });
    kept.assign(std::make_move_iterator(split), std::make_move_iterator(uploads->end()));
    uploads->erase(split, uploads->end());
  }
  const int fused = FuseUploadConversions(values_, uploads, kernels, readbacks);
  for (Dispatch& d : kept) uploads->push_back(std::move(d));
  return fused;
}

bool PartitionRuntime::SharedWithTflite(size_t value) const {
  for (const auto* transfers : {&uploads_, &downloads_}) {
    for (const Transfer& t : *transfers) {
      if (t.aliasable && static_cast<size_t>(t.buffer) == value) return true;
    }
  }
  return false;
}

bool PartitionRuntime::StagingFits(const Transfer& t, const abi::Tensor& tensor) const {
  return tensor.type == abi::kFloat32 && tensor.bytes == t.elements * sizeof(float) &&
         tensor.bytes <= buffers_[static_cast<size_t>(t.buffer)].bytes();
}

bool PartitionRuntime::IsAliased(const Transfer& t, const abi::Tensor& tensor) const {
  if (!t.aliasable || t.gpu_bound) return false;
  const void* mapped = buffers_[static_cast<size_t>(t.buffer)].mapped();
  return mapped != nullptr && tensor.data == mapped && StagingFits(t, tensor);
}

void PartitionRuntime::AliasTensors(abi::Context* context) {
  if (!allocated_) return;
  for (const auto* transfers : {&uploads_, &downloads_}) {
    for (const Transfer& t : *transfers) {
      if (!t.aliasable || t.gpu_bound) continue;
      abi::Tensor& tensor = context->tensors[t.tflite_index];
      void* mapped = buffers_[static_cast<size_t>(t.buffer)].mapped();
      if (mapped == nullptr || reinterpret_cast<uintptr_t>(mapped) % kTensorAlignment != 0) {
        continue;
      }
      if (tensor.data == mapped && tensor.allocation_type == abi::kCustom) continue;  // ours
      // Only an arena tensor of exactly the staged floats: not one another
      // partition already made its staging (a model input two partitions
      // read: the first keeps it, the second copies from it), an
      // application's custom allocation, a dynamic tensor, one with a
      // buffer handle (bound on the GPU, delegate/gpu_io.cc). TFLite sets
      // `delegate` on every output of a delegate kernel: not a binding.
      if (tensor.allocation_type != abi::kArenaRw || tensor.buffer_handle != -1 ||
          !StagingFits(t, tensor)) {
        continue;
      }
      tensor.allocation_type = abi::kCustom;
      tensor.data = mapped;
      if (device_.report_phases || device_.report_timeline) {
        std::fprintf(stderr, "INFO: tflite-gles: tensor %d is its GPU staging (%s, no copy)\n",
                     t.tflite_index, transfers == &uploads_ ? "input" : "output");
      }
    }
  }
}

void PartitionRuntime::ReleaseAliases(abi::Context* context) {
  if (context == nullptr || context->tensors == nullptr) return;
  for (const auto* transfers : {&uploads_, &downloads_}) {
    for (const Transfer& t : *transfers) {
      if (!t.aliasable || static_cast<size_t>(t.buffer) >= buffers_.size()) continue;
      abi::Tensor& tensor = context->tensors[t.tflite_index];
      void* mapped = buffers_[static_cast<size_t>(t.buffer)].mapped();
      if (mapped == nullptr || tensor.data != mapped || tensor.allocation_type != abi::kCustom) {
        continue;
      }
      tensor.allocation_type = abi::kArenaRw;
      tensor.data = nullptr;
    }
  }
}

}  // namespace tflite_gles
