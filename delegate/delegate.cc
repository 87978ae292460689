#include "delegate/delegate.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "delegate/device/device_profiles.h"
#include "delegate/device/device_tuning.h"
#include "delegate/graph/partition_plan.h"
#include "delegate/graph/graph_dump.h"
#include "delegate/graph/model_inputs.h"
#include "delegate/kernels/quantize.h"
#include "delegate/kernels/registry.h"
#include "delegate/passes/norm_fusion.h"
#include "delegate/abi/tflite_builtin.h"
#include "egl/init_phases.h"

namespace tflite_gles {
namespace {

std::atomic<long> g_live_delegates{0};

// Delegates alive now, each with the serial number it was created with.
// TFLite may free a partition after its delegate is gone (Python finalizes
// the delegate object first at interpreter shutdown); the partition then
// must not touch its owner. The serial tells a new delegate that happens to
// reuse a deleted one's address from the partition's real owner.
std::mutex g_owners_mutex;
std::map<const GlesDelegate*, long> g_owners;
long g_next_owner_serial = 0;

// One delegated partition: what Registration::init returns as user_data.
struct Partition {
  GlesDelegate* owner = nullptr;
  long owner_serial = -1;  // see g_owners
  std::shared_ptr<gl::ContextIdentity> gl_context;  // the owner's (Free)
  int id = 0;  // creation order, for the profile
  std::unique_ptr<PartitionRuntime> runtime;
  std::string build_error;  // why the partition cannot run, if it cannot
  // The inputs' shapes at build time: the GPU program is specialised for them.
  std::vector<std::pair<int, std::vector<int>>> input_dims;
  bool invoked = false;  // the first invoke is a phase of the start
};

const abi::IntArray* AsIntArray(const std::vector<int>& storage) {
  return reinterpret_cast<const abi::IntArray*>(storage.data());
}

}  // namespace

// The C callbacks TFLite calls; they forward to GlesDelegate / Partition.
struct DelegateCallbacks {
  static abi::Status Prepare(abi::Context* context, abi::Delegate* delegate) {
    return GlesDelegate::FromAbi(delegate)->Prepare(context);
  }

  static void* Init(abi::Context* context, const char* buffer, size_t) {
    const auto* params = reinterpret_cast<const abi::DelegateParams*>(buffer);
    GlesDelegate* self = GlesDelegate::FromAbi(params->delegate);
    auto* partition = new Partition();
    partition->owner = self;
    {
      std::lock_guard<std::mutex> lock(g_owners_mutex);
      auto owner = g_owners.find(self);
      if (owner != g_owners.end()) partition->owner_serial = owner->second;
    }
    partition->id = self->partitions_created_++;
    partition->gl_context = self->identity_;
    Status status = BuildPartition(self, context, params, partition);
    if (status.ok()) self->runtimes_[partition->id] = partition->runtime.get();
    if (!status.ok()) {
      partition->build_error = status.message();
      // Delegate::Prepare reports it, so that TFLite restores the CPU plan.
      if (self->init_error_.empty()) self->init_error_ = status.message();
    }
    return partition;
  }

