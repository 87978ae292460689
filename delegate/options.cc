#include "delegate/options.h"

#include <cstddef>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace tflite_gles {
namespace {

// Longest accepted path or token: keeps a corrupt or hostile value from
// turning into huge allocations or file names no file system takes.
constexpr size_t kMaxStringOption = 4096;

struct EnumName {
  const char* name;
  int value;
};

constexpr EnumName kPreferences[] = {
    {"fast_single_answer", TFLITE_GLES_PREFERENCE_FAST_SINGLE_ANSWER},
    {"sustained_speed", TFLITE_GLES_PREFERENCE_SUSTAINED_SPEED}};
constexpr EnumName kPriorities[] = {
    {"auto", TFLITE_GLES_PRIORITY_AUTO},
    {"max_precision", TFLITE_GLES_PRIORITY_MAX_PRECISION},
    {"min_latency", TFLITE_GLES_PRIORITY_MIN_LATENCY},
    {"min_memory_usage", TFLITE_GLES_PRIORITY_MIN_MEMORY_USAGE}};
constexpr EnumName kPlatforms[] = {
    {"auto", TFLITE_GLES_EGL_PLATFORM_AUTO},
    {"device", TFLITE_GLES_EGL_PLATFORM_DEVICE},
    {"surfaceless", TFLITE_GLES_EGL_PLATFORM_SURFACELESS},
    {"default", TFLITE_GLES_EGL_PLATFORM_DEFAULT}};
constexpr EnumName kStorages[] = {
    {"auto", TFLITE_GLES_STORAGE_AUTO},
    {"ssbo", TFLITE_GLES_STORAGE_SSBO},
    {"texture_buffer", TFLITE_GLES_STORAGE_TEXTURE_BUFFER},
    {"rgba_texture", TFLITE_GLES_STORAGE_RGBA_TEXTURE}};
constexpr EnumName kDeviceProfiles[] = {
    {"native", TFLITE_GLES_DEVICE_PROFILE_NATIVE},
    {"gles31-minimum", TFLITE_GLES_DEVICE_PROFILE_GLES31_MINIMUM},
    {"mali-g52", TFLITE_GLES_DEVICE_PROFILE_MALI_G52}};
constexpr EnumName kLogLevels[] = {{"info", 1}, {"warning", 0}};

template <size_t N>
std::string Choices(const EnumName (&names)[N]) {
  std::string text;
  for (const EnumName& entry : names) {
    text += std::string(text.empty() ? "" : "|") + entry.name;
  }
  return text;
}

template <size_t N>
bool InRange(const EnumName (&names)[N], int value) {
  for (const EnumName& entry : names) {
    if (entry.value == value) return true;
  }
  return false;
}

template <size_t N>
Status ParseEnum(const std::string& key, const std::string& text,
                 const EnumName (&names)[N], int* value) {
  for (const EnumName& entry : names) {
    if (text == entry.name) {
      *value = entry.value;
      return Status::Ok();
    }
  }
  return Status::Error("option '" + key + "': '" + text +
                       "' is not one of " + Choices(names));
}

Status ParseBool(const std::string& key, const std::string& text, bool* value) {
  // Python's load_delegate passes str(True) == "True".
  std::string lower = text;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "true" || lower == "1") {
    *value = true;
  } else if (lower == "false" || lower == "0") {
    *value = false;
  } else {
    return Status::Error("option '" + key + "': '" + text +
                         "' is not true|false|1|0");
  }
  return Status::Ok();
}

Status ParseInt(const std::string& key, const std::string& text, long low,
                long high, long* value) {
  errno = 0;
  char* end = nullptr;
  long parsed = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || parsed < low ||
      parsed > high) {
    return Status::Error("option '" + key + "': '" + text +
                         "' is not an integer in [" + std::to_string(low) +
                         ", " + std::to_string(high) + "]");
  }
  *value = parsed;
  return Status::Ok();
}

Status ParseString(const std::string& key, const std::string& text,
                   std::string* value) {
  if (text.size() > kMaxStringOption) {
    return Status::Error("option '" + key + "' is " +
                         std::to_string(text.size()) +
                         " characters long; the limit is " +
                         std::to_string(kMaxStringOption));
  }
  *value = text;
  return Status::Ok();
}

