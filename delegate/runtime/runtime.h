// Runs the GPU program of one partition: allocates its buffers, compiles its
// shaders (through a per-context program cache), uploads inputs, dispatches,
// reads outputs back.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "delegate/graph/graph.h"
#include "delegate/runtime/readback_resize.h"
#include "delegate/runtime/gpu_binding.h"
#include "delegate/runtime/host_copy.h"
#include "delegate/runtime/invoke_timeline.h"
#include "delegate/passes/memory_planner.h"
#include "delegate/runtime/program_cache.h"
#include "delegate/abi/tflite_abi.h"
#include "egl/gl_objects.h"
#include "egl/gpu_timer.h"
#include "egl/shader_source.h"
#include "egl/tensor_texture.h"

namespace tflite_gles {

// Per-dispatch GPU times of the last profiled run.
struct DispatchTiming {
  std::string label;
  std::string shader;
  double milliseconds = 0;
  long long flops = 0;
  // true: measured by a GPU timer query; false: CPU wall time between
  // glFinish calls (the only way on drivers without timer queries).
  bool gpu_timer = false;
};

// GPU memory of a partition, for stats and the benchmark.
struct MemoryStats {
  long long arena_tensors = 0;      // intermediates placed in the arena
  long long sum_bytes = 0;          // their bytes if each had a buffer
  long long arena_bytes = 0;        // the arena actually allocated
  long long lower_bound_bytes = 0;  // most bytes live at one dispatch
  long long other_bytes = 0;        // constants, staging, unplanned tensors
};

class PartitionRuntime {
 public:
  // Adds the layout conversions for partition inputs and outputs and
  // compiles every shader. `inputs`/`outputs` are TFLite tensor indices.
  static StatusOr<std::unique_ptr<PartitionRuntime>> Create(
      GraphBuilder& builder, const std::vector<int>& inputs,
      const std::vector<int>& outputs, const DeviceProfile& device,
      ProgramCache& programs);

  // Allocates GPU buffers and uploads constants (once).
  Status Allocate();
  // Uploads inputs from `context`'s tensors, runs, writes outputs back.
  Status Run(abi::Context* context, bool profile);

  long long gpu_bytes() const { return gpu_bytes_; }
  const MemoryStats& memory() const { return memory_; }
  int dispatch_count() const {
    return static_cast<int>(steps_.size() - fused_readbacks_.size()) - cpu_resizes_;
  }
  // Elementwise dispatches folded into a convolution (delegate/passes/fusion.h).
  int fused_count() const { return fused_; }
  int barrier_count() const { return barriers_; }
  const std::vector<DispatchTiming>& timings() const { return timings_; }
  // RGBA textures allocated (DeviceProfile::rgba_textures; 0 with buffers).
  size_t texture_count() const { return textures_.size(); }

  // GPU bindings (gpu_binding.h, runtime_gpu_io.cc). Whether `tflite_index`
  // is a partition input / output this runtime moves to or from the CPU
  // (constants and folded constant outputs are not), and its shape.
  bool HasInput(int tflite_index) const;
  bool HasOutput(int tflite_index) const;
  Shape4 TransferShape(int tflite_index) const;
  // Binds `binding` to the input or output `tflite_index` (replacing an
  // earlier binding of it); with the context current. The caller checked
  // the application buffer's size (GpuLayoutBytes of TransferShape).
  Status BindGpu(int tflite_index, GpuBinding binding, ProgramCache& programs);
  // Back to the host transfer; false if it was not bound.
  bool UnbindGpu(int tflite_index);
  bool IsGpuBound(int tflite_index) const;
  // The binding of a bound tensor (null if none), for the buffer-handle
  // copies of delegate/gpu_io.cc.
  const GpuBinding* GpuBindingOf(int tflite_index) const;
  // The float32 buffer a bound tensor lives in (the application's, or the
  // runtime's own for a producer or sink); null if not bound.
  const GpuBufferRef* GpuRefOf(int tflite_index) const;
  // Whether `name` is one of this runtime's own GL buffers.
  bool OwnsBuffer(GLuint name) const;