  static Status BuildPartition(GlesDelegate* self, abi::Context* context,
                               const abi::DelegateParams* params,
                               Partition* partition) {
    GraphBuilder builder(*self->graph_, self->device_);
    const KernelRegistry& registry = KernelRegistry::Global();
    // Instance-norm statistics: one dispatch for five nodes (eight with the
    // affine half; delegate/passes/norm_fusion.h), built at the group's
    // build_node.
    std::map<int, const NormStatsGroup*> group_at;
    std::set<int> covered;
    std::vector<NormStatsGroup> norm_groups;
    std::optional<gl::ScopedInitPhase> timed(std::in_place, gl::InitPhase::kKernelBuilds);
    if (self->device_.fuse_norm_stats) {
      norm_groups = FindNormStats(
          *self->graph_, ToVector(params->nodes_to_replace), ToVector(params->output_tensors),
          self->device_.fuse_norm_affine && self->device_.max_dispatch_buffers >= 6);
      for (const NormStatsGroup& group : norm_groups) {
        group_at[group.build_node] = &group;
        covered.insert(group.other_nodes.begin(), group.other_nodes.end());
        covered.insert(group.mean_node);
        covered.erase(group.build_node);
      }
    }
    // Before the nodes: a QUANTIZE of an input rounded at upload takes no
    // simulator step (SimulateQuantizedOutputs).
    TFG_RETURN_IF_ERROR(FindQuantizedUploads(context, ToVector(params->nodes_to_replace),
                                             ToVector(params->input_tensors),
                                             ToVector(params->output_tensors), builder));
    for (int node_index : ToVector(params->nodes_to_replace)) {
      if (covered.count(node_index)) continue;
      if (auto group = group_at.find(node_index); group != group_at.end()) {
        TFG_RETURN_IF_ERROR(BuildNormStats(*group->second, builder, self->device_));
        continue;
      }
      abi::Node* node = nullptr;
      abi::Registration* registration = nullptr;
      if (context->GetNodeAndRegistration(context, node_index, &node,
                                          &registration) != abi::kOk) {
        return Status::Error("cannot read node " + std::to_string(node_index));
      }
      NodeView view(context, node_index, node, registration);
      auto kernel = registry.Find(view, *self->graph_, self->device_);
      if (!kernel.ok()) return kernel.status().WithContext(view.Describe());
      const size_t first_dispatch = builder.dispatch_count();
      TFG_RETURN_IF_ERROR((*kernel)->build(view, builder).WithContext(
          view.Describe() + " (" + (*kernel)->name + ")"));
      builder.TagDispatchesWithNode(first_dispatch, node_index);
      TFG_RETURN_IF_ERROR(CountQuantized(self, view));
      // Every quantized output: rounded to its grid (or, with the
      // simulator off, only clamped to its range).
      auto steps = SimulateQuantizedOutputs(view, builder);
      if (!steps.ok()) return steps.status().WithContext(view.Describe());
      self->quantized_.simulated += *steps;
    }
    for (int index : ToVector(params->output_tensors)) {
      if (index >= 0 && IsQuantizedType(context->tensors[index].type)) {
        ++self->quantized_.transfers;
      }
    }
    std::vector<int> inputs;
    for (int index : ToVector(params->input_tensors)) {
      if (index >= 0 && !self->graph_->IsConstant(index)) {
        if (IsQuantizedType(context->tensors[index].type)) ++self->quantized_.transfers;
        inputs.push_back(index);
        partition->input_dims.emplace_back(index,
                                           DimsVector(context->tensors[index].dims));
      }
    }
    timed.emplace(gl::InitPhase::kRuntimeCreate);
    TFG_ASSIGN_OR_RETURN(
        partition->runtime,
        PartitionRuntime::Create(builder, inputs,
                                 ToVector(params->output_tensors),
                                 self->device_, *self->programs_));
    self->dispatches_ += partition->runtime->dispatch_count();
    timed.emplace(gl::InitPhase::kAllocate);
    // Allocate now, inside ModifyGraphWithDelegate: a failure here makes the
    // delegate's Prepare fail and TFLite restore the CPU plan, instead of a
    // later AllocateTensors failing with no way back.
    TFG_RETURN_IF_ERROR(partition->runtime->Allocate().WithContext(
        "allocating the GPU partition"));
    self->gpu_bytes_ += partition->runtime->gpu_bytes();
    self->memory_[partition->id] = partition->runtime->memory();
    return Status::Ok();
  }

