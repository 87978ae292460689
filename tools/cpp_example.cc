// Runs a .tflite model through tflite-gles from C++, with no Python: the code
// an application writes against its own TensorFlow Lite build (C API).
//
//   cpp_example model.tflite [--fp16]
//
// Fills every float input with a fixed ramp in [-1, 1], invokes, and prints
// how much the delegate took, each output's shape and its largest values.
//
// Build with a TFLite C library (libtensorflowlite_c.so and its headers):
//   cmake -DTFLITE_GLES_TFLITE_C_INCLUDE_DIR=... -DTFLITE_GLES_TFLITE_C_LIBRARY=...
// Without one, CMake only compiles this file (against
// tools/tflite_c_api_subset.h) so that it keeps compiling as the project changes.
#if __has_include(<tensorflow/lite/c/c_api.h>)
#include <tensorflow/lite/c/c_api.h>
#else
#include "tools/tflite_c_api_subset.h"
#endif

#include <tflite_gles/delegate.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace {

// Owners that release the C API's objects in the order TFLite requires:
// the interpreter before the delegate it uses, the model last.
struct ModelDeleter { void operator()(TfLiteModel* m) const { TfLiteModelDelete(m); } };
struct OptionsDeleter {
  void operator()(TfLiteInterpreterOptions* o) const { TfLiteInterpreterOptionsDelete(o); }
};
struct InterpreterDeleter {
  void operator()(TfLiteInterpreter* i) const { TfLiteInterpreterDelete(i); }
};
struct DelegateDeleter {
  void operator()(TfLiteDelegate* d) const { TfLiteGlesDelegateDelete(d); }
};

std::string ShapeOf(const TfLiteTensor* tensor) {
  std::string shape = "[";
  for (int32_t d = 0; d < TfLiteTensorNumDims(tensor); ++d) {
    shape += (d ? "," : "") + std::to_string(TfLiteTensorDim(tensor, d));
  }
  return shape + "]";
}

bool FillInputs(TfLiteInterpreter* interpreter) {
  for (int32_t i = 0; i < TfLiteInterpreterGetInputTensorCount(interpreter); ++i) {
    TfLiteTensor* input = TfLiteInterpreterGetInputTensor(interpreter, i);
    if (TfLiteTensorType(input) != kTfLiteFloat32) {
      std::fprintf(stderr, "input %d (%s) is not float32; this example feeds floats\n", i,
                   TfLiteTensorName(input));
      return false;
    }
    std::vector<float> values(TfLiteTensorByteSize(input) / sizeof(float));
    for (size_t k = 0; k < values.size(); ++k) {
      values[k] = -1.0f + 2.0f * static_cast<float>(k % 255) / 254.0f;
    }
    if (TfLiteTensorCopyFromBuffer(input, values.data(), TfLiteTensorByteSize(input)) !=
        kTfLiteOk) {
      std::fprintf(stderr, "could not set input %d\n", i);
      return false;
    }
  }
  return true;
}

void PrintOutputs(const TfLiteInterpreter* interpreter) {
  for (int32_t i = 0; i < TfLiteInterpreterGetOutputTensorCount(interpreter); ++i) {
    const TfLiteTensor* output = TfLiteInterpreterGetOutputTensor(interpreter, i);
    std::printf("output %d %s %s", i, TfLiteTensorName(output), ShapeOf(output).c_str());
    if (TfLiteTensorType(output) != kTfLiteFloat32) {
      std::printf(" (not float32)\n");
      continue;
    }
    std::vector<float> values(TfLiteTensorByteSize(output) / sizeof(float));
    TfLiteTensorCopyToBuffer(output, values.data(), TfLiteTensorByteSize(output));
    std::vector<size_t> order(values.size());
    std::iota(order.begin(), order.end(), size_t{0});
    const size_t shown = std::min<size_t>(5, order.size());
    std::partial_sort(order.begin(), order.begin() + shown, order.end(),
                      [&](size_t a, size_t b) { return values[a] > values[b]; });
    std::printf(" largest:");
    for (size_t k = 0; k < shown; ++k) std::printf(" [%zu]=%.4f", order[k], values[order[k]]);
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s model.tflite [--fp16]\n", argv[0]);
    return 2;
  }
  const bool fp16 = argc > 2 && std::strcmp(argv[2], "--fp16") == 0;

  std::unique_ptr<TfLiteModel, ModelDeleter> model(TfLiteModelCreateFromFile(argv[1]));
  if (!model) {
    std::fprintf(stderr, "cannot read the model %s\n", argv[1]);
    return 1;
  }
  TfLiteGlesDelegateOptions gles_options = TfLiteGlesDelegateOptionsDefault();
  gles_options.is_precision_loss_allowed = fp16 ? 1 : 0;
  // The delegate must outlive the interpreter: declared first, deleted last.
  std::unique_ptr<TfLiteDelegate, DelegateDeleter> delegate(
      TfLiteGlesDelegateCreate(&gles_options));
  if (!delegate) {
    std::fprintf(stderr, "TfLiteGlesDelegateCreate refused the options\n");
    return 1;
  }
  std::unique_ptr<TfLiteInterpreterOptions, OptionsDeleter> options(
      TfLiteInterpreterOptionsCreate());
  TfLiteInterpreterOptionsSetNumThreads(options.get(), 1);
  TfLiteInterpreterOptionsAddDelegate(options.get(), delegate.get());
  // The delegate is applied here (ModifyGraphWithDelegate), on this thread:
  // Invoke must run on the same thread, with the same EGLContext current.
  std::unique_ptr<TfLiteInterpreter, InterpreterDeleter> interpreter(
      TfLiteInterpreterCreate(model.get(), options.get()));
  if (!interpreter) {
    std::fprintf(stderr, "applying tflite-gles failed: %s\n",
                 TfLiteGlesDelegateLastError(delegate.get()));
    return 1;
  }
  if (TfLiteInterpreterAllocateTensors(interpreter.get()) != kTfLiteOk ||
      !FillInputs(interpreter.get())) {
    return 1;
  }
  if (TfLiteInterpreterInvoke(interpreter.get()) != kTfLiteOk) {
    std::fprintf(stderr, "invoke failed: %s\n", TfLiteGlesDelegateLastError(delegate.get()));
    return 1;
  }
  TfLiteGlesDelegateStats stats;
  if (TfLiteGlesDelegateGetStats(delegate.get(), &stats) == 0) {
    std::printf("%s, %s: %d of %d nodes delegated in %d partition(s), %s\n", stats.renderer,
                stats.gl_version, stats.nodes_delegated, stats.nodes_total, stats.partitions,
                fp16 ? "fp16" : "fp32");
  }
  PrintOutputs(interpreter.get());
  interpreter.reset();  // before the delegate, as TFLite requires
  return 0;
}