  // Zero-copy model I/O (DeviceProfile::alias_model_io; runtime_alias.cc).
  // Kernel Prepare: the tensors of aliasable transfers become their mapped
  // staging (kTfLiteCustom); kernel Free or a failed Prepare: those that
  // still are go back to TFLite's arena with no data.
  void AliasTensors(abi::Context* context);
  void ReleaseAliases(abi::Context* context);

 private:
  struct Step {
    const gl::Program* program = nullptr;
    Dispatch dispatch;
    uint32_t groups[3] = {1, 1, 1};
    // The shader's @uniform values (egl/shader_source.h): this range of
    // uniforms_, bound before the dispatch; 0 bytes for shaders without.
    size_t uniform_offset = 0;
    size_t uniform_bytes = 0;
    // A glMemoryBarrier before this dispatch (delegate/passes/schedule.h; set at
    // Allocate, when the arena offsets are known).
    bool barrier_before = true;
    // A bound texture the dispatch reads or writes in place
    // (runtime_texture_io.cc), bound to texture or image unit texture_unit
    // around the dispatch; texture_input: the input binding it stands in
    // for (that value is not bound), or -1.
    GpuTextureAccess* texture = nullptr;
    GLuint texture_unit = 0;
    int texture_input = -1;
  };
  // One partition input or output crossing between the CPU and the GPU.
  // Staging buffers hold BHWC floats (or halves, `half`) that a conversion
  // dispatch moves to or from PHWC4; a direct transfer reads or writes the
  // tensor's own PHWC4 buffer (DeviceProfile::direct_transfers). bool and int32 TFLite tensors are converted on the CPU on
  // the way (bool as 0.0/1.0, int32 exact up to 2^24, 2^11 in halves;
  // uint8/int8 dequantized on the way in, by the GPU from their bytes where
  // there is a conversion (`packed`), and quantized on the way out as
  // TFLite's QUANTIZE rounds, delegate/graph/quantization.h), float32 ones
  // copied as they are.
  struct Transfer {
    int tflite_index;
    ValueId buffer;  // the staging Value, or the tensor's root (direct)
    size_t elements;
    abi::Type type;
    bool half;      // the buffer holds halves
    bool direct;    // no conversion dispatch: the tensor's own buffer
    bool relayout;  // a direct transfer where PHWC4 != BHWC: CPU relayout
    Shape4 shape;
    // A float input that only QUANTIZE reads (GraphBuilder::
    // QuantizeOnUpload), rounded to this grid: `quantize`, on the CPU (a
    // direct upload); `quantize_tail`, by the conversion on the GPU, all but
    // the elements after whole groups of 8, which TFLite rounds otherwise
    // (QuantizeElementLikeTflite) and the CPU puts on the grid.
    bool quantize = false;
    bool quantize_tail = false;
    QuantParams quantization{};
    // A uint8/int8 input staged as its raw bytes, 4 per uint (the upload
    // conversion or the convolution fused with it dequantizes them on the
    // GPU: layout_convert.comp STAGED_BYTES): `half` is false, the buffer
    // holds `elements` bytes rounded up to whole uints.
    bool packed = false;
    bool write_back = false;  // a partition input written back (not bindable)
    // Float staging mapped read-write that may be the tensor's memory
    // (runtime_alias.cc): no copy where it is.
    bool aliasable = false;
    bool gpu_bound = false;   // bound on the GPU: no host copy (BindGpu)
    // DeviceProfile::cpu_readback_resize: `buffer` is a RESIZE_BILINEAR's
    // PHWC4 input of shape `resize.source`, interpolated to `shape` on the CPU.
    ReadbackResize resize{};
    // DeviceProfile::transfer_bands (runtime_bands.cc): the conversion step
    // run in these row bands, each a range of the BHWC elements, its own
    // uniform range and grid; empty: whole.
    struct Band {
      size_t begin = 0, end = 0;
      size_t uniform_offset = 0;
      uint32_t groups[3] = {1, 1, 1};
    };
    int band_step = -1;
    std::vector<Band> bands{};
  };
  // Per Value: whether the CPU writes or reads its buffer (then it has its
  // own buffer, outside the arena) and in what form.
  struct HostSide {
    enum Role : uint8_t { kNone, kUpload, kDownload };
    Role role = kNone;
    bool bhwc = false;  // a BHWC staging buffer (else the PHWC4 tensor)
    bool half = false;  // elements stored as halves
    bool packed = false;  // 8-bit elements, 4 per uint (Transfer::packed)
  };
  // A partition output that is a folded constant (a DEQUANTIZE of a
  // constant whose result a CPU op also reads): written from the CPU.
  struct ConstantOutput {
    int tflite_index;
    std::vector<float> values;  // BHWC
  };

