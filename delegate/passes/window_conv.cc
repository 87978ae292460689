#include "delegate/passes/window_conv.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "delegate/kernels/literal_weights.h"
#include "delegate/passes/fusion.h"

namespace tflite_gles {
namespace {

// Windows below this many taps gain little from the staging (a 3x3 tap
// loop is short, and K_SPLIT keeps those layers' many slices busy).
constexpr long long kMinTaps = 25;
// Slices of the input and the output: the window of every input slice sits
// in shared memory, every output slice in registers.
constexpr long long kMaxSlices = 2;
// DeviceProfile::window_conv_small: a 3x3 window over up to 8 input slices
// (window rows of 8 slices and all weights in shared memory; registers for
// PX x 4 output vec4s).
constexpr long long kMinSmallTaps = 9;
constexpr long long kMaxSmallInSlices = 8;
constexpr long long kMaxSmallOutSlices = 4;

// Shared memory of a block's window (vec4 of 16 bytes each, whatever the
// precision: mediump may be stored wider).
// ROW_REUSE skews the window's rows (conv2d_window.comp SKEW) and stages
// every weight vec4 of the out_groups x tile_slices output slices too;
// SLICE_STEPS holds one input slice's window at a time (in_slices then 1
// for the window, all of them for the weights).
long long WindowBytes(const std::array<int, 3>& block, long long in_slices, long long kh,
                      long long kw, bool row_reuse, long long weight_slices, bool slice_steps) {
  const long long w = 1LL * block[0] * block[1] + kw - 1;
  const long long window_slices = slice_steps ? 1 : in_slices;
  if (!row_reuse) return 16LL * window_slices * (block[2] + kh - 1) * w;
  const long long padded = (w - 1) + (w - 1) / 8 + 1;
  return 16LL * (window_slices * (block[2] + kh - 1) * padded +
                 in_slices * weight_slices * kh * kw * 4);
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
    // WEIGHTS_LITERAL (DeviceProfile::window_conv_literal_weights; applied
    // below): highp products only, NVIDIA's mediump products with literal
    // operands came out wrong (bench/window_probe.py: max error 19 against
    // 0.04 with the weights from shared memory; docs/perf/log.md, "win7,
    // session 18"); at most 9 x 9 taps (the rows written out) and small
    // constant weights.
    const auto math_it = d.defines.find("MATH_P");
    const bool highp = math_it == d.defines.end() || math_it->second == "highp";
    // Whether the weights may become literals; their data is read (a lazy constant made) only
    // for a layer that passes the shape checks below.
    const Value& weight_value = values[d.inputs[1]];
    const bool may_literal = device.window_conv_literal_weights && highp && kh <= 9 && kw <= 9 &&
                             out_s <= 4 && weight_value.kind == Value::Kind::kConstant &&
                             weight_value.vec4_count() <= device.window_conv_literal_vec4s;
    // WINDOW_SMALL: 3x3 windows over up to 8 input / 4 output slices too; with
    // DeviceProfile::window_conv_small_literal_mflop only where the weights become
    // literals and the layer is that large (those then at the literal PX too).
    const long long small_mflop = device.window_conv_small_literal_mflop;
    const long long in_c_max = 4 * in_s, out_c_max = 4 * out_s;  // channels up to whole slices
    const bool small_lit = may_literal && small_mflop > 0 &&
                           2 * rows * kh * kw * in_c_max * out_c_max >= small_mflop * 1000000;
    bool small = device.window_conv_small || small_lit;
    if (IntDefine(d, "STRIDE_H") != 1 || IntDefine(d, "STRIDE_W") != 1 ||
        IntDefine(d, "DILATION_H") != 1 || IntDefine(d, "DILATION_W") != 1 ||
        kh * kw < (small ? kMinSmallTaps : kMinTaps) || in_s < 1 ||
        in_s > (small ? kMaxSmallInSlices : kMaxSlices) || out_s < 1 ||
        out_s > (small ? kMaxSmallOutSlices : kMaxSlices) || IntDefine(d, "TILE_SLICES") < 1 ||
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
    std::optional<std::vector<float>> literal;
    if (may_literal) {
      literal = kernels::SmallConstantData(weight_value, device.window_conv_literal_vec4s);
    }
    // Weights that cannot be literals (not finite): the layer is not a literal small one after
    // all, and takes the window path only within its plain bounds.
    if (small_lit && !literal && !device.window_conv_small) {
      if (kh * kw < kMinTaps || in_s > kMaxSlices || out_s > kMaxSlices) continue;
      small = false;
    }
    // The device's block, else smaller ones until one fits (the last, 1 x 8
    // x 8, needs 2 x 16 x 16 x 16 bytes at 9x9: within 16 KB). ROW_REUSE
    // (weights staged too) where it fits (WINDOW_SMALL: the first such
    // block), else the window alone in the first that fits.
    const long long tile_slices = IntDefine(d, "TILE_SLICES");
    // SLICE_STEPS (DeviceProfile::window_conv_slice_steps): with ROW_REUSE only.
    const bool slice_steps = device.window_conv_slice_steps && in_s > 1;
    const long long weight_slices = (out_s + tile_slices - 1) / tile_slices * tile_slices;
    auto fits = [&](const std::array<int, 3>& b, bool reuse) {
      return WindowBytes(b, in_s, kh, kw, reuse, weight_slices, slice_steps && reuse) <=
                 gpu.max_shared_memory_bytes &&
             1LL * b[1] * b[2] <= gpu.max_workgroup_invocations &&
             b[1] <= gpu.max_workgroup_size[0] && b[2] <= gpu.max_workgroup_size[1];
    };
    // 2 x 16 x 4 only for WINDOW_SMALL's many slices (8 x 6 window rows and
    // 4 x 9 x 8 weight quads: 47.6 KB, within NVIDIA's 48 KB).
    std::vector<std::array<int, 3>> blocks = {device.window_conv_block, {2, 16, 8}};
    // DeviceProfile::window_conv_literal_px: such layers of <= 2 output slices first try that PX.
    if (literal && (out_s <= 2 || small_lit) && device.window_conv_literal_px > 0) {
      blocks.insert(blocks.begin(), {device.window_conv_literal_px, 16, 8});
    }
    if (small) blocks.push_back({2, 16, 4});
    blocks.push_back({1, 16, 8});
    blocks.push_back({1, 8, 8});
    std::array<int, 3> block{};
    bool row_reuse = false, found = false;
    for (bool reuse : {true, false}) {
      if (reuse && !device.window_conv_row_reuse) continue;
      for (const std::array<int, 3>& b : blocks) {
        // Without WINDOW_SMALL, ROW_REUSE only in the device's own block
        // (as before it: a smaller block goes without).
        if (reuse && !small && b != blocks[0]) break;
        if (fits(b, reuse)) {
          block = b;
          row_reuse = reuse;
          found = true;
          break;
        }
      }
      if (found) break;
    }
    if (!found) continue;
    const long long batch = rows / out_hw;
    const long long out_h = out_hw / out_w;
    std::map<std::string, std::string> defines = KeptDefines(
        d, {"ACT_RELU", "ACT_RELU6", "ACT_RELU_N1_TO_1", "EPILOGUE_IN", "PROLOGUE_IN",
            "PROLOGUE(x,slice)", "GATHER_UPSAMPLE", "BHWC_INPUT", "KERNEL_H", "KERNEL_W",
            "TILE_SLICES", "MATH_P", "ACC_P", "EPILOGUE(x,index,slice)", "INPUT_QUANT(x)", "IN_H",
            "IN_W", "IN_HW", "OUT_HW", "OUT_W", "OUT_C", "PAD_TOP", "PAD_LEFT"});
    defines["OUT_H"] = std::to_string(out_h);
    defines["IN_SLICES"] = std::to_string(in_s);
    defines["IN_C"] = std::to_string(in_c);
    defines["OUT_SLICES"] = std::to_string(out_s);
    defines["OUT_LANES"] = std::to_string(out_s == 1 ? out_c : 4);
    defines["GATHER_MIRROR"] = HasDefine(d, "GATHER_MIRROR") ? d.defines.at("GATHER_MIRROR") : "-1";
    defines["PX"] = std::to_string(block[0]);
    if (!defines.count("GATHER_UPSAMPLE")) defines["GATHER_UPSAMPLE"] = "1";
    if (row_reuse) defines["ROW_REUSE"] = "";
    if (row_reuse && slice_steps) defines["SLICE_STEPS"] = "";
    // HALF_SMEM (DeviceProfile::window_conv_half_smem): with fp16 storage only.
    if (device.window_conv_half_smem && device.fp16) defines["HALF_SMEM"] = "";
    // PACK3 (DeviceProfile::window_conv_pack3): 3-lane weights packed.
    if (row_reuse && device.window_conv_pack3 && out_s == 1 && out_c == 3) defines["PACK3"] = "";
    // WEIGHTS_LITERAL where the taps are written out (conv2d_window.comp
    // UNROLLED_TAPS); instead of PACK3's staging.
    if (literal && row_reuse && block[0] <= 8 && block[0] + kw - 1 <= 16) {
      defines.erase("PACK3");
      defines["WEIGHTS_LITERAL"] = "";
      defines["WEIGHT_VALUES"] = kernels::Vec4Literals(*literal);
    }
    // Mediump accumulators (DeviceProfile::window_conv_acc_mediump): only
    // where the products are mediump already (fp16 storage).
    if (device.window_conv_acc_mediump && defines.count("MATH_P") &&
        defines["MATH_P"] == "mediump") {
      defines["ACC_P"] = "mediump";
    }
    // Products fused into the accumulators (DeviceProfile::fma_chain) where
    // both have one precision and an invocation has >= 4 accumulators: the
    // chains are dependent, and with 2 (style's 8 -> 3 layer, PX 2) they ran
    // 36.7 -> 40.5 µs, with 4 (3 -> 8) 62.1 -> 59.7 (H200; docs/perf/log.md,
    // "peak4, session 15"). With WEIGHTS_LITERAL always (bench/window_probe.py's
    // literal form: one FMA per product, its weight an immediate).
    const std::string math_p = defines.count("MATH_P") ? defines["MATH_P"] : "highp";
    const std::string acc_p = defines.count("ACC_P") ? defines["ACC_P"] : "highp";
    const bool chains = 1LL * block[0] * out_s >= 4 || defines.count("WEIGHTS_LITERAL");
    defines["FMA_CHAIN"] = device.fma_chain && math_p == acc_p && chains ? "1" : "0";
    // BLOCK_STEPS (DeviceProfile::window_conv_block_steps): that many blocks
    // along y per workgroup; not with SLICE_STEPS (conv2d_window.comp).
    const long long steps = defines.count("SLICE_STEPS") ? 1 : device.window_conv_block_steps;
    if (steps > 1) defines["BLOCK_STEPS"] = std::to_string(steps);
    d.shader = "conv2d_window";
    d.defines = std::move(defines);
    const long long block_w = 1LL * block[0] * block[1], block_h = steps * block[2];
    d.local = {static_cast<uint32_t>(block[1]), static_cast<uint32_t>(block[2]), 1};
    d.grid = {static_cast<uint32_t>((out_w + block_w - 1) / block_w * block[1]),
              static_cast<uint32_t>((out_h + block_h - 1) / block_h * block[2]),
              static_cast<uint32_t>(batch)};
    ++moved;
  }
  return moved;
}

}  // namespace tflite_gles
