// shaders/gemm.comp (the split-depth GEMM real GPUs use for 1x1 CONV_2D
// and FULLY_CONNECTED) forced on whatever GPU runs the tests (llvmpipe in
// CI, where the delegate would not choose it), against a naive float64
// reference: odd channel counts, depths not a multiple of the K parts,
// batches, rows past the last workgroup, K split in 1-16 parts, the
// split-K form for few rows, and each fused activation.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "delegate/kernels/gemm.h"
#include "delegate/abi/tflite_builtin.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

// Forces gemm.comp, with `tile` ("" = chosen per shape, as on a GPU with
// DeviceProfile::min_invocations = `min_invocations`).
void ForceGemm(OpTester& tester, const std::string& tile,
               long long min_invocations) {
  tester.TuneDevice([tile, min_invocations](DeviceProfile* device) {
    device->shared_memory_gemm = true;
    device->gemm_tile_override = tile;
    device->min_invocations = min_invocations;
  });
}

struct PointwiseCase {
  int batch, height, width, in_c, out_c;
  abi::FusedActivation act;
  std::string tile;
  long long min_invocations;
};

void RunPointwise(const PointwiseCase& c, bool fp16, uint32_t seed) {
  SCOPED_TRACE(std::to_string(c.batch) + "x" + std::to_string(c.height) + "x" +
               std::to_string(c.width) + "x" + std::to_string(c.in_c) + "->" +
               std::to_string(c.out_c) + " tile '" + c.tile + "' act " +
               std::to_string(c.act) + (fp16 ? " fp16" : " fp32"));
  const std::vector<int> in_dims = {c.batch, c.height, c.width, c.in_c};
  const int rows = c.batch * c.height * c.width;
  auto x = AsStored(RandomData(Count(in_dims), seed, -2, 2), fp16);
  auto w = AsStored(RandomData(static_cast<size_t>(c.out_c) * c.in_c, seed + 1,
                               -0.5f, 0.5f), fp16);
  auto bias = AsStored(RandomData(c.out_c, seed + 2, -1, 1), fp16);
  OpTester tester(abi::kTfLiteBuiltinConv2d);
  tester.AddInput(in_dims, x);
  tester.AddConstInput({c.out_c, 1, 1, c.in_c}, w);
  tester.AddConstInput({c.out_c}, bias);
  tester.AddOutput({c.batch, c.height, c.width, c.out_c});
  tester.SetParams(abi::ConvParams{abi::kPaddingSame, 1, 1, c.act, 1, 1,
                                   abi::kNoType});
  ForceGemm(tester, c.tile, c.min_invocations);
  Status status = tester.Run(fp16);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_LE(MaxRelativeError(tester.output(),
                             FullyConnectedReference(x, rows, c.in_c, w, c.out_c, bias, c.act)),
            Tolerance(fp16));
}

// The depthwise fusion repacks pointwise weights for its tile (real GPUs):
// a lazy weight must stay lazy, so that the serialization cache holds the
// repacked bytes and a filled start never makes them (docs/perf/log.md,
// "cold3"), with a key that names the repack, and make what the eager
// repack makes.
TEST(SharedMemoryGemm, RepackingALazyWeightKeepsItLazyUnderAKeyOfItsOwn) {
  const int out_slices = 5, depth_steps = 3, from = 2, to = 4;
  const size_t floats = static_cast<size_t>((out_slices + from - 1) / from) * depth_steps *
                        from * 16;
  std::vector<float> packed(floats);
  for (size_t i = 0; i < floats; ++i) packed[i] = static_cast<float>(i % 97) - 40.0f;
  int made = 0;
  auto source = std::make_shared<Value::LazyConstant>();
  source->floats = floats;
  source->key = "pointwise weights #7";
  source->make = [&made, &packed] {
    ++made;
    return packed;
  };
  Value lazy, eager, other;
  lazy.kind = eager.kind = other.kind = Value::Kind::kConstant;
  lazy.lazy = other.lazy = source;
  eager.constant_data = packed;
  kernels::RepackGemmWeights(lazy, out_slices, depth_steps, from, to);
  kernels::RepackGemmWeights(other, out_slices, depth_steps, from, 8);
  kernels::RepackGemmWeights(eager, out_slices, depth_steps, from, to);
  ASSERT_TRUE(lazy.lazy != nullptr);
  EXPECT_EQ(made, 0);
  EXPECT_EQ(lazy.lazy->key.rfind(source->key, 0), 0u) << lazy.lazy->key;
  EXPECT_NE(lazy.lazy->key, source->key);
  EXPECT_NE(lazy.lazy->key, other.lazy->key);
  EXPECT_EQ(lazy.vec4_count(), eager.vec4_count());
  MaterializeConstant(lazy);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(lazy.constant_data, eager.constant_data);
  // The layout ([slice group][step][slice in group][16 floats]) written out
  // independently: every real slice's block moved, the padding zero.
  auto block = [depth_steps](int slice, int step, int wg) {
    return ((static_cast<size_t>(slice / wg) * depth_steps + step) * wg + slice % wg) * 16;
  };
  std::vector<float> expected(static_cast<size_t>((out_slices + to - 1) / to) * depth_steps *
                              to * 16, 0.0f);
  for (int slice = 0; slice < out_slices; ++slice) {
    for (int step = 0; step < depth_steps; ++step) {
      for (int k = 0; k < 16; ++k) {
        expected[block(slice, step, to) + k] = packed[block(slice, step, from) + k];
      }
    }
  }
  EXPECT_EQ(lazy.constant_data, expected);
}

