// A probe delegate: prints what a delegate can see of every tensor, of
// PreviewDelegatePartitioning and of DelegateParams, then claims every node
// and computes nothing (outputs are garbage). It is how docs/reliability.md
// ("Graph inputs that carry a buffer") established that TFLite's C ABI does
// not tell a graph input that carries a buffer from a constant, in both
// runtimes. Not built by CMake; by hand:
//   g++ -std=c++17 -shared -fPIC -I. tools/abi_probe/probe.cc -o /tmp/libprobe.so -ldl
//   .venv/bin/python tools/abi_probe/run_probe.py /tmp/libprobe.so
//   .venv-tflite-runtime/bin/python tools/abi_probe/run_probe.py /tmp/libprobe.so
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <initializer_list>
#include "delegate/abi/tflite_abi.h"
using namespace tflite_gles::abi;

static void PrintArray(const char* what, const IntArray* a) {
  std::printf("  %s:", what);
  if (a) for (int i = 0; i < a->size; ++i) std::printf(" %d", a->data[i]);
  std::printf("\n");
}

static void* Init(Context* context, const char* buffer, size_t) {
  auto* params = reinterpret_cast<const DelegateParams*>(buffer);
  std::printf("init params:\n");
  PrintArray("nodes", params->nodes_to_replace);
  PrintArray("input_tensors", params->input_tensors);
  PrintArray("output_tensors", params->output_tensors);
  return nullptr;
}
static Status KPrepare(Context*, Node*) { return kOk; }
static Status KInvoke(Context* context, Node* node) {
  std::printf("invoke: node inputs");
  for (int i = 0; i < node->inputs->size; ++i) {
    int t = node->inputs->data[i];
    if (t < 0) continue;
    const Tensor& x = context->tensors[t];
    std::printf(" [%d data=%p alloc=%d first=%g]", t, x.data, x.allocation_type,
                x.type == kFloat32 && x.data ? *(float*)x.data : 0.0);
  }
  std::printf("\n");
  std::fflush(stdout);
  return kOk;
}

static Status DPrepare(Context* context, Delegate* delegate) {
  IntArray* plan = nullptr;
  context->GetExecutionPlan(context, &plan);
  Dl_info info;
  if (dladdr((void*)context->GetExecutionPlan, &info)) std::printf("runtime lib: %s\n", info.dli_fname);
  std::printf("tensors %zu\n", context->tensors_size);
  for (size_t i = 0; i < context->tensors_size; ++i) {
    const Tensor& t = context->tensors[i];
    std::printf("t%zu name=%s type=%d alloc=%d data=%p bytes=%zu allocation=%p var=%d "
                "stale=%d handle=%d deleg=%p dims_sig=%p sparsity=%p quant=%d\n",
                i, t.name ? t.name : "-", t.type, t.allocation_type, t.data, t.bytes,
                t.allocation, t.is_variable, t.data_is_stale, t.buffer_handle,
                (void*)t.delegate, (void*)t.dims_signature, t.sparsity, t.quantization.type);
  }
  for (int n = 0; n < plan->size; ++n) {
    Node* node; Registration* reg;
    context->GetNodeAndRegistration(context, plan->data[n], &node, &reg);
    std::printf("node %d op %d\n", plan->data[n], reg->builtin_code);
    PrintArray("in", node->inputs);
    PrintArray("out", node->outputs);
  }
  DelegateParams* params = nullptr; int num = 0;
  Status s = context->PreviewDelegatePartitioning(context, plan, &params, &num);
  std::printf("preview status %d, %d partitions\n", s, num);
  for (int p = 0; p < num; ++p) {
    PrintArray("preview nodes", params[p].nodes_to_replace);
    PrintArray("preview input_tensors", params[p].input_tensors);
    PrintArray("preview output_tensors", params[p].output_tensors);
  }
  const char* md = nullptr; size_t mdb = 0;
  std::printf("metadata min_runtime_version: %d\n",
              context->GetModelMetadata ? context->GetModelMetadata(context, "min_runtime_version", &md, &mdb) : -1);
  for (const char* sym : {"TfLiteOpaqueContextGetInputs", "TfLiteInterpreterGetInputTensorCount"}) {
    void* a = dlsym(RTLD_DEFAULT, sym);
    void* h = dladdr((void*)context->GetExecutionPlan, &info) ? dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY) : nullptr;
    std::printf("dlsym %s: default %p, runtime lib %p\n", sym, a, h ? dlsym(h, sym) : nullptr);
  }
  Registration reg{};
  reg.init = Init; reg.prepare = KPrepare; reg.invoke = KInvoke;
  reg.builtin_code = 51; reg.custom_name = "probe"; reg.version = 1;
  std::fflush(stdout);
  return context->ReplaceNodeSubsetsWithDelegateKernels(context, reg, plan, delegate);
}

static Delegate g_delegate;
extern "C" __attribute__((visibility("default"))) Delegate* tflite_plugin_create_delegate(
    char**, char**, size_t, void (*)(const char*)) {
  std::memset(&g_delegate, 0, sizeof g_delegate);
  g_delegate.Prepare = DPrepare;
  g_delegate.flags = kDelegateFlagsAllowDynamicTensors;
  return &g_delegate;
}
extern "C" __attribute__((visibility("default"))) void tflite_plugin_destroy_delegate(Delegate*) {}
