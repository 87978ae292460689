// The exported C API: create/delete, stats, and the external-delegate entry
// points that load_delegate() and benchmark_model use. Nothing here throws;
// allocation failure is reported like any other error.
#include <algorithm>
#include <cstring>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "delegate/delegate.h"
#include "egl/gl_objects.h"
#include "tflite_gles/delegate.h"

#define TFLITE_GLES_EXPORT extern "C" __attribute__((visibility("default")))

using tflite_gles::GlesDelegate;
using tflite_gles::Options;

namespace {

TfLiteDelegate* Wrap(GlesDelegate* delegate) {
  return reinterpret_cast<TfLiteDelegate*>(delegate->abi_delegate());
}

GlesDelegate* Unwrap(TfLiteDelegate* delegate) {
  return GlesDelegate::FromAbi(
      reinterpret_cast<tflite_gles::abi::Delegate*>(delegate));
}

// Marks our delegates, so stats on a foreign TfLiteDelegate fail cleanly.
bool IsOurs(const TfLiteDelegate* delegate) {
  if (delegate == nullptr) return false;
  const auto* abi = reinterpret_cast<const tflite_gles::abi::Delegate*>(delegate);
  return abi->Prepare != nullptr && abi->data_ != nullptr &&
         const_cast<GlesDelegate*>(GlesDelegate::FromAbi(abi))->abi_delegate() == abi;
}

}  // namespace

TFLITE_GLES_EXPORT TfLiteGlesDelegateOptions TfLiteGlesDelegateOptionsDefault(void) {
  Options defaults;
  TfLiteGlesDelegateOptions options{};
  options.is_precision_loss_allowed = defaults.precision_loss_allowed;
  options.inference_preference = defaults.inference_preference;
  options.inference_priority1 = defaults.priorities[0];
  options.inference_priority2 = defaults.priorities[1];
  options.inference_priority3 = defaults.priorities[2];
  options.max_delegated_partitions = defaults.max_delegated_partitions;
  options.serialization_dir = nullptr;
  options.model_token = nullptr;
  options.egl_platform = defaults.egl_platform;
  options.storage = defaults.storage;
  options.enable_profiling = defaults.enable_profiling;
  options.experimental_flags = defaults.experimental_flags;
  return options;
}

namespace {
// Both Create entry points: a delegate from parsed options, or null with the
// reason on stderr (no exceptions cross the C ABI).
TfLiteDelegate* CreateFromParsed(tflite_gles::StatusOr<tflite_gles::Options> parsed) {
  if (!parsed.ok()) {
    std::fprintf(stderr, "ERROR: tflite-gles: invalid options: %s\n",
                 parsed.status().message().c_str());
    return nullptr;
  }
  auto* delegate = new (std::nothrow) GlesDelegate(std::move(*parsed));
  return delegate ? Wrap(delegate) : nullptr;
}
}  // namespace

TFLITE_GLES_EXPORT TfLiteDelegate* TfLiteGlesDelegateCreate(
    const TfLiteGlesDelegateOptions* options) {
  TfLiteGlesDelegateOptions defaults = TfLiteGlesDelegateOptionsDefault();
  auto parsed = tflite_gles::OptionsFromC(options ? *options : defaults);
  return CreateFromParsed(std::move(parsed));
}

TFLITE_GLES_EXPORT TfLiteGlesDelegateOptionsV2 TfLiteGlesDelegateOptionsV2Default(void) {
  Options defaults;
  TfLiteGlesDelegateOptionsV2 options{};
  options.size = sizeof(options);
  options.base = TfLiteGlesDelegateOptionsDefault();
  options.quantized_models_allowed = defaults.quantized_models_allowed;
  options.quantization_simulator = defaults.quantization_simulator;
  options.device_profile = defaults.device_profile;
  options.egl_device = nullptr;
  return options;
}