TEST(SharedMemoryGemm, PointwiseOverTilesChannelsAndBatches) {
  constexpr abi::FusedActivation kNone = abi::kActNone;
  const PointwiseCase cases[] = {
      // Tiles chosen per shape: the first (min_invocations 0), and those a
      // GPU's target picks (K in 4-16 parts).
      {1, 9, 11, 37, 30, kNone, "", 0},        // 99 rows, depth 10 steps
      {2, 7, 5, 5, 13, abi::kActRelu6, "", 0},  // batch 2, odd channels
      {1, 12, 12, 64, 20, kNone, "", 1 << 15},
      {2, 6, 7, 70, 9, abi::kActRelu, "", 1 << 15},
      // Forced tiles: more K parts than steps (3 steps in 4 and 16 parts),
      // one invocation per output, wide tiles over few slices.
      {1, 5, 7, 9, 17, kNone, "2,2,8,8,4", 0},
      {2, 3, 5, 13, 6, kNone, "1,1,16,4,2", 0},
      {1, 10, 10, 3, 40, abi::kActReluN1To1, "4,4,16,4,1", 0},
      {1, 8, 9, 33, 3, kNone, "1,2,8,8,8", 0},
      {2, 4, 3, 10, 21, abi::kActRelu6, "1,1,16,4,16", 0},
  };
  for (bool fp16 : {false, true}) {
    for (const PointwiseCase& c : cases) RunPointwise(c, fp16, 50 + c.in_c);
  }
}

struct FcCase {
  std::vector<int> in_dims;
  int outputs;
  std::vector<int> out_dims;
  std::string tile;
};

TEST(SharedMemoryGemm, FullyConnectedSplitKAndTiledRows) {
  const FcCase cases[] = {
      {{1, 1024}, 1001, {1, 1001}, ""},       // a classifier's logits: split-K
      {{3, 45}, 7, {3, 7}, ""},               // 3 rows, depth past the parts
      {{2, 3, 3, 5}, 11, {2, 11}, ""},        // whole batch flattened
      {{1, 200}, 9, {1, 9}, "splitk,4,8"},
      {{2, 30}, 70, {2, 70}, "splitk,32,1"},  // one part: no shared memory
      {{2, 3}, 5, {2, 5}, ""},                // depth of one step: one part
      {{9, 21}, 6, {9, 6}, ""},               // 9 rows: the tiled form
      {{3, 5, 4}, 10, {15, 10}, "1,2,8,8,2"},
  };
  for (bool fp16 : {false, true}) {
    for (const FcCase& c : cases) {
      const int rows = static_cast<int>(Count(c.out_dims) / c.outputs);
      const int depth = static_cast<int>(Count(c.in_dims)) / rows;
      SCOPED_TRACE("rows " + std::to_string(rows) + " depth " +
                   std::to_string(depth) + " outputs " +
                   std::to_string(c.outputs) + " tile '" + c.tile + "'" +
                   (fp16 ? " fp16" : " fp32"));
      auto x = AsStored(RandomData(Count(c.in_dims), depth, -2, 2), fp16);
      auto w = AsStored(
          RandomData(static_cast<size_t>(c.outputs) * depth, 7, -0.5f, 0.5f), fp16);
      auto bias = AsStored(RandomData(c.outputs, 8, -1, 1), fp16);
      OpTester tester(abi::kTfLiteBuiltinFullyConnected, 5);
      tester.AddInput(c.in_dims, x);
      tester.AddConstInput({c.outputs, depth}, w);
      tester.AddConstInput({c.outputs}, bias);
      tester.AddOutput(c.out_dims);
      abi::FullyConnectedParams params{};
      params.activation = abi::kActRelu;
      tester.SetParams(params);
      ForceGemm(tester, c.tile, 1 << 15);
      Status status = tester.Run(fp16);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_LE(MaxRelativeError(tester.output(),
                                 FullyConnectedReference(x, rows, depth, w, c.outputs, bias,
                                               abi::kActRelu)),
                Tolerance(fp16));
    }
  }
}