  // Quantized constants a node reads (dequantized once, at init) and its
  // quantized partition boundaries, for the INFO line.
  static Status CountQuantized(GlesDelegate* self, const NodeView& view) {
    for (int i = 0; i < view.num_inputs(); ++i) {
      if (!view.has_input(i)) continue;
      const int index = view.input_index(i);
      if (self->graph_->IsQuantizedConstant(index)) self->quantized_.constants.insert(index);
    }
    if (view.op() == abi::kTfLiteBuiltinDequantize && view.has_input(0) &&
        IsConstantTensor(view.input(0)) && view.input(0).type != abi::kFloat16 &&
        view.input(0).type != abi::kFloat32) {
      self->quantized_.constants.insert(view.input_index(0));
    }
    return Status::Ok();
  }

  static void Free(abi::Context* context, void* buffer) {
    // Our context made current for the teardown where it can be, the
    // caller's restored after; else nothing deleted (context_identity.h).
    auto* partition = static_cast<Partition*>(buffer);
    // Tensors that are our staging go back to TFLite before the staging
    // goes (runtime_alias.cc): plain writes into TFLite's tensors.
    if (partition->runtime) partition->runtime->ReleaseAliases(context);
    gl::ScopedTeardown teardown(partition->gl_context.get(), "a tflite-gles partition");
    std::lock_guard<std::mutex> lock(g_owners_mutex);
    auto owner = g_owners.find(partition->owner);
    const bool owner_alive =
        owner != g_owners.end() && owner->second == partition->owner_serial;
    if (owner_alive) {
      if (partition->runtime) {
        partition->owner->gpu_bytes_ -= partition->runtime->gpu_bytes();
        partition->owner->dispatches_ -= partition->runtime->dispatch_count();
      }
      partition->owner->profiles_.erase(partition->id);
      partition->owner->runtimes_.erase(partition->id);
      partition->owner->DropBindingsOf(partition->id, context);
      partition->owner->memory_.erase(partition->id);
    }
    delete partition;
  }

  static abi::Status KernelPrepare(abi::Context* context, abi::Node* node) {
    auto* partition = static_cast<Partition*>(node->user_data);
    GlesDelegate* self = partition->owner;
    if (!partition->build_error.empty()) {
      self->Report(context, "tflite-gles: the GPU partition could not be built: " +
                                partition->build_error);
      return abi::kError;
    }
    Status status = CheckInputShapesUnchanged(context, partition->input_dims);
    if (status.ok()) status = self->env_->EnsureCurrent();
    if (!status.ok()) {
      // A resized input (AllowDynamicTensors): no tensor keeps our staging,
      // which its new bytes may overflow; TFLite's "unallocated" instead.
      partition->runtime->ReleaseAliases(context);
      self->Report(context, "tflite-gles: preparing the GPU partition failed: " +
                                status.message());
      return abi::kError;
    }
    // Before TFLite's arena planner runs: it leaves those tensors alone.
    partition->runtime->AliasTensors(context);
    return abi::kOk;
  }

