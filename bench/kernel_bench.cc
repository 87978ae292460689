// Times the convolution kernels on the layer shapes of MobileNet v1 1.0 224
// and prints GFLOP/s per layer plus the sum over the network's conv layers.
//
//   build/kernel_bench [--runs N] [--fp16] [--ssbo] [--filter SUBSTRING]
//
// --ssbo reads tensors as SSBOs even where the delegate's storage=auto would
// read texture buffers. The device is tuned as the delegate tunes it
// (TuneForDevice: TFLITE_GLES_MIN_INVOCATIONS, TFLITE_GLES_SHARED_MEMORY_GEMM
// and TFLITE_GLES_GEMM_TILE apply).
//
// Each layer is built once through the same path as the delegate (kernel
// registry -> GraphBuilder -> PartitionRuntime, via the tests' OpTester),
// run twice to warm up (shader JIT, caches), then N times with per-dispatch
// profiling (glFinish before and after; llvmpipe runs a dispatch inside the
// call anyway). Only the layer's own dispatches count, not the layout
// conversions around them. The median is the figure to quote; the minimum
// shows what the machine does when no other job takes the cores.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "delegate/abi/tflite_builtin.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

struct Layer {
  const char* name;
  int count;  // occurrences in MobileNet v1
  bool depthwise;
  int size, in_c, out_c, kernel, stride;  // square input of `size`
};

// MobileNet v1 1.0 224: conv0, 13 depthwise/pointwise blocks, and the final
// 1x1 convolution to 1001 classes after the 7x7 average pool.
constexpr Layer kLayers[] = {
    {"conv0 3x3 s2", 1, false, 224, 3, 32, 3, 2},
    {"dw 112 s1", 1, true, 112, 32, 32, 3, 1},
    {"pw 112 32->64", 1, false, 112, 32, 64, 1, 1},
    {"dw 112 s2", 1, true, 112, 64, 64, 3, 2},
    {"pw 56 64->128", 1, false, 56, 64, 128, 1, 1},
    {"dw 56 s1", 1, true, 56, 128, 128, 3, 1},
    {"pw 56 128->128", 1, false, 56, 128, 128, 1, 1},
    {"dw 56 s2", 1, true, 56, 128, 128, 3, 2},
    {"pw 28 128->256", 1, false, 28, 128, 256, 1, 1},
    {"dw 28 s1", 1, true, 28, 256, 256, 3, 1},
    {"pw 28 256->256", 1, false, 28, 256, 256, 1, 1},
    {"dw 28 s2", 1, true, 28, 256, 256, 3, 2},
    {"pw 14 256->512", 1, false, 14, 256, 512, 1, 1},
    {"dw 14 s1", 5, true, 14, 512, 512, 3, 1},
    {"pw 14 512->512", 5, false, 14, 512, 512, 1, 1},
    {"dw 14 s2", 1, true, 14, 512, 512, 3, 2},
    {"pw 7 512->1024", 1, false, 7, 512, 1024, 1, 1},
    {"dw 7 s1", 1, true, 7, 1024, 1024, 3, 1},
    {"pw 7 1024->1024", 1, false, 7, 1024, 1024, 1, 1},
    {"logits 1 1024->1001", 1, false, 1, 1024, 1001, 1, 1},
};

struct Result {
  double median_ms = 0;
  double min_ms = 0;
  double flops = 0;
};

