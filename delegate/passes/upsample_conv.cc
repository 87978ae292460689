#include "delegate/passes/upsample_conv.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "delegate/graph/constant_transform.h"
#include "delegate/kernels/literal_weights.h"
#include "delegate/passes/fusion.h"

namespace tflite_gles {
namespace {

// The kernel rows (first, last) that output parity p's tap d sums: parity 0 reads source rows
// i - 1 (kernel row 0) and i (rows 1, 2); parity 1 reads i (rows 0, 1) and i + 1 (row 2).
constexpr int kRows[2][2][2] = {{{0, 0}, {1, 2}}, {{0, 1}, {2, 2}}};

}  // namespace

std::vector<float> UpsampleConvWeights(const std::vector<float>& packed, int in_s, int out_c,
                                       int tile_slices, int ts) {
  // conv2d.comp's packing: [group][tap][slice][tile_slices][4 input lanes][4 outputs].
  auto weight = [&](int oc, int tap, int ic) -> double {
    const size_t g = static_cast<size_t>(oc / 4 / tile_slices), o = oc / 4 % tile_slices;
    const size_t i = ((((g * 9 + tap) * in_s + ic / 4) * tile_slices + o) * 4 + ic % 4) * 4 +
                     oc % 4;
    return i < packed.size() ? packed[i] : 0.0;
  };
  const int out_s = (out_c + 3) / 4;
  const int groups = (out_s + ts - 1) / ts;
  std::vector<float> out(static_cast<size_t>(groups) * 4 * 4 * in_s * ts * 16, 0.0f);
  size_t i = 0;
  for (int g = 0; g < groups; ++g)
    for (int q = 0; q < 4; ++q)
      for (int t = 0; t < 4; ++t)
        for (int s = 0; s < in_s; ++s)
          for (int o = 0; o < ts; ++o)
            for (int k = 0; k < 4; ++k)
              for (int m = 0; m < 4; ++m, ++i) {
                const int oc = ((g * ts + o) * 4) + m;
                if (oc >= out_c) continue;
                const int* rows = kRows[q / 2][t / 2];
                const int* cols = kRows[q % 2][t % 2];
                double sum = 0.0;
                for (int ky = rows[0]; ky <= rows[1]; ++ky)
                  for (int kx = cols[0]; kx <= cols[1]; ++kx) sum += weight(oc, ky * 3 + kx, s * 4 + k);
                out[i] = static_cast<float>(sum);
              }
  return out;
}

int UseUpsampleConvolutions(const DeviceProfile& device, std::vector<Value>* values,
                            std::vector<Dispatch>* dispatches) {
  if (!device.conv_up2 || device.gpu == nullptr) return 0;
  const egl::GpuInfo& gpu = *device.gpu;
  int moved = 0;
  for (Dispatch& d : *dispatches) {
    if (d.shader != "conv2d" || !HasDefine(d, "GENERIC") || HasDefine(d, "SLICES_ON_X") ||
        HasDefine(d, "TEXTURE_INPUT") || HasDefine(d, "BHWC_INPUT") ||
        HasDefine(d, "BHWC_BYTES_INPUT") || d.inputs.size() < 3 || d.outputs.size() != 1 ||
        !d.read_write.empty() || IntDefine(d, "GATHER_UPSAMPLE") != 2) {
      continue;
    }
    const long long up_h = IntDefine(d, "IN_H"), up_w = IntDefine(d, "IN_W");
    const long long in_s = IntDefine(d, "IN_S"), out_s = IntDefine(d, "OUT_S");
    const long long out_c = IntDefine(d, "OUT_C"), tile_slices = IntDefine(d, "TILE_SLICES");
    if (IntDefine(d, "KERNEL_H") != 3 || IntDefine(d, "KERNEL_W") != 3 ||
        IntDefine(d, "STRIDE_H") != 1 || IntDefine(d, "STRIDE_W") != 1 ||
        IntDefine(d, "DILATION_H") != 1 || IntDefine(d, "DILATION_W") != 1 ||
        IntDefine(d, "PAD_TOP") != 1 || IntDefine(d, "PAD_LEFT") != 1 || up_h < 2 || up_w < 2 ||
        up_h % 2 != 0 || up_w % 2 != 0 || IntDefine(d, "IN_HW") != up_h / 2 * (up_w / 2) ||
        IntDefine(d, "OUT_W") != up_w || IntDefine(d, "OUT_HW") != up_h * up_w ||
        IntDefine(d, "ROWS") != up_h * up_w || in_s < 1 || in_s > 8 || out_s < 1 ||
        out_c < 1 || (out_c + 3) / 4 != out_s || tile_slices < 1) {
      continue;
    }
    const long long mirror = HasDefine(d, "GATHER_MIRROR") ? IntDefine(d, "GATHER_MIRROR") : -1;
    if (mirror != -1 && mirror != 0 && mirror != 1) continue;
    const Value& weights = (*values)[d.inputs[1]];
    if (weights.kind != Value::Kind::kConstant || (*values)[d.inputs[0]].shape.c > 4 * in_s ||
        (*values)[d.inputs[0]].shape.c <= 4 * (in_s - 1)) {
      continue;
    }
    // The block: the device's, else 8 x 4 (x 4 parities: 128 invocations and 60 staged vec4s,
    // within the GLES 3.1 minimums), as long as each invocation stages <= 4 vec4s.
    auto [lx, ly, ts, quad] = device.conv_up2_block;
    auto fits = [&](int x, int y) {
      const long long lz = quad ? 1 : 4, n = 1LL * x * y * lz, tile = (x + 2LL) * (y + 2);
      return n <= gpu.max_workgroup_invocations && x <= gpu.max_workgroup_size[0] &&
             y <= gpu.max_workgroup_size[1] && lz <= gpu.max_workgroup_size[2] &&
             16 * tile <= gpu.max_shared_memory_bytes && tile <= 4 * n;
    };
    if (!fits(lx, ly)) {
      lx = 8;
      ly = 4;
      quad = 0;
    }
    if (!fits(lx, ly)) continue;
    // The rule (DeviceProfile::conv_up2 2): without literals, 1 output slice per invocation
    // past 4 input slices (fp16 @240 on an H200: 16.7 µs against 21.9 at 2).
    const bool rule = device.conv_up2 == 2;
    if (rule && device.conv_up2_literal_vec4s == 0 && in_s > 4) ts = 1;
    ts = static_cast<int>(std::min<long long>(ts, out_s));
    const long long groups = (out_s + ts - 1) / ts;

    // The parities' weights: literals where they are few, the products highp and the groups
    // <= 4 (a branch each; by the rule, one: fp32 @240's 2-4 groups as literals ran 21.1-21.5
    // µs whatever the block, with WSMEM 15.3, conv2d.comp 17.9; its literal program is 4x
    // @256's, so the instruction supply is the likely limit, not proven); else a constant,
    // lazy where conv2d's is, read per product or staged in shared memory (WSMEM).
    const int slices = static_cast<int>(in_s), channels = static_cast<int>(out_c);
    const int packed_slices = static_cast<int>(tile_slices), group_slices = ts;
    const size_t floats = static_cast<size_t>(groups) * 4 * 4 * in_s * ts * 16;
    const auto math_it = d.defines.find("MATH_P");
    const bool highp = math_it == d.defines.end() || math_it->second == "highp";
    std::optional<std::vector<float>> literal;
    // A group's array of at most 1024 vec4s (NVIDIA's compiler refused 2048 in one, took 1152).
    const long long group_vec4s = static_cast<long long>(floats / 4) / groups;
    if (highp && groups <= (rule ? 1 : 4) && group_vec4s <= 1024 &&
        static_cast<long long>(floats / 4) <= device.conv_up2_literal_vec4s) {
      if (auto packed = kernels::SmallConstantData(weights, 1LL << 20)) {
        literal = UpsampleConvWeights(*packed, slices, channels, packed_slices, group_slices);
      }
    }
    const bool wsmem = !literal && device.conv_up2_wsmem &&
                       16LL * ((lx + 2LL) * (ly + 2) + 64LL * ts) <= gpu.max_shared_memory_bytes;
    if (rule && device.conv_up2_literal_vec4s > 0 && !literal && !wsmem) continue;
    std::map<std::string, std::string> defines = KeptDefines(
        d, {"ACT_RELU", "ACT_RELU6", "ACT_RELU_N1_TO_1", "ACT_TANH", "ACT_SIGMOID", "EPILOGUE_IN",
            "PROLOGUE_IN", "PROLOGUE(x,slice)", "EPILOGUE(x,index,slice)", "MATH_P", "ACC_P",
            "FMA_CHAIN"});
    defines["LOCAL_X"] = std::to_string(lx);
    defines["LOCAL_Y"] = std::to_string(ly);
    defines["TS"] = std::to_string(ts);
    defines["GROUPS"] = std::to_string(groups);
    defines["IN_S"] = std::to_string(in_s);
    defines["IN_H"] = std::to_string(up_h / 2);
    defines["IN_W"] = std::to_string(up_w / 2);
    defines["OUT_S"] = std::to_string(out_s);
    defines["OUT_C"] = std::to_string(out_c);
    defines["GATHER_MIRROR"] = std::to_string(mirror);
    if (quad == 1) defines["QUAD"] = "";
    if (quad == 2) defines["PAR_WG"] = "";
    if (literal) {
      defines["WEIGHTS_LITERAL"] = "";
      const size_t group_floats = literal->size() / static_cast<size_t>(groups);
      for (long long g = 0; g < 4; ++g) {
        defines["WEIGHT_VALUES_" + std::to_string(g)] =
            g < groups ? kernels::Vec4Literals(std::vector<float>(
                             literal->begin() + g * group_floats,
                             literal->begin() + (g + 1) * group_floats))
                       : "vec4(0.0)";
      }
      // One FMA per product, its weight an immediate (conv2d_window.comp's literal form).
      if (device.fma_chain) defines["FMA_CHAIN"] = "1";
    } else {
      if (wsmem) defines["WSMEM"] = "";  // a slice's 64 x TS weight vec4s beside the tile
      // conv2d's packing, summed (lazy where it is: constant_transform.h keeps it cacheable).
      Value value = weights;
      TransformConstant(value,
                        "summed into 2x2 parity kernels (" + std::to_string(slices) +
                            " input slices, " + std::to_string(channels) + " outputs, from " +
                            std::to_string(packed_slices) + " slices a group to " +
                            std::to_string(group_slices) + ")",
                        floats, [=](const std::vector<float>& packed) {
                          return UpsampleConvWeights(packed, slices, channels, packed_slices,
                                                     group_slices);
                        });
      value.shape.c = static_cast<int>(floats);
      values->push_back(std::move(value));
      d.inputs[1] = static_cast<ValueId>(values->size() - 1);
    }
    d.shader = "conv2d_up2";
    d.defines = std::move(defines);
    const long long src_w = up_w / 2, src_h = up_h / 2, lz = quad ? 1 : 4;
    d.local = {static_cast<uint32_t>(lx), static_cast<uint32_t>(ly), static_cast<uint32_t>(lz)};
    d.grid = {static_cast<uint32_t>((src_w + lx - 1) / lx * lx),
              static_cast<uint32_t>((src_h + ly - 1) / ly * ly),
              static_cast<uint32_t>(groups * (quad == 2 ? 4 : lz))};
    ++moved;
  }
  return moved;
}

}  // namespace tflite_gles