  PartitionRuntime() = default;
  Status AddStep(Dispatch dispatch, ProgramCache& programs);
  // cpu_readback_resize: the resize steps the CPU stands in for, skipped;
  // UseGpuResize runs one again and reads its output back instead.
  void SkipCpuResizes();
  void UseGpuResize(Transfer& t);
  // `same_uniforms`: a step this one stands in for, a variant of the same
  // shader with other compiled-in defines (a bound texture or buffer read
  // in place): it binds that step's uniform range instead of adding its own.
  StatusOr<Step> MakeStep(Dispatch dispatch, ProgramCache& programs,
                          const Step* same_uniforms = nullptr);
  // `barrier`: a glMemoryBarrier first (Step::barrier_before, or always
  // when profiling each dispatch on its own).
  // `band`: one row band of a banded conversion (runtime_bands.cc), with
  // its own uniform range and grid.
  Status BindAndDispatch(const Step& step, bool barrier,
                         const Transfer::Band* band = nullptr);
  // The step's workgroup counts for its grid (a long 1-D grid folded over y).
  Status CountGroups(const Dispatch& dispatch, uint32_t groups[3]) const;
  // A uniform block appended to uniform_data_ at the device's alignment: its offset.
  size_t AddUniformBlock(const std::vector<int32_t>& block);
  // Row bands (runtime_bands.cc): planned at the end of the build; an
  // upload's bands copied and dispatched one after another (false: not
  // banded this invoke, nothing done); a readback's conversion dispatched in
  // bands, each but the last fenced; its copy band by band after each fence.
  void PlanTransferBands();
  StatusOr<bool> UploadInBands(const Transfer& upload, const abi::Tensor& tensor);
  // Readback fusion (delegate/passes/readback_fusion.h, runtime_readback_fusion.cc):
  // planned at the end of the build; ApplyReadbackFusions runs each fused
  // producer's variant in its place and skips its conversion
  // (kFusedReadbackSkip) while its output is read back by the CPU, the
  // original pair where it is bound on the GPU or is `unfused_output`.
  void PlanReadbackFusions(ProgramCache& programs);
  void ApplyReadbackFusions(int unfused_output = -1);
  bool ReadbackFused(const Transfer& t) const;
  bool ReadbackInBands(size_t step) const;
  Status DispatchReadbackBands(const Step& step, bool barrier);
  Status DownloadInBands(const Transfer& download, abi::Tensor& tensor);
  // Create (after the upload fusion; `uploads`: the conversions left): which
  // transfers are aliasable; Allocate: whether value `value` is such a
  // staging (mapped read-write); Run: whether `t`'s tensor is its staging
  // now (no copy). runtime_alias.cc.
  void PlanAliasedTransfers(const std::vector<Dispatch>& uploads);
  // FuseUploadConversions (delegate/passes/upload_fusion.h), but with
  // DeviceProfile::alias_unfuses_upload not for large inputs that could be aliased.
  int FuseUploads(std::vector<Dispatch>* uploads, std::vector<Dispatch>* kernels,
                  const std::vector<Dispatch>& readbacks) const;
  // An upload that may be its tensor's memory where its conversion reads it.
  bool MayAliasUpload(const Transfer& t) const;
  // Staged as TFLite's floats, as they are: what aliasing can share.
  static bool PlainFloats(const Transfer& t);
  bool SharedWithTflite(size_t value) const;
  // The tensor is float32 of exactly t's elements, within its staging buffer.
  bool StagingFits(const Transfer& t, const abi::Tensor& tensor) const;
  bool IsAliased(const Transfer& t, const abi::Tensor& tensor) const;
  // Step::barrier_before from the bytes each step reads and writes.
  void PlaceBarriers();
  // Plans and allocates the shared arena of intermediate tensors.
  Status AllocateArena();
  // RGBA textures (DeviceProfile::rgba_textures): which roots live in a
  // texture (every tensor and constant a kernel binds, but staging and
  // read-write buffers), then the shared textures of the intermediates
  // (PlanTextures). Constants get theirs in Allocate.
  Status ChooseTextureValues();
  Status AllocateTextures();
  bool IsTexture(size_t root) const {
    return root < texture_of_.size() && texture_of_[root] >= 0;
  }
  // The buffer range holding `id` (its root's for a view), bound for writing
  // (SSBO) or reading (texture view or SSBO).
  Status BindForWrite(ValueId id, GLuint binding) const;
  Status BindForRead(ValueId id, GLuint binding) const;
  // Runs every step and records timings_ (GPU timer queries if the driver
  // has them, else glFinish around each dispatch).
  Status DispatchProfiled();
  // The partition's cacheable constants (Value::lazy): which they are, the
  // entry's key, and the converted bytes when they had to be converted
  // (delegate/runtime/model_data_cache.h; runtime_model_data.cc).
  struct ModelData {
    std::map<size_t, size_t> slot;  // value index -> position in sizes
    std::vector<size_t> value_of;   // position -> value index
    std::vector<size_t> sizes;      // upload bytes per position
    std::vector<std::vector<uint8_t>> blobs;  // converted, to be stored
    std::string key;
    bool loaded = false;
  };
  ModelData PlanModelData(size_t vec4_bytes) const;
  // Fills the buffers Allocate created (empty) for the cacheable constants:
  // streamed from the cache entry when it holds them, else converted from
  // the model (and kept in data->blobs for StoreModelData).
  Status UploadModelData(ModelData* data);
  // Writes the blobs UploadModelData converted, unless they came from the cache.
  void StoreModelData(const ModelData& data);
  // A constant's upload bytes, made now if it was lazy: its floats, or
  // their halves (in *halves) where tensors are fp16.
  const void* ConstantUploadBytes(Value& value, std::vector<uint16_t>* halves) const;