  static abi::Status KernelInvoke(abi::Context* context, abi::Node* node) {
    auto* partition = static_cast<Partition*>(node->user_data);
    GlesDelegate* self = partition->owner;
    Status status = self->env_->EnsureCurrent();
    if (status.ok()) {
      std::optional<gl::ScopedInitPhase> timed;
      if (!partition->invoked) timed.emplace(gl::InitPhase::kFirstInvoke);
      status = partition->runtime->Run(context, self->options_.enable_profiling);
    }
    if (!partition->invoked && self->report_init_phases_) gl::PrintInitPhases("first invoke");
    partition->invoked = true;
    if (!status.ok()) {
      self->Report(context, "tflite-gles: Invoke failed: " + status.message());
      return abi::kError;
    }
    if (self->options_.enable_profiling) {
      self->profiles_[partition->id] = partition->runtime->timings();
    }
    if (!self->bound_.empty()) self->MarkBoundOutputsStale(partition->id, context);
    ++self->invokes_;
    return abi::kOk;
  }
};

GlesDelegate::GlesDelegate(Options options) : options_(std::move(options)) {
  delegate_.data_ = this;
  delegate_.Prepare = DelegateCallbacks::Prepare;
  delegate_.CopyFromBufferHandle = GpuIoCallbacks::CopyFromBufferHandle;
  delegate_.CopyToBufferHandle = GpuIoCallbacks::CopyToBufferHandle;
  delegate_.FreeBufferHandle = GpuIoCallbacks::FreeBufferHandle;
  // See Options::reapply_on_resize for what the flag trades.
  delegate_.flags = options_.reapply_on_resize
                        ? abi::kDelegateFlagsNone
                        : abi::kDelegateFlagsAllowDynamicTensors;
  ++g_live_delegates;
  std::lock_guard<std::mutex> lock(g_owners_mutex);
  g_owners[this] = g_next_owner_serial++;
}

long GlesDelegate::LiveCount() { return g_live_delegates.load(); }

GlesDelegate::~GlesDelegate() {
  // As in Free: our context current for the teardown, or nothing deleted.
  gl::ScopedTeardown teardown(identity_.get(), "a tflite-gles delegate");
  {
    std::lock_guard<std::mutex> lock(g_owners_mutex);
    g_owners.erase(this);
  }
  // Bound outputs still carry our handle while their interpreter lives
  // (a freed partition would have dropped them): the interpreter must not
  // call back into a deleted delegate when it frees those tensors.
  for (const auto& [index, bound] : bound_) ClearHandle(bound, context_);
  bound_.clear();
  // Programs before the context that owns them.
  programs_.reset();
  identity_.reset();  // its witness, before an owned context goes
  env_.reset();
  --g_live_delegates;
}

GlesDelegate* GlesDelegate::FromAbi(abi::Delegate* delegate) {
  return static_cast<GlesDelegate*>(delegate->data_);
}

const GlesDelegate* GlesDelegate::FromAbi(const abi::Delegate* delegate) {
  return static_cast<const GlesDelegate*>(delegate->data_);
}

void GlesDelegate::Report(abi::Context* context, const std::string& message) {
  last_error_ = message;
  if (context != nullptr && context->ReportError != nullptr) {
    context->ReportError(context, "%s", message.c_str());
  } else {
    std::fprintf(stderr, "ERROR: %s\n", message.c_str());
  }
}

Status GlesDelegate::AcquireEnvironment(const DeveloperOverrides& overrides) {
  if (env_) return env_->EnsureCurrent();
  egl::DisplayPlatform platform = egl::DisplayPlatform::kAuto;
  switch (options_.egl_platform) {
    case TFLITE_GLES_EGL_PLATFORM_DEVICE: platform = egl::DisplayPlatform::kDevice; break;
    case TFLITE_GLES_EGL_PLATFORM_SURFACELESS: platform = egl::DisplayPlatform::kSurfaceless; break;
    case TFLITE_GLES_EGL_PLATFORM_DEFAULT: platform = egl::DisplayPlatform::kDefault; break;
    default: break;
  }
  // With the serialization cache on, the driver's own shader cache lives in
  // a subfolder of it while our display is initialized: on Mesa the program
  // binaries are NIR and the machine code exists only there
  // (egl/driver_shader_cache.h, docs/perf/cold_start.md).
  const bool serializing =
      !options_.serialization_dir.empty() && !options_.model_token.empty();
  std::string driver_cache_dir;
  if (serializing && overrides.driver_cache.value_or(true)) {
    driver_cache_dir = options_.serialization_dir + "/" + kDriverShaderCacheFolder;
  }
  TFG_ASSIGN_OR_RETURN(env_, egl::GlEnvironment::Acquire(platform, options_.egl_device,
                                                        driver_cache_dir));
  TFG_ASSIGN_OR_RETURN(identity_, gl::ContextIdentity::OfCurrent());
  programs_ = std::make_unique<ProgramCache>();
  if (overrides.program_binaries.value_or(true)) {
    gl::ScopedInitPhase timed(gl::InitPhase::kOpenCache);
    programs_->OpenSerializationCache(options_.serialization_dir,
                                       options_.model_token);
  }

  // The storage choice, in one place: the read path the device measured
  // best (PreferTextureBufferReads), unless the options ask for one.
  // The device profile (delegate/device/device_profiles.h): every limit
  // below is the GPU's, clamped to the profile's.
  TFG_ASSIGN_OR_RETURN(const int profile,
                       ChooseDeviceProfile(options_.device_profile, overrides.device_profile));
  gpu_ = ApplyDeviceProfile(env_->info(), profile);
  const egl::GpuInfo& gpu = gpu_;
  device_.gpu = &gpu;
  // fp16 where precision loss is allowed and it pays on this device, or
  // where memory comes first (it halves every tensor and weight).
  device_.fp16 = options_.UseFp16() && (options_.MemoryFirst() || Fp16StoragePays(gpu));
  // TFLITE_GLES_X_STORAGE forces one (A/B runs, the suites under RGBA
  // textures).
  const int storage = overrides.storage.value_or(options_.storage);
  ChooseStorage(&device_, storage);
  if (storage == TFLITE_GLES_STORAGE_TEXTURE_BUFFER && !gpu.has_texture_buffer) {
    return Status::Error("storage=texture_buffer requested, but '" +
                         gpu.renderer + "' has no texture buffers");
  }
  device_.fuse_epilogues =
      (options_.experimental_flags & TFLITE_GLES_EXPERIMENTAL_NO_FUSION) == 0;
  device_.plan_memory =
      (options_.experimental_flags & TFLITE_GLES_EXPERIMENTAL_NO_MEMORY_PLAN) == 0;
  // llvmpipe vectorizes x in groups of 8 lanes; 64 suits it and real GPUs.
  device_.preferred_local_x = 64;
  TuneForDevice(&device_, overrides);
  return Status::Ok();
}

abi::Status GlesDelegate::Prepare(abi::Context* context) {
  // TFLite re-applies the delegate after a resize; a failed re-application
  // leaves the graph on the CPU, and the stats must say so.
  nodes_delegated_ = 0;
  partitions_ = 0;
  // The environment's developer overrides, read once for this Prepare.
  const DeveloperOverrides overrides = ReadDeveloperOverrides();
  report_init_phases_ = overrides.report_init_phases.value_or(false);
  Status status = AcquireEnvironment(overrides);
  const ProgramCacheCounts programs_before =
      programs_ ? programs_->counts() : ProgramCacheCounts();
  const ModelDataCounts data_before = programs_ && programs_->model_data()
                                          ? programs_->model_data()->counts()
                                          : ModelDataCounts();
  if (!status.ok()) {
    Report(context, "tflite-gles: cannot run on the GPU: " + status.message());
    return abi::kDelegateError;
  }
  quantized_ = QuantizedCounts();
  context_ = context;
  graph_ = std::make_unique<GraphContext>(
      context, QuantizationOptions{options_.quantized_models_allowed,
                                   options_.quantization_simulator});
  if (!overrides.dump_graph.empty()) {
    Status dumped = WriteGraphDump(context, overrides.dump_graph);
    if (!dumped.ok()) {
      std::fprintf(stderr, "WARNING: tflite-gles: %s\n", dumped.message().c_str());
    }
  }

  abi::IntArray* plan = nullptr;
  if (context->GetExecutionPlan(context, &plan) != abi::kOk) {
    Report(context, "tflite-gles: GetExecutionPlan failed");
    return abi::kDelegateError;
  }
  const KernelRegistry& registry = KernelRegistry::Global();
  std::vector<int> supported;
  // (op description, reason) -> the nodes declined for it: every node that
  // stays on the CPU is named once, with its reason.
  std::map<std::pair<std::string, std::string>, std::vector<int>> declined;
  std::map<int, std::string> op_of;
  std::map<int, std::string> reason_of;  // declined node -> why
  std::optional<gl::ScopedInitPhase> timed(std::in_place, gl::InitPhase::kSupportChecks);
  for (int i = 0; i < plan->size; ++i) {
    abi::Node* node = nullptr;
    abi::Registration* registration = nullptr;
    if (context->GetNodeAndRegistration(context, plan->data[i], &node,
                                        &registration) != abi::kOk) {
      declined[{"?", "the runtime could not return the node"}].push_back(plan->data[i]);
      continue;
    }
    NodeView view(context, plan->data[i], node, registration);
    op_of[plan->data[i]] = view.Describe();
    auto kernel = registry.Find(view, *graph_, device_);
    if (kernel.ok()) {
      supported.push_back(plan->data[i]);
    } else {
      declined[{view.Describe(), kernel.status().message()}].push_back(plan->data[i]);
      reason_of[plan->data[i]] = kernel.status().message();
    }
  }
  timed.reset();
  for (const auto& [key, nodes] : declined) {
    std::fprintf(stderr,
                 "WARNING: tflite-gles: %s cannot be handled by this delegate "
                 "(%zu node%s stay%s on the CPU: %s): %s\n",
                 key.first.c_str(), nodes.size(), nodes.size() == 1 ? "" : "s",
                 nodes.size() == 1 ? "s" : "", NodeList(nodes).c_str(),
                 key.second.c_str());
  }

  // Read before planning: GetExecutionPlan (which planning calls again)
  // replaces the array `plan` points to.
  const int total_nodes = plan->size;
  auto planned = PlanPartitions(context, supported, reason_of,
                                options_.max_delegated_partitions);
  if (!planned.ok()) {
    // The runtime cannot partition this graph: it stays on the CPU, which
    // is always correct, rather than failing the whole interpreter.
    std::fprintf(stderr, "WARNING: tflite-gles: %s stay on the CPU: %s\n",
                 NodeList(supported).c_str(), planned.status().message().c_str());
    graph_.reset();
    return abi::kOk;
  }
  for (const CpuNodes& group : planned->cpu) {
    std::set<std::string> ops;
    for (int node : group.nodes) ops.insert(op_of[node]);
    std::string op_names;
    for (const std::string& op : ops) op_names += (op_names.empty() ? "" : ", ") + op;
    std::fprintf(stderr, "WARNING: tflite-gles: %s (%s) stay%s on the CPU: %s\n",
                 NodeList(group.nodes).c_str(), op_names.c_str(),
                 group.nodes.size() == 1 ? "s" : "", group.reason.c_str());
  }
  const std::vector<int>& chosen = planned->delegated;
  const int partitions = planned->partitions;

  nodes_total_ = total_nodes;
  nodes_delegated_ = static_cast<int>(chosen.size());
  partitions_ = partitions;
  abi::Status result = abi::kOk;
  if (!chosen.empty()) {
    abi::Registration registration{};
    registration.init = DelegateCallbacks::Init;
    registration.free = DelegateCallbacks::Free;
    registration.prepare = DelegateCallbacks::KernelPrepare;
    registration.invoke = DelegateCallbacks::KernelInvoke;
    registration.builtin_code = abi::kTfLiteBuiltinDelegate;
    registration.custom_name = "TfLiteGlesDelegate";
    registration.version = 1;
    std::vector<int> storage = MakeIntArray(chosen);
    init_error_.clear();
    gl::ScopedInitPhase partitioning(gl::InitPhase::kPartition);
    result = context->ReplaceNodeSubsetsWithDelegateKernels(
        context, registration, AsIntArray(storage), &delegate_);
    if (result == abi::kOk && !init_error_.empty()) {
      Report(context, "tflite-gles: preparing the GPU partition failed: " + init_error_);
      result = abi::kDelegateError;
    }
  }
  graph_.reset();  // it points into this context's tensors
  if (report_init_phases_) gl::PrintInitPhases("applied");
  if (options_.log_info) LogPrepareInfo(programs_before, data_before);
  return result;
}

}  // namespace tflite_gles
