#include "delegate/passes/gemm_weights_smem.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "delegate/kernels/gemm.h"
#include "delegate/passes/prologue_fusion.h"

namespace tflite_gles {

int StageGemmWeights(const DeviceProfile& device, std::vector<Dispatch>* dispatches) {
  const int mode = device.gemm_weights_smem;
  // Halves only where the weights are halves: fp32 ones would be rounded.
  if (mode <= 0 || mode > 2 || (mode == 2 && !device.fp16)) return 0;
  const bool halves = mode == 2;
  const long long limit = kernels::SharedGemmVec4Limit(device);
  int staged = 0;
  for (Dispatch& d : *dispatches) {
    if (d.shader != "gemm" || d.defines.count("SPLIT_K") || HasAnyPrologue(d)) continue;
    auto number = [&d](const char* name) {
      auto it = d.defines.find(name);
      return it == d.defines.end() ? 0LL : std::atoll(it->second.c_str());
    };
    const long long weights =
        4 * number("DEPTH_STEPS") * number("TILE_SLICES") * number("THREADS_S");
    const long long shared = number("SHARED_VEC4");
    // Halves: 8 bytes a vec4 beside the partial sums; vec4s: in `scratch` itself.
    const long long needed = halves ? shared + (weights + 1) / 2 : std::max(shared, weights);
    if (weights <= 0 || needed > limit) continue;
    d.defines[halves ? "WEIGHTS_SMEM_HALF" : "WEIGHTS_SMEM"] = "";
    d.defines["WS_VEC4"] = std::to_string(weights);
    if (!halves) d.defines["SHARED_VEC4"] = std::to_string(needed);
    ++staged;
  }
  return staged;
}

}  // namespace tflite_gles
