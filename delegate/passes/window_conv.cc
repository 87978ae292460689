#include "delegate/passes/window_conv.h"

#include <array>
#include <map>
#include <string>

#include "delegate/passes/fusion.h"

namespace tflite_gles {
namespace {

// Windows below this many taps gain little from the staging (a 3x3 tap
// loop is short, and K_SPLIT keeps those layers' many slices busy).
constexpr long long kMinTaps = 25;
// Slices of the input and the output: the window of every input slice sits
// in shared memory, every output slice in registers.
constexpr long long kMaxSlices = 2;

// Shared memory of a block's window (vec4 of 16 bytes each, whatever the
// precision: mediump may be stored wider).
// ROW_REUSE skews the window's rows (conv2d_window.comp SKEW) and stages
// every weight vec4 of the out_groups x tile_slices output slices too.
long long WindowBytes(const std::array<int, 3>& block, long long in_slices, long long kh,
                      long long kw, bool row_reuse, long long weight_slices) {
  const long long w = 1LL * block[0] * block[1] + kw - 1;
  if (!row_reuse) return 16LL * in_slices * (block[2] + kh - 1) * w;
  const long long padded = (w - 1) + (w - 1) / 8 + 1;
  return 16LL * in_slices * ((block[2] + kh - 1) * padded + weight_slices * kh * kw * 4);
}

}  // namespace

int UseWindowConvolutions(const DeviceProfile& device, const std::vector<Value>& values,
                          std::vector<Dispatch>* dispatches) {
  if (!device.window_conv || device.gpu == nullptr) return 0;
  const egl::GpuInfo& gpu = *device.gpu;
  int moved = 0;
  for (Dispatch& d : *dispatches) {
    if (d.shader != "conv2d" || !HasDefine(d, "GENERIC") || HasDefine(d, "SLICES_ON_X") ||
        HasDefine(d, "TEXTURE_INPUT") || HasDefine(d, "BHWC_BYTES_INPUT") || d.inputs.size() < 3 ||
        d.outputs.size() != 1 || !d.read_write.empty()) {
      continue;
    }
    const long long kh = IntDefine(d, "KERNEL_H"), kw = IntDefine(d, "KERNEL_W");
    const long long in_s = IntDefine(d, "IN_S"), out_s = IntDefine(d, "OUT_S");
    const long long out_hw = IntDefine(d, "OUT_HW"), out_w = IntDefine(d, "OUT_W");
    const long long rows = IntDefine(d, "ROWS");
    if (IntDefine(d, "STRIDE_H") != 1 || IntDefine(d, "STRIDE_W") != 1 ||
        IntDefine(d, "DILATION_H") != 1 || IntDefine(d, "DILATION_W") != 1 ||
        kh * kw < kMinTaps || in_s < 1 || in_s > kMaxSlices || out_s < 1 ||
        out_s > kMaxSlices || IntDefine(d, "TILE_SLICES") < 1 ||
        IntDefine(d, "SLICE_GROUPS") * IntDefine(d, "TILE_SLICES") < out_s || out_w < 1 ||
        out_hw < out_w ||
        out_hw % out_w != 0 || rows < out_hw || rows % out_hw != 0) {
      continue;
    }
    // The input's channels: the staging's, or the tensor's.
    const long long in_c =
        HasDefine(d, "BHWC_INPUT") ? IntDefine(d, "IN_C") : values[d.inputs[0]].shape.c;
    if (in_c < 1 || (in_c + 3) / 4 != in_s) continue;
    const long long out_c = IntDefine(d, "OUT_C");
    if (out_c < 1 || (out_c + 3) / 4 != out_s) continue;
    // The device's block, else smaller ones until one fits (the last, 1 x 8
    // x 8, needs 2 x 16 x 16 x 16 bytes at 9x9: within 16 KB).
    std::array<int, 3> block = device.window_conv_block;
    const long long tile_slices = IntDefine(d, "TILE_SLICES");
    const long long weight_slices = (out_s + tile_slices - 1) / tile_slices * tile_slices;
    // Off where the weights do not fit beside the first block (the GLES 3.1
    // minimum of 16 KB): the window alone, as before.
    const bool row_reuse =
        device.window_conv_row_reuse &&
        WindowBytes(block, in_s, kh, kw, true, weight_slices) <= gpu.max_shared_memory_bytes;
    auto fits = [&](const std::array<int, 3>& b) {
      return WindowBytes(b, in_s, kh, kw, row_reuse, weight_slices) <=
                 gpu.max_shared_memory_bytes &&
             1LL * b[1] * b[2] <= gpu.max_workgroup_invocations &&
             b[1] <= gpu.max_workgroup_size[0] && b[2] <= gpu.max_workgroup_size[1];
    };
    for (const std::array<int, 3>& smaller :
         {std::array<int, 3>{2, 16, 8}, std::array<int, 3>{1, 16, 8},
          std::array<int, 3>{1, 8, 8}}) {
      if (fits(block)) break;
      block = smaller;
    }
    if (!fits(block)) continue;
    const long long batch = rows / out_hw;
    const long long out_h = out_hw / out_w;
    std::map<std::string, std::string> defines;
    for (const char* kept :
         {"ACT_RELU", "ACT_RELU6", "ACT_RELU_N1_TO_1", "EPILOGUE_IN", "PROLOGUE_IN",
          "PROLOGUE(x,slice)", "GATHER_UPSAMPLE", "BHWC_INPUT", "KERNEL_H",
          "KERNEL_W", "TILE_SLICES", "MATH_P", "ACC_P", "EPILOGUE(x,index,slice)", "INPUT_QUANT(x)", "IN_H",
          "IN_W", "IN_HW", "OUT_HW", "OUT_W", "OUT_C", "PAD_TOP", "PAD_LEFT"}) {
      auto it = d.defines.find(kept);
      if (it != d.defines.end()) defines[kept] = it->second;
    }
    defines["OUT_H"] = std::to_string(out_h);
    defines["IN_SLICES"] = std::to_string(in_s);
    defines["IN_C"] = std::to_string(in_c);
    defines["OUT_SLICES"] = std::to_string(out_s);
    defines["OUT_LANES"] = std::to_string(out_s == 1 ? out_c : 4);
    defines["GATHER_MIRROR"] = HasDefine(d, "GATHER_MIRROR") ? d.defines.at("GATHER_MIRROR") : "-1";
    defines["PX"] = std::to_string(block[0]);
    if (!defines.count("GATHER_UPSAMPLE")) defines["GATHER_UPSAMPLE"] = "1";
    if (row_reuse) defines["ROW_REUSE"] = "";
    d.shader = "conv2d_window";
    d.defines = std::move(defines);
    const long long block_w = 1LL * block[0] * block[1];
    d.local = {static_cast<uint32_t>(block[1]), static_cast<uint32_t>(block[2]), 1};
    d.grid = {static_cast<uint32_t>((out_w + block_w - 1) / block_w * block[1]),
              static_cast<uint32_t>((out_h + block[2] - 1) / block[2] * block[2]),
              static_cast<uint32_t>(batch)};
    ++moved;
  }
  return moved;
}

}  // namespace tflite_gles