  Status UploadInput(const Transfer& upload, const abi::Tensor& tensor);
  // A packed uint8/int8 input (Transfer::packed): its bytes as they are.
  Status UploadBytes(const Transfer& upload, const abi::Tensor& tensor);
  // A float input the conversion rounds (Transfer::quantize_tail), into its
  // fp32 staging.
  Status UploadRoundedOnGpu(const Transfer& upload, const float* floats, void* mapped,
                            bool stream);
  Status DownloadOutput(const Transfer& download, abi::Tensor& tensor);
  // DownloadOutput of a relayout transfer into `floats` (the tensor's data,
  // or conversion_scratch_ for other types), then FinishDownload.
  Status DownloadRelaidOut(const Transfer& download, float* floats, abi::Tensor& tensor);
  // The float -> int32/bool/quantized step of a download, if its type needs one.
  Status FinishDownload(const Transfer& download, abi::Tensor& tensor);

  // A value whose storage is a buffer outside the runtime (an application's,
  // or a GPU binding's own): dispatches bind it instead of the value's own
  // buffer or arena range (runtime_gpu_io.cc).
  struct ExternalStorage {
    GLuint buffer = 0;  // 0: none
    size_t bytes = 0;
    gl::TextureBufferView view;  // where the value is read through one
  };
  // One bound tensor (BindGpu).
  struct GpuBound {
    int tflite_index = -1;
    bool input = false;
    GpuBinding binding;
    gl::Buffer own;      // the producer's / sink's buffer (binding.buffer 0)
    gl::Buffer scratch;  // BHWC floats for an upload conversion fused away
    GpuBufferRef ref;    // the float32 buffer the tensor is bound to
    std::vector<Step> steps;  // gpu_io.comp dispatches, before / after
    std::vector<ValueId> aliased;  // values now stored in an external buffer
    std::vector<ValueId> externals;  // values AddExternalValue made for it
    int skipped_step = -1;  // the layout conversion the binding replaces
    // In place (a texture, runtime_texture_io.cc): the texture checked at
    // every invoke; its dispatches (texture_steps, before the partition's
    // first step for inputs, after the last for outputs) or the kernel step
    // it replaces with a variant that reads the texture (replaced_step,
    // replacement).
    GpuTextureAccess* in_place = nullptr;
    std::vector<Step> texture_steps;
    int replaced_step = -1;
    std::shared_ptr<Step> replacement;
    // Steps swapped for their float-staging variants (UseFloatStaging):
    // index, original.
    std::vector<std::pair<size_t, Step>> swapped;
  };
  // Resolves `bound` (its ref set) against the partition: aliases, steps.
  Status PlanBound(GpuBound& bound, ProgramCache& programs);
  // Plans a texture binding in place; false (nothing changed) where no
  // dispatch of the partition can read or write it (then the producer or
  // sink runs through a float buffer). `skip_conversion`: the readback
  // conversion goes (an output no one copies to the host).
  StatusOr<bool> PlanTextureInPlace(GpuBound& bound, bool skip_conversion,
                                    ProgramCache& programs);
  // An output texture written by the epilogue of the step that produces
  // `tensor` (transpose_conv.comp TEXTURE_OUTPUT); false where that kernel
  // has none or the step does not fit (then a dispatch of its own writes it).
  StatusOr<bool> PlanTextureEpilogue(GpuBound& bound, ValueId tensor, int conversion,
                                     bool skip_conversion, ProgramCache& programs);
  const Transfer* BoundTransfer(const GpuBound& bound) const;
  // The step to run at position i: a binding's replacement or steps_[i].
  const Step& StepAt(size_t i) const {
    return i < replaced_by_.size() && replaced_by_[i] ? *replaced_by_[i] : steps_[i];
  }
  Status AliasValue(ValueId value, GLuint buffer, size_t bytes, GLenum view_format,
                    GpuBound& bound);
  ValueId AddExternalValue(const Shape4& shape, GLuint buffer, size_t bytes,
                           GpuBound& bound);
  StatusOr<Step> GpuIoStep(const char* variant, const Shape4& shape,
                           ValueId output, ValueId input, ProgramCache& programs);
  void ReleaseBound(GpuBound& bound);
  // A bound input whose staging holds packed bytes: the steps that read the
  // staging (its upload conversion, or the convolution fused with it) are
  // swapped for their float-reading variants while bound, the originals
  // kept in `bound` (ReleaseBound puts them back).
  Status UseFloatStaging(ValueId staging, GpuBound& bound, ProgramCache& programs);
  // Run's parts for bound tensors: producers and conversions before the
  // first step, conversions and sinks after the last.
  bool skipped(size_t step) const { return step < skip_step_.size() && skip_step_[step]; }
  Status RunBoundInputs();
  Status RunBoundOutputs();

