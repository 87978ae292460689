// Split-K across workgroups for depthwise-fused GEMMs (delegate/passes/dw_splitk.h):
// the tile override's parsing and the tile rule's limits. The shader itself
// is checked against the TFLite CPU kernels in tests/python/test_dw_splitk.py.
#include <gtest/gtest.h>

#include "delegate/passes/dw_splitk.h"
#include "egl/egl_environment.h"

namespace tflite_gles::testing {
namespace {

TEST(DwSplitKTile, ParsesSlashesAndCommas) {
  for (const char* text : {"16/32/1/32", "16,32,1,32"}) {
    auto tile = ParseDwSplitKTile(text);
    ASSERT_TRUE(tile.ok()) << tile.status().message();
    EXPECT_EQ(tile->rows, 16);
    EXPECT_EQ(tile->slices, 32);
    EXPECT_EQ(tile->k_parts, 1);
    EXPECT_EQ(tile->chunk_steps, 32);
  }
}

TEST(DwSplitKTile, RejectsMalformedTiles) {
  for (const char* text : {"16/32/1", "0/1/1/1", "a/b/c/d", "4/4/2/2/2", "4/4/2/2000"}) {
    EXPECT_FALSE(ParseDwSplitKTile(text).ok()) << text;
  }
}

TEST(DwSplitKTile, RuleSplitsOnlyDeepLayersWithinTheDevice) {
  egl::GpuInfo gpu;
  gpu.max_workgroup_invocations = 1024;
  gpu.max_shared_memory_bytes = 48 * 1024;
  DeviceProfile device;
  device.gpu = &gpu;
  // 7x7 1024 -> 1024: 16 rows x 32 slices, one part, chunks of 32 steps.
  auto deep = ChooseDwSplitKTile(49, 256, 256, device);
  ASSERT_TRUE(deep.ok()) << deep.status().message();
  EXPECT_EQ(deep->rows, 16);
  EXPECT_EQ(deep->slices, 32);
  EXPECT_EQ(deep->k_parts, 1);
  EXPECT_EQ(deep->chunk_steps, 32);
  // 14x14x512 (128 steps): measured slower, so no tile.
  EXPECT_FALSE(ChooseDwSplitKTile(196, 128, 128, device).ok());
  // An override applies at any depth, but not past the device's limits.
  device.dw_splitk_tile_override = "4/16/8/32";
  EXPECT_TRUE(ChooseDwSplitKTile(196, 128, 128, device).ok());
  gpu.max_workgroup_invocations = 256;
  auto too_big = ChooseDwSplitKTile(196, 128, 128, device);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("512 invocations"), std::string::npos)
      << too_big.status().message();
  device.dw_splitk_tile_override = "16/2/2/256";  // A tile of 64 KiB > 32 KiB
  EXPECT_FALSE(ChooseDwSplitKTile(196, 128, 128, device).ok());
}

}  // namespace
}  // namespace tflite_gles::testing