TFLITE_GLES_EXPORT TfLiteDelegate* TfLiteGlesDelegateCreateV2(
    const TfLiteGlesDelegateOptionsV2* options) {
  TfLiteGlesDelegateOptionsV2 defaults = TfLiteGlesDelegateOptionsV2Default();
  auto parsed = tflite_gles::OptionsFromCV2(options ? *options : defaults);
  return CreateFromParsed(std::move(parsed));
}

TFLITE_GLES_EXPORT void TfLiteGlesDelegateDelete(TfLiteDelegate* delegate) {
  if (IsOurs(delegate)) delete Unwrap(delegate);
}

TFLITE_GLES_EXPORT int TfLiteGlesDelegateGetStats(const TfLiteDelegate* delegate,
                                                  TfLiteGlesDelegateStats* stats) {
  if (!IsOurs(delegate) || stats == nullptr) return -1;
  Unwrap(const_cast<TfLiteDelegate*>(delegate))->FillStats(stats);
  return 0;
}

TFLITE_GLES_EXPORT int TfLiteGlesDelegateGetProfile(
    const TfLiteDelegate* delegate, TfLiteGlesDispatchProfile* entries,
    int capacity) {
  if (!IsOurs(delegate) || capacity < 0 ||
      (capacity > 0 && entries == nullptr)) {
    return -1;
  }
  return Unwrap(const_cast<TfLiteDelegate*>(delegate))
      ->FillProfile(entries, capacity);
}

TFLITE_GLES_EXPORT int TfLiteGlesDelegateGetMemoryStats(
    const TfLiteDelegate* delegate, TfLiteGlesMemoryStats* stats) {
  if (!IsOurs(delegate) || stats == nullptr) return -1;
  Unwrap(const_cast<TfLiteDelegate*>(delegate))->FillMemoryStats(stats);
  return 0;
}

TFLITE_GLES_EXPORT int TfLiteGlesDelegateGetProgramCacheStats(
    const TfLiteDelegate* delegate, TfLiteGlesProgramCacheStats* stats) {
  if (!IsOurs(delegate) || stats == nullptr) return -1;
  Unwrap(const_cast<TfLiteDelegate*>(delegate))->FillProgramCacheStats(stats);
  return 0;
}

TFLITE_GLES_EXPORT const char* TfLiteGlesDelegateLastError(
    const TfLiteDelegate* delegate) {
  if (!IsOurs(delegate)) return "not a tflite-gles delegate";
  return Unwrap(const_cast<TfLiteDelegate*>(delegate))->last_error().c_str();
}

TFLITE_GLES_EXPORT int TfLiteGlesDelegateBindBuffer(TfLiteDelegate* delegate,
                                                    int tensor_index, uint32_t gl_buffer,
                                                    int32_t layout, uint32_t flags) {
  if (!IsOurs(delegate)) return 1;
  return Unwrap(delegate)->BindBuffer(tensor_index, gl_buffer, layout, flags).ok() ? 0 : 1;
}

TFLITE_GLES_EXPORT int TfLiteGlesDelegateUnbindBuffer(TfLiteDelegate* delegate,
                                                      int tensor_index) {
  if (!IsOurs(delegate)) return 1;
  return Unwrap(delegate)->Unbind(tensor_index).ok() ? 0 : 1;
}

TFLITE_GLES_EXPORT int64_t TfLiteGlesDelegateBufferBytes(TfLiteDelegate* delegate,
                                                         int tensor_index, int32_t layout) {
  if (!IsOurs(delegate)) return -1;
  auto bytes = Unwrap(delegate)->BoundBufferBytes(tensor_index, layout);
  return bytes.ok() ? static_cast<int64_t>(*bytes) : -1;
}

TFLITE_GLES_EXPORT void TfLiteGlesGetLiveObjects(TfLiteGlesLiveObjects* counts) {
  if (counts == nullptr) return;
  counts->delegates = GlesDelegate::LiveCount();
  counts->owned_egl_contexts = tflite_gles::egl::GlEnvironment::LiveOwnedContexts();
  counts->gpu_buffers = tflite_gles::gl::Buffer::LiveCount();
}