Status TimeLayer(const Layer& layer, bool fp16, bool ssbo, int runs,
                 Result* result) {
  const int out_size = (layer.size + layer.stride - 1) / layer.stride;
  const std::vector<int> in_dims = {1, layer.size, layer.size, layer.in_c};
  const std::vector<int> w_dims =
      layer.depthwise
          ? std::vector<int>{1, layer.kernel, layer.kernel, layer.out_c}
          : std::vector<int>{layer.out_c, layer.kernel, layer.kernel, layer.in_c};
  size_t in_count = 1, w_count = 1;
  for (int d : in_dims) in_count *= d;
  for (int d : w_dims) w_count *= d;
  OpTester tester(layer.depthwise ? abi::kTfLiteBuiltinDepthwiseConv2d
                                  : abi::kTfLiteBuiltinConv2d);
  tester.AddInput(in_dims, RandomData(in_count, 1, -1, 1));
  tester.AddConstInput(w_dims, RandomData(w_count, 2, -0.1f, 0.1f));
  tester.AddConstInput({layer.out_c}, RandomData(layer.out_c, 3, -1, 1));
  tester.AddOutput({1, out_size, out_size, layer.out_c});
  if (layer.depthwise) {
    tester.SetParams(abi::DepthwiseConvParams{abi::kPaddingSame, layer.stride,
                                              layer.stride, 1, abi::kActRelu6,
                                              1, 1});
  } else {
    tester.SetParams(abi::ConvParams{abi::kPaddingSame, layer.stride,
                                     layer.stride, abi::kActRelu6, 1, 1,
                                     abi::kNoType});
  }
  if (ssbo) {
    tester.TuneDevice([](DeviceProfile* device) { device->texture_buffer_reads = false; });
  }
  std::vector<double> ms;
  TFG_RETURN_IF_ERROR(tester.Profile(fp16, runs + 2, &ms));
  ms.erase(ms.begin(), ms.begin() + 2);
  std::sort(ms.begin(), ms.end());
  result->median_ms = ms[ms.size() / 2];
  result->min_ms = ms.front();
  const double macs_per_output =
      layer.depthwise ? layer.kernel * layer.kernel
                      : 1.0 * layer.kernel * layer.kernel * layer.in_c;
  result->flops = 2.0 * out_size * out_size * layer.out_c * macs_per_output;
  return Status::Ok();
}

int Main(int argc, char** argv) {
  int runs = 15;
  bool fp16 = false;
  bool ssbo = false;
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--fp16")) {
      fp16 = true;
    } else if (!std::strcmp(argv[i], "--ssbo")) {
      ssbo = true;
    } else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) {
      filter = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--runs N] [--fp16] [--ssbo] [--filter SUBSTRING]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf("renderer: %s, %s, %s reads, median of %d warm runs\n",
              TestEnvironment().info().renderer.c_str(), fp16 ? "fp16" : "fp32",
              ssbo ? "SSBO" : "auto storage", runs);
  std::printf("%-22s %5s %10s %10s %9s %9s\n", "layer", "count", "median ms",
              "min ms", "GFLOP/s", "best");
  double total_ms = 0, total_best_ms = 0, total_flops = 0;
  double pointwise_ms = 0, pointwise_flops = 0, depthwise_ms = 0,
         depthwise_flops = 0;
  for (const Layer& layer : kLayers) {
    if (!filter.empty() && std::string(layer.name).find(filter) == std::string::npos) {
      continue;
    }
    Result r;
    Status status = TimeLayer(layer, fp16, ssbo, runs, &r);
    if (!status.ok()) {
      std::printf("%-22s failed: %s\n", layer.name, status.message().c_str());
      return 1;
    }
    std::printf("%-22s %5d %10.3f %10.3f %9.1f %9.1f\n", layer.name, layer.count,
                r.median_ms, r.min_ms, r.flops / r.median_ms * 1e-6,
                r.flops / r.min_ms * 1e-6);
    total_ms += layer.count * r.median_ms;
    total_best_ms += layer.count * r.min_ms;
    total_flops += layer.count * r.flops;
    const bool pointwise = !layer.depthwise && layer.kernel == 1 && layer.size > 1;
    if (pointwise) {
      pointwise_ms += layer.count * r.median_ms;
      pointwise_flops += layer.count * r.flops;
    } else if (layer.depthwise) {
      depthwise_ms += layer.count * r.median_ms;
      depthwise_flops += layer.count * r.flops;
    }
    std::fflush(stdout);
  }
  std::printf("pointwise layers: %.2f ms, %.1f GFLOP/s\n", pointwise_ms,
              pointwise_flops / pointwise_ms * 1e-6);
  std::printf("depthwise layers: %.2f ms, %.1f GFLOP/s\n", depthwise_ms,
              depthwise_flops / depthwise_ms * 1e-6);
  std::printf("all conv layers of MobileNet v1: %.2f ms median (%.2f ms best), "
              "%.1f GFLOP/s\n",
              total_ms, total_best_ms, total_flops / total_ms * 1e-6);
  return 0;
}

}  // namespace
}  // namespace tflite_gles::testing

int main(int argc, char** argv) {
  return tflite_gles::testing::Main(argc, argv);
}