Status Validate(const Options& options) {
  if (!InRange(kPreferences, options.inference_preference)) {
    return Status::Error("inference_preference " +
                         std::to_string(options.inference_preference) +
                         " is out of range");
  }
  for (int priority : options.priorities) {
    if (!InRange(kPriorities, priority)) {
      return Status::Error("inference priority " + std::to_string(priority) +
                           " is out of range");
    }
  }
  if (options.max_delegated_partitions < 1) {
    return Status::Error("max_delegated_partitions must be >= 1, got " +
                         std::to_string(options.max_delegated_partitions));
  }
  if (!InRange(kPlatforms, options.egl_platform)) {
    return Status::Error("egl_platform " + std::to_string(options.egl_platform) +
                         " is out of range");
  }
  if (!InRange(kDeviceProfiles, options.device_profile)) {
    return Status::Error("device_profile " + std::to_string(options.device_profile) +
                         " is out of range");
  }
  if (!InRange(kStorages, options.storage)) {
    return Status::Error("storage " + std::to_string(options.storage) +
                         " is out of range");
  }
  if (!options.serialization_dir.empty() && options.model_token.empty()) {
    return Status::Error(
        "serialization_dir is set but model_token is empty; the cache needs "
        "a token naming the model");
  }
  return Status::Ok();
}

}  // namespace

bool Options::MemoryFirst() const {
  for (int priority : priorities) {
    if (priority != TFLITE_GLES_PRIORITY_AUTO) {
      return priority == TFLITE_GLES_PRIORITY_MIN_MEMORY_USAGE;
    }
  }
  return false;
}

bool Options::UseFp16() const {
  if (!precision_loss_allowed) return false;
  for (int priority : priorities) {
    if (priority == TFLITE_GLES_PRIORITY_MAX_PRECISION) return false;
    if (priority != TFLITE_GLES_PRIORITY_AUTO) break;
  }
  return true;
}

StatusOr<Options> OptionsFromC(const TfLiteGlesDelegateOptions& c) {
  Options options;
  options.precision_loss_allowed = c.is_precision_loss_allowed != 0;
  options.inference_preference = c.inference_preference;
  options.priorities[0] = c.inference_priority1;
  options.priorities[1] = c.inference_priority2;
  options.priorities[2] = c.inference_priority3;
  options.max_delegated_partitions = c.max_delegated_partitions;
  if (c.serialization_dir != nullptr) {
    TFG_RETURN_IF_ERROR(ParseString("serialization_dir", c.serialization_dir,
                                    &options.serialization_dir));
  }
  if (c.model_token != nullptr) {
    TFG_RETURN_IF_ERROR(
        ParseString("model_token", c.model_token, &options.model_token));
  }
  options.egl_platform = c.egl_platform;
  options.storage = c.storage;
  options.enable_profiling = c.enable_profiling != 0;
  options.experimental_flags = c.experimental_flags;
  TFG_RETURN_IF_ERROR(Validate(options));
  return options;
}

StatusOr<Options> OptionsFromCV2(const TfLiteGlesDelegateOptionsV2& c) {
  constexpr size_t kBaseEnd = offsetof(TfLiteGlesDelegateOptionsV2, base) +
                              sizeof(TfLiteGlesDelegateOptions);
  if (c.size < kBaseEnd) {
    return Status::Error("TfLiteGlesDelegateOptionsV2.size is " +
                         std::to_string(c.size) + ", less than the " +
                         std::to_string(kBaseEnd) +
                         " bytes every version has (set it with "
                         "TfLiteGlesDelegateOptionsV2Default)");
  }
  TFG_ASSIGN_OR_RETURN(Options options, OptionsFromC(c.base));
  // A field counts only if the caller's struct holds it whole.
  auto has = [&c](size_t offset, size_t bytes) { return c.size >= offset + bytes; };
  if (has(offsetof(TfLiteGlesDelegateOptionsV2, quantized_models_allowed),
          sizeof(c.quantized_models_allowed))) {
    options.quantized_models_allowed = c.quantized_models_allowed != 0;
  }
  if (has(offsetof(TfLiteGlesDelegateOptionsV2, quantization_simulator),
          sizeof(c.quantization_simulator))) {
    options.quantization_simulator = c.quantization_simulator != 0;
  }
  if (has(offsetof(TfLiteGlesDelegateOptionsV2, device_profile),
          sizeof(c.device_profile))) {
    options.device_profile = c.device_profile;
    if (!InRange(kDeviceProfiles, options.device_profile)) {
      return Status::Error("device_profile " + std::to_string(options.device_profile) +
                           " is out of range");
    }
  }
  if (has(offsetof(TfLiteGlesDelegateOptionsV2, egl_device), sizeof(c.egl_device)) &&
      c.egl_device != nullptr) {
    TFG_RETURN_IF_ERROR(ParseString("egl_device", c.egl_device, &options.egl_device));
  }
  return options;
}

