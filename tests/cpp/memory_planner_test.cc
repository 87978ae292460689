// The memory planner on lifetimes with known answers and on random ones: no
// two tensors live at the same time share a byte, every offset is aligned,
// and the arena never beats the lower bound (which would mean the bound or
// the check is wrong) nor the sum.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "delegate/passes/memory_planner.h"

namespace tflite_gles {
namespace {

// Fails the test with the offending pair if two live-together tensors
// overlap in bytes, or an offset is misaligned.
void ExpectValid(const std::vector<TensorLifetime>& tensors, const MemoryPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].bytes == 0) continue;
    EXPECT_EQ(plan.offsets[i] % plan.alignment, 0u) << "tensor " << i;
    const size_t end_i = plan.offsets[i] + plan.AlignedBytes(tensors[i].bytes);
    EXPECT_LE(end_i, plan.arena_bytes) << "tensor " << i << " ends past the arena";
    for (size_t j = i + 1; j < tensors.size(); ++j) {
      if (tensors[j].bytes == 0 || !LifetimesOverlap(tensors[i], tensors[j])) continue;
      const size_t end_j = plan.offsets[j] + plan.AlignedBytes(tensors[j].bytes);
      const bool disjoint = end_i <= plan.offsets[j] || end_j <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "tensors " << i << " [" << tensors[i].first << ","
                            << tensors[i].last << "] and " << j << " ["
                            << tensors[j].first << "," << tensors[j].last
                            << "] are live together and share bytes";
    }
  }
  EXPECT_GE(plan.arena_bytes, plan.lower_bound_bytes);
  EXPECT_LE(plan.arena_bytes, plan.sum_bytes);
}

TEST(MemoryPlanner, ChainOfLayersNeedsOnlyTheLargestAdjacentPair) {
  // A MobileNet-like chain: dispatch k reads tensor k and writes tensor k+1.
  const std::vector<size_t> sizes = {9600, 6400, 6400, 12800, 3200, 6400, 1600, 3200, 400};
  std::vector<TensorLifetime> tensors;
  size_t sum = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const int first = k == 0 ? 0 : static_cast<int>(k) - 1;
    tensors.push_back({sizes[k], first, static_cast<int>(k)});
    sum += sizes[k];
  }
  const MemoryPlan plan = PlanMemory(tensors, 16);
  ExpectValid(tensors, plan);
  EXPECT_EQ(plan.sum_bytes, sum);
  EXPECT_EQ(plan.lower_bound_bytes, 6400u + 12800u);
  EXPECT_EQ(plan.arena_bytes, plan.lower_bound_bytes);
}

TEST(MemoryPlanner, ResidualBlocksStayWithinATenthOfTheBound) {
  // Inverted-residual blocks: the block input is read again by the ADD at
  // the block's end, so three tensors are live inside each block.
  std::vector<TensorLifetime> tensors;
  int step = 0;
  size_t width = 24 * 56 * 56 * 4;
  tensors.push_back({width, 0, 0});
  for (int block = 0; block < 8; ++block) {
    const size_t in = tensors.size() - 1;
    const int start = step;
    tensors.push_back({width * 6, step, step + 1});      // expand
    tensors.push_back({width * 6, step + 1, step + 2});  // depthwise
    tensors.push_back({width, step + 2, step + 3});      // project
    tensors[in].last = step + 3;                         // ADD reads the input
    tensors.push_back({width, step + 3, step + 4});      // the sum
    step = start + 4;
    if (block % 3 == 2) width /= 2;
  }
  const MemoryPlan plan = PlanMemory(tensors, 64);
  ExpectValid(tensors, plan);
  EXPECT_LE(plan.arena_bytes, plan.lower_bound_bytes * 11 / 10);
}

TEST(MemoryPlanner, OffsetsAndSizesFollowTheAlignment) {
  // 3 odd-sized tensors live together: each is rounded up to 256 bytes.
  const std::vector<TensorLifetime> tensors = {{100, 0, 2}, {300, 1, 2}, {20, 2, 3}};
  const MemoryPlan plan = PlanMemory(tensors, 256);
  ExpectValid(tensors, plan);
  EXPECT_EQ(plan.lower_bound_bytes, 256u + 512u + 256u);
  EXPECT_EQ(plan.arena_bytes, 1024u);
}

TEST(MemoryPlanner, TensorsOfOneDispatchNeverShareEvenIfOneEndsThere) {
  // Dispatch 1 reads A (its last use) and writes B: B must not reuse A.
  const std::vector<TensorLifetime> tensors = {{64, 0, 1}, {64, 1, 2}};
  const MemoryPlan plan = PlanMemory(tensors, 16);
  ExpectValid(tensors, plan);
  EXPECT_EQ(plan.arena_bytes, 128u);
}

TEST(MemoryPlanner, ZeroSizedTensorsAndAnEmptyListTakeNoMemory) {
  EXPECT_EQ(PlanMemory({}, 16).arena_bytes, 0u);
  const std::vector<TensorLifetime> tensors = {{0, 0, 5}, {32, 1, 1}, {0, 2, 2}};
  const MemoryPlan plan = PlanMemory(tensors, 16);
  ExpectValid(tensors, plan);
  EXPECT_EQ(plan.arena_bytes, 32u);
  EXPECT_EQ(plan.sum_bytes, 32u);
}

class RandomLifetimes : public ::testing::TestWithParam<int> {};

TEST_P(RandomLifetimes, NoLiveTensorsShareBytesAndTheBoundHolds) {
  std::mt19937 rng(static_cast<unsigned>(GetParam()));
  std::uniform_int_distribution<int> count_of(1, 120), length_of(0, 12);
  std::uniform_int_distribution<size_t> size_of(1, 1 << 20);
  const int count = count_of(rng);
  std::vector<TensorLifetime> tensors;
  for (int i = 0; i < count; ++i) {
    std::uniform_int_distribution<int> start_of(0, 80);
    const int first = start_of(rng);
    tensors.push_back({size_of(rng), first, first + length_of(rng)});
  }
  const size_t alignment = GetParam() % 2 ? 16 : 256;
  const MemoryPlan plan = PlanMemory(tensors, alignment);
  ExpectValid(tensors, plan);
  // Random interval graphs are harder than networks; greedy by size is
  // known to stay well within 1.5x of the bound on them.
  EXPECT_LE(plan.arena_bytes, plan.lower_bound_bytes * 3 / 2)
      << "seed " << GetParam() << ": arena " << plan.arena_bytes << " bound "
      << plan.lower_bound_bytes;
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomLifetimes, ::testing::Range(1, 41));

}  // namespace
}  // namespace tflite_gles