TFLITE_GLES_EXPORT TfLiteGlesTextureBinding TfLiteGlesTextureBindingDefault(void) {
  TfLiteGlesTextureBinding binding{};
  binding.size = sizeof(binding);
  const tflite_gles::TextureParams defaults;
  for (int c = 0; c < 4; ++c) {
    binding.scale[c] = defaults.scale[c];
    binding.offset[c] = defaults.offset[c];
    binding.channels[c] = defaults.channels[c];
  }
  return binding;
}

namespace {
int BindTexture(TfLiteDelegate* delegate, int tensor_index, uint32_t texture,
                const TfLiteGlesTextureBinding* binding, bool output, uint32_t flags) {
  if (!IsOurs(delegate)) return 1;
  TfLiteGlesTextureBinding fields = TfLiteGlesTextureBindingDefault();
  // Only the fields of the caller's (possibly older, smaller) struct.
  if (binding != nullptr) {
    std::memcpy(&fields, binding, std::min(binding->size, sizeof(fields)));
  }
  tflite_gles::TextureParams params;
  params.texture = texture;
  for (int c = 0; c < 4; ++c) {
    params.scale[c] = fields.scale[c];
    params.offset[c] = fields.offset[c];
    params.channels[c] = fields.channels[c];
  }
  return Unwrap(delegate)->BindTexture(tensor_index, params, output, flags).ok() ? 0 : 1;
}
}  // namespace

TFLITE_GLES_EXPORT int TfLiteGlesDelegateBindInputTexture(
    TfLiteDelegate* delegate, int tensor_index, uint32_t texture,
    const TfLiteGlesTextureBinding* binding) {
  return BindTexture(delegate, tensor_index, texture, binding, /*output=*/false, 0);
}

TFLITE_GLES_EXPORT int TfLiteGlesDelegateBindOutputTexture(
    TfLiteDelegate* delegate, int tensor_index, uint32_t texture,
    const TfLiteGlesTextureBinding* binding, uint32_t flags) {
  return BindTexture(delegate, tensor_index, texture, binding, /*output=*/true, flags);
}

TFLITE_GLES_EXPORT int TfLiteGlesDelegateUnbindTexture(TfLiteDelegate* delegate,
                                                       int tensor_index) {
  if (!IsOurs(delegate)) return 1;
  return Unwrap(delegate)->Unbind(tensor_index).ok() ? 0 : 1;
}

TFLITE_GLES_EXPORT int TfLiteGlesDelegateTensorIndex(const TfLiteDelegate* delegate,
                                                     const void* tensor) {
  if (!IsOurs(delegate)) return -1;
  return Unwrap(const_cast<TfLiteDelegate*>(delegate))->TensorIndex(tensor);
}

TFLITE_GLES_EXPORT TfLiteDelegate* tflite_plugin_create_delegate(
    char** options_keys, char** options_values, size_t num_options,
    void (*report_error)(const char*)) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0; i < num_options; ++i) {
    if (options_keys == nullptr || options_values == nullptr ||
        options_keys[i] == nullptr || options_values[i] == nullptr) {
      if (report_error) report_error("tflite-gles: null option key or value");
      return nullptr;
    }
    pairs.emplace_back(options_keys[i], options_values[i]);
  }
  auto options = tflite_gles::OptionsFromKeyValues(pairs);
  if (!options.ok()) {
    const std::string& message = options.status().message();
    if (report_error) {
      report_error(message.c_str());
    } else {
      std::fprintf(stderr, "ERROR: %s\n", message.c_str());
    }
    return nullptr;
  }
  auto* delegate = new (std::nothrow) GlesDelegate(std::move(*options));
  if (delegate == nullptr) {
    if (report_error) report_error("tflite-gles: out of memory");
    return nullptr;
  }
  return Wrap(delegate);
}

TFLITE_GLES_EXPORT void tflite_plugin_destroy_delegate(TfLiteDelegate* delegate) {
  TfLiteGlesDelegateDelete(delegate);
}