std::string DescribeOptionKeys() {
  return "precision_loss_allowed (or allow_fp16): true|false; "
         "inference_preference: " + Choices(kPreferences) + "; " +
         "inference_priority1, inference_priority2, inference_priority3: " +
         Choices(kPriorities) + "; " +
         "max_delegated_partitions: integer >= 1; "
         "serialization_dir: path; model_token: string; "
         "egl_platform: " + Choices(kPlatforms) + "; " +
         "storage: " + Choices(kStorages) + "; " +
         "enable_profiling: true|false; "
         "experimental_flags: integer >= 0; "
         "log_level: " + Choices(kLogLevels) + "; "
         "reapply_on_resize: true|false; "
         "quantized_models_allowed: true|false; "
         "quantization_simulator: true|false; "
         "device_profile: " + Choices(kDeviceProfiles) + "; " +
         "egl_device: index or DRM device file";
}

StatusOr<Options> OptionsFromKeyValues(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  Options options;
  for (const auto& [key, value] : pairs) {
    Status status;
    long number = 0;
    int choice = 0;
    if (key == "precision_loss_allowed" || key == "allow_fp16") {
      status = ParseBool(key, value, &options.precision_loss_allowed);
    } else if (key == "inference_preference") {
      status = ParseEnum(key, value, kPreferences,
                         &options.inference_preference);
    } else if (key == "inference_priority1" || key == "inference_priority2" ||
               key == "inference_priority3") {
      status = ParseEnum(key, value, kPriorities,
                         &options.priorities[key.back() - '1']);
    } else if (key == "max_delegated_partitions") {
      status = ParseInt(key, value, 1, 1 << 20, &number);
      options.max_delegated_partitions = static_cast<int>(number);
    } else if (key == "serialization_dir") {
      status = ParseString(key, value, &options.serialization_dir);
    } else if (key == "model_token") {
      status = ParseString(key, value, &options.model_token);
    } else if (key == "egl_platform") {
      status = ParseEnum(key, value, kPlatforms, &options.egl_platform);
    } else if (key == "storage") {
      status = ParseEnum(key, value, kStorages, &options.storage);
    } else if (key == "enable_profiling") {
      status = ParseBool(key, value, &options.enable_profiling);
    } else if (key == "experimental_flags") {
      status = ParseInt(key, value, 0, std::numeric_limits<long>::max(),
                        &number);
      options.experimental_flags = static_cast<uint64_t>(number);
    } else if (key == "reapply_on_resize") {
      status = ParseBool(key, value, &options.reapply_on_resize);
    } else if (key == "quantized_models_allowed") {
      status = ParseBool(key, value, &options.quantized_models_allowed);
    } else if (key == "quantization_simulator") {
      status = ParseBool(key, value, &options.quantization_simulator);
    } else if (key == "egl_device") {
      status = ParseString(key, value, &options.egl_device);
    } else if (key == "device_profile") {
      status = ParseEnum(key, value, kDeviceProfiles, &options.device_profile);
    } else if (key == "log_level") {
      status = ParseEnum(key, value, kLogLevels, &choice);
      options.log_info = choice == 1;
    } else {
      status = Status::Error("unknown option '" + key + "'");
    }
    if (!status.ok()) {
      return Status::Error("tflite-gles: " + status.message() +
                           ". Valid options: " + DescribeOptionKeys());
    }
  }
  TFG_RETURN_IF_ERROR(Validate(options).WithContext("tflite-gles"));
  return options;
}

}  // namespace tflite_gles
