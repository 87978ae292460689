// The subset of the TensorFlow Lite C ABI that the delegate speaks.
//
// There is no TFLite library or header to build against here: the runtime the
// delegate runs inside (ai-edge-litert's interpreter, benchmark_model, an
// application's own TFLite build) hands us pointers to structs whose layout is
// fixed by TFLite's C API. These declarations restate that layout in our own
// words. Field order, types and enum values are the interface; everything is
// checked by static_asserts below (for LP64) and, against the real runtime, by
// tests/python/test_abi.py, which compares what the delegate sees through these
// structs with what the interpreter reports.
//
// Two runtimes are tested: ai-edge-litert 2.3.0 and tflite-runtime 2.14.0
// (TensorFlow 2.14, what Raspberry Pi users run; test_abi.py and
// test_models.py run against it with TFLITE_GLES_TEST_RUNTIME=tflite_runtime).
// Upstream only appends fields, so an older runtime has a prefix of these
// structs; every field the delegate reads is in TF 2.14's prefix.
// Registration goes by value to ReplaceNodeSubsetsWithDelegateKernels: a
// runtime whose struct is shorter reads the prefix it knows (on LP64 SysV
// and AAPCS64 a struct this large is passed in memory, so the extra tail
// shifts no other argument).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tflite_gles::abi {

enum Status : int32_t {
  kOk = 0,
  kError = 1,
  kDelegateError = 2,
  kApplicationError = 3,
  kDelegateDataNotFound = 4,
  kDelegateDataWriteError = 5,
  kDelegateDataReadError = 6,
  kUnresolvedOps = 7,
  kCancelled = 8,
  kOutputShapeNotKnown = 9,  // [abi-review] was missing; upstream value 9
};

enum Type : int32_t {
  kNoType = 0,
  kFloat32 = 1,
  kInt32 = 2,
  kUInt8 = 3,
  kInt64 = 4,
  kString = 5,
  kBool = 6,
  kInt16 = 7,
  kComplex64 = 8,
  kInt8 = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kComplex128 = 12,
  kUInt64 = 13,
  kResource = 14,
  kVariant = 15,
  kUInt32 = 16,
  kUInt16 = 17,
  kInt4 = 18,
  kBFloat16 = 19,
  // [abi-review] were missing; upstream tflite_types.h has these too.
  kInt2 = 20,
  kUInt4 = 21,
  kFloat8E4M3FN = 22,
  kFloat8E5M2 = 23,
};

enum AllocationType : int32_t {
  kMemNone = 0,
  kMmapRo = 1,
  kArenaRw = 2,
  kArenaRwPersistent = 3,
  kDynamic = 4,
  kPersistentRo = 5,
  kCustom = 6,
  kVariantObject = 7,
  kNonCpu = 8,  // [abi-review] was missing; upstream kTfLiteNonCpu
};

enum QuantizationType : int32_t {
  kNoQuantization = 0,
  kAffineQuantization = 1,
  // [abi-review] were missing. Quantization::params is NOT an
  // AffineQuantization* for these (different upstream structs).
  kBlockwiseQuantization = 2,
  kMultiAxisQuantization = 3,
};

// Flags of Delegate::flags.
enum DelegateFlags : int64_t {
  kDelegateFlagsNone = 0,
  kDelegateFlagsAllowDynamicTensors = 1,
  kDelegateFlagsRequirePropagatedShapes = 2,
  kDelegateFlagsPerOperatorProfiling = 4,
  // [abi-review] was missing; honoured by the runtime (skips the CPU-kernel
  // prepare pass, and fails if the graph is not fully delegated).
  kDelegateFlagsHintFullyDelegatedToSingleDelegate = 8,
};

// A length-prefixed int array; `data` is a flexible array member in C.
// [abi-review] so sizeof(IntArray) is 8 here but 4 upstream: size allocations
// with offsetof(IntArray, data) + n * sizeof(int), never sizeof(IntArray).
struct IntArray {
  int size;
  int data[1];
};

struct FloatArray {
  int size;
  float data[1];
};

struct AffineQuantization {
  FloatArray* scale;
  IntArray* zero_point;
  int32_t quantized_dimension;
};

struct QuantizationParams {
  float scale;
  int32_t zero_point;
};

struct Quantization {
  QuantizationType type;
  void* params;  // AffineQuantization* when type == kAffineQuantization
};

struct Delegate;

struct Tensor {
  Type type;
  void* data;  // a union of typed pointers in C; one pointer wide
  IntArray* dims;
  QuantizationParams params;
  AllocationType allocation_type;
  size_t bytes;
  const void* allocation;
  const char* name;
  Delegate* delegate;
  int buffer_handle;
  bool data_is_stale;
  bool is_variable;
  Quantization quantization;
  void* sparsity;
  const IntArray* dims_signature;
};

struct Node {
  IntArray* inputs;
  IntArray* outputs;
  IntArray* intermediates;
  IntArray* temporaries;
  void* user_data;
  void* builtin_data;
  const void* custom_initial_data;
  int custom_initial_data_size;
  Delegate* delegate;
  bool might_have_side_effect;
};

struct Context;

struct Registration {
  void* (*init)(Context* context, const char* buffer, size_t length);
  void (*free)(Context* context, void* buffer);
  Status (*prepare)(Context* context, Node* node);
  Status (*invoke)(Context* context, Node* node);
  const char* (*profiling_string)(const Context* context, const Node* node);
  int32_t builtin_code;
  const char* custom_name;
  int version;
  void* registration_external;
  void* (*async_kernel)(Context* context, Node* node);
  uint64_t inplace_operator;
};