TEST(SharedMemoryGemm, TileChoiceStaysWithinTheWorkgroupAndSharedMemory) {
  DeviceProfile device;
  device.gpu = &TestGpuInfo();
  device.min_invocations = 1 << 15;
  // MobileNet v1's pointwise layers and logits (rows, slices, depth steps).
  const long long shapes[][3] = {{12544, 16, 8}, {3136, 32, 32}, {784, 64, 64},
                                 {196, 128, 128}, {49, 256, 256}, {1, 251, 256},
                                 {5, 1, 1}, {2, 3, 1}};
  for (const auto& s : shapes) {
    auto tile = kernels::ChooseSharedGemmTile(s[0], static_cast<int>(s[1]),
                                              static_cast<int>(s[2]), device);
    ASSERT_TRUE(tile.ok()) << tile.status().message();
    SCOPED_TRACE(tile->ToString());
    EXPECT_EQ(tile->split_k, s[0] <= 4);
    EXPECT_LE(tile->shared_vec4(), kernels::SharedGemmVec4Limit(device));
    EXPECT_LE(tile->shared_vec4() * 16, TestGpuInfo().max_shared_memory_bytes);
    EXPECT_LE(tile->local_x() * tile->k_parts, TestGpuInfo().max_workgroup_invocations);
  }
  device.gemm_tile_override = "4,4,16,4,8";  // 64 x 8 x 16 partials: too many
  EXPECT_FALSE(kernels::ChooseSharedGemmTile(196, 128, 128, device).ok());
  device.gemm_tile_override = "4,4,x,4,1";
  auto bad = kernels::ChooseSharedGemmTile(196, 128, 128, device);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'x'"), std::string::npos)
      << bad.status().message();
}

TEST(SharedMemoryGemm, DepthwiseFusedTilesUseRegisterTilesOnlyOnSmallMaps) {
  DeviceProfile device;
  device.gpu = &TestGpuInfo();
  device.min_invocations = 1 << 15;
  // MobileNet v1's fused pairs (rows, output slices, depth steps) and the
  // tile each should get with register tiles on: {rows, slices per
  // invocation, invocations along rows, along slices, K parts}; 0 = the
  // one-output rule's tile (one row and slice per invocation).
  struct Case {
    long long rows;
    int out_slices, depth_steps;
    int expected[5];
  };
  const Case cases[] = {
      {12544, 16, 8, {0}},         {3136, 32, 32, {4, 1, 2, 16, 4}},
      {3136, 32, 16, {4, 1, 2, 16, 4}}, {2500, 16, 16, {0}},  // < 32 slices
      {4096, 32, 32, {0}},
      {784, 64, 64, {4, 1, 2, 16, 8}}, {784, 16, 32, {0}},  // < 32 slices
      {196, 128, 128, {2, 1, 4, 32, 8}}, {196, 64, 128, {2, 1, 2, 16, 8}},
      {361, 64, 32, {2, 1, 2, 16, 8}},
      {49, 256, 256, {2, 1, 4, 16, 16}}, {49, 256, 8, {2, 1, 4, 16, 8}},
  };
  for (bool on : {false, true}) {
    device.dw_gemm_register_tiles = on;
    for (const Case& c : cases) {
      auto tile = kernels::ChooseDepthwiseGemmTile(c.rows, c.out_slices, c.depth_steps,
                                                   device);
      ASSERT_TRUE(tile.ok()) << tile.status().message();
      SCOPED_TRACE(std::to_string(c.rows) + " rows, switch " + (on ? "on: " : "off: ") +
                   tile->ToString());
      EXPECT_LE(tile->local_x() * tile->k_parts, TestGpuInfo().max_workgroup_invocations);
      EXPECT_EQ((tile->local_x() * tile->k_parts) % tile->wg_rows(), 0);
      if (!on || c.expected[0] == 0) {
        EXPECT_EQ(tile->tile_rows, 1);
        EXPECT_EQ(tile->tile_slices, 1);
        continue;
      }
      if (TestGpuInfo().max_workgroup_invocations < c.expected[2] * c.expected[3] * c.expected[4]) {
        continue;  // the device cannot run that workgroup: the other rule's tile
      }
      EXPECT_EQ(tile->tile_rows, c.expected[0]);
      EXPECT_EQ(tile->tile_slices, c.expected[1]);
      EXPECT_EQ(tile->threads_r, c.expected[2]);
      EXPECT_EQ(tile->threads_s, c.expected[3]);
      EXPECT_EQ(tile->k_parts, c.expected[4]);
    }
  }
  // fp16 keeps 16 slices a workgroup on 14x14 maps with many slices.
  device.fp16 = true;
  device.dw_gemm_register_tiles = true;
  auto tile = kernels::ChooseDepthwiseGemmTile(196, 128, 128, device);
  ASSERT_TRUE(tile.ok()) << tile.status().message();
  if (TestGpuInfo().max_workgroup_invocations >= 2 * 16 * 8) {
    EXPECT_EQ(tile->threads_r, 2) << tile->ToString();
    EXPECT_EQ(tile->threads_s, 16) << tile->ToString();
  }
}

}  // namespace
}  // namespace tflite_gles::testing