  DeviceProfile device_;
  ModelDataCache* model_data_ = nullptr;  // the serialization cache's, or none
  std::vector<Value> values_;
  std::vector<HostSide> host_;  // per value
  std::vector<Step> steps_;
  std::vector<Transfer> uploads_;
  std::vector<Transfer> downloads_;
  std::vector<ConstantOutput> constant_outputs_;
  std::vector<float> conversion_scratch_;  // bool/int32/uint8/int8 <-> float
  std::vector<uint16_t> half_scratch_;     // halves, where not mapped
  std::vector<float> phwc4_floats_;        // CPU relayouts (direct transfers)
  std::vector<float> resize_scratch_;      // CPU resizes at readback (readback_resize.h)
  std::vector<uint16_t> phwc4_halves_;
  // Megabyte copies on several threads (device_.host_copy_threads); made
  // at the first such copy.
  std::unique_ptr<CopyWorkers> copy_workers_;
  CopyWorkers& copy_workers() {
    if (!copy_workers_) copy_workers_ = std::make_unique<CopyWorkers>(device_.host_copy_threads,
                                                     device_.host_copy_min_part_bytes);
    return *copy_workers_;
  }
  std::vector<gl::Buffer> buffers_;                 // per value
  std::vector<gl::TextureBufferView> views_;        // per value (if used)
  // Per value: its texture in textures_ (-1: buffer storage); kTextureWanted
  // between ChooseTextureValues and the allocation.
  std::vector<int> texture_of_;
  std::vector<gl::TensorTexture> textures_;
  static constexpr int kTextureWanted = -2;
  // Every step's uniform block, written once at Allocate (an invoke uploads
  // no uniforms; it binds each step's range).
  std::vector<uint8_t> uniform_data_;
  gl::Buffer uniforms_;
  gl::Buffer arena_;                   // intermediates, shared by lifetime
  std::vector<size_t> arena_offset_;   // per value; kOwnBuffer if not in it
  std::vector<size_t> arena_bytes_;    // per value: its range in the arena
  static constexpr size_t kOwnBuffer = static_cast<size_t>(-1);
  MemoryStats memory_;
  bool allocated_ = false;
  int fused_ = 0;
  int barriers_ = 0;  // steps with a barrier before them (PlaceBarriers)
  long long gpu_bytes_ = 0;
  std::vector<DispatchTiming> timings_;
  std::vector<GpuBound> gpu_bound_;
  std::vector<ExternalStorage> external_;  // per value (empty: none)
  std::vector<uint8_t> skip_step_;         // per step: replaced by a binding
  // Resize steps skipped (skip_step_ == kCpuResizeSkip) at creation: the
  // CPU resizes at readback. Fixed, so that dispatch_count() is too.
  static constexpr uint8_t kCpuResizeSkip = 2;
  int cpu_resizes_ = 0;
  struct FusedReadback {
    int tflite_index, producer, conversion;
    std::shared_ptr<Step> step;  // the producer writing the staging
  };
  std::vector<FusedReadback> fused_readbacks_;
  static constexpr uint8_t kFusedReadbackSkip = 3;
  std::vector<const Step*> replaced_by_;   // per step: a binding's variant, or null
  ProgramCache* programs_ = nullptr;       // for the gpu_io conversions
  // DeviceProfile::report_phases / report_timeline (off: no clock reads).
  InvokeTimeline timeline_;
  // Signalled when the GPU has read this invoke's mapped upload staging
  // (and finished it: the fenced readbacks wait for the same fence).
  gl::Fence staging_reads_done_;
  // The banded readback (at most one per partition, downloads_ index or
  // -1) and its bands' fences, all but the last's (that one is
  // staging_reads_done_); readback_banded_: issued so this invoke.
  int banded_download_ = -1;
  std::vector<gl::Fence> band_fences_;
  gl::Fence readback_start_;  // DeviceProfile::band_early_wake
  bool readback_banded_ = false;
  // Per download, this invoke: its tensor is its staging (IsAliased).
  std::vector<uint8_t> download_aliased_;
  gl::GpuTimer timer_;        // empty where timer queries are unavailable
  bool timer_tried_ = false;  // created lazily on the first profiled run
};

}  // namespace tflite_gles