// What ReplaceNodeSubsetsWithDelegateKernels passes to Registration::init
// (as `buffer`) for every partition it creates.
struct DelegateParams {
  Delegate* delegate;
  IntArray* nodes_to_replace;
  IntArray* input_tensors;
  IntArray* output_tensors;
};

// [abi-review] In the full TFLite/LiteRT runtime (verified with ai-edge-litert
// 2.3.0) these members are nullptr -- they exist for TFLite Micro only:
// profiler (unless one is installed), AllocatePersistentBuffer,
// AllocateBufferForEval, RequestScratchBufferInArena, GetScratchBuffer,
// ResizeTensorExplicit, GetTensor, GetEvalTensor. Use `tensors[i]` instead of
// GetTensor. GetExecutionPlan, GetNodeAndRegistration,
// ReplaceNodeSubsetsWithDelegateKernels, PreviewDelegatePartitioning and
// Acquire/ReleaseSubgraphContext only work inside Delegate::Prepare; from
// kernel callbacks they return an error.
struct Context {
  size_t tensors_size;
  Status (*GetExecutionPlan)(Context* context, IntArray** execution_plan);
  Tensor* tensors;
  void* impl_;
  Status (*ResizeTensor)(Context* context, Tensor* tensor, IntArray* new_size);
  void (*ReportError)(Context* context, const char* format, ...);
  Status (*AddTensors)(Context* context, int tensors_to_add,
                       int* first_new_tensor_index);
  Status (*GetNodeAndRegistration)(Context* context, int node_index,
                                   Node** node, Registration** registration);
  Status (*ReplaceNodeSubsetsWithDelegateKernels)(
      Context* context, Registration registration,
      const IntArray* nodes_to_replace, Delegate* delegate);
  int recommended_num_threads;
  void* (*GetExternalContext)(Context* context, int type);
  void (*SetExternalContext)(Context* context, int type, void* external);
  bool allow_fp32_relax_to_fp16;
  void* profiler;
  void* (*AllocatePersistentBuffer)(Context* context, size_t bytes);
  Status (*AllocateBufferForEval)(Context* context, size_t bytes, void** ptr);
  Status (*RequestScratchBufferInArena)(Context* context, size_t bytes,
                                        int* buffer_index);
  void* (*GetScratchBuffer)(Context* context, int buffer_index);
  Status (*ResizeTensorExplicit)(Context* context, Tensor* tensor, int dims,
                                 const int* shape);
  Status (*PreviewDelegatePartitioning)(Context* context,
                                        const IntArray* nodes_to_replace,
                                        DelegateParams** partition_params,
                                        int* num_partitions);
  Tensor* (*GetTensor)(const Context* context, int tensor_index);
  void* (*GetEvalTensor)(const Context* context, int tensor_index);
  Status (*GetModelMetadata)(const Context* context, const char* name,
                             const char** ptr, size_t* bytes);
  Status (*AcquireSubgraphContext)(Context* context, int subgraph_index,
                                   Context** acquired_context);
  Status (*ReleaseSubgraphContext)(Context* context, int subgraph_index);
};

struct Delegate {
  void* data_;
  Status (*Prepare)(Context* context, Delegate* delegate);
  Status (*CopyFromBufferHandle)(Context* context, Delegate* delegate,
                                 int buffer_handle, Tensor* tensor);
  Status (*CopyToBufferHandle)(Context* context, Delegate* delegate,
                               int buffer_handle, Tensor* tensor);
  void (*FreeBufferHandle)(Context* context, Delegate* delegate,
                           int* handle);
  int64_t flags;
  void* opaque_delegate_builder;
};

// Optional tensor index in Node::inputs (an absent optional input).
constexpr int kOptionalTensor = -1;

// Layout checks for LP64 (x86-64, aarch64), the platforms we ship for.
static_assert(sizeof(void*) == 8, "tflite-gles supports LP64 targets only");
static_assert(sizeof(Tensor) == 112, "Tensor layout");
static_assert(offsetof(Tensor, dims) == 16);
static_assert(offsetof(Tensor, bytes) == 40);
static_assert(offsetof(Tensor, name) == 56);
static_assert(offsetof(Tensor, delegate) == 64);
static_assert(offsetof(Tensor, buffer_handle) == 72);
static_assert(offsetof(Tensor, data_is_stale) == 76);
static_assert(offsetof(Tensor, quantization) == 80);
static_assert(offsetof(Tensor, dims_signature) == 104);
static_assert(sizeof(Node) == 80, "Node layout");
static_assert(offsetof(Node, builtin_data) == 40);
static_assert(offsetof(Node, custom_initial_data_size) == 56);
static_assert(sizeof(Registration) == 88, "Registration is passed by value");
static_assert(offsetof(Registration, builtin_code) == 40);
static_assert(offsetof(Registration, version) == 56);
static_assert(offsetof(Context, recommended_num_threads) == 72);
static_assert(offsetof(Context, allow_fp32_relax_to_fp16) == 96);
static_assert(offsetof(Context, PreviewDelegatePartitioning) == 152);
static_assert(sizeof(Delegate) == 56, "Delegate layout");
// [abi-review] added; checked against upstream common.h and the live runtime.
static_assert(offsetof(IntArray, data) == 4);
static_assert(sizeof(Context) == 200, "Context layout (non-Windows)");
static_assert(offsetof(Context, ReplaceNodeSubsetsWithDelegateKernels) == 64);
static_assert(offsetof(Context, GetModelMetadata) == 176);
static_assert(offsetof(Delegate, CopyFromBufferHandle) == 16);
static_assert(offsetof(Delegate, CopyToBufferHandle) == 24);
static_assert(offsetof(Delegate, FreeBufferHandle) == 32);
static_assert(offsetof(Delegate, flags) == 40);
static_assert(sizeof(DelegateParams) == 32);

}  // namespace tflite_gles::abi
