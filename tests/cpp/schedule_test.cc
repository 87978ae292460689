// Dispatch order and barrier placement (delegate/passes/schedule.h), on small
// graphs with known answers and on random ones checked against the
// definitions: every hazard between two dispatches has a barrier between
// them, every barrier is there for a hazard since the one before it, and
// reordering keeps every pair of dispatches that touch the same storage in
// their original order.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "delegate/passes/schedule.h"

namespace tflite_gles {
namespace {

bool Overlaps(const MemoryRange& a, const MemoryRange& b) {
  return a.buffer == b.buffer && a.begin < b.end && b.begin < a.end;
}

bool AnyPair(const std::vector<MemoryRange>& a, const std::vector<MemoryRange>& b) {
  for (const auto& x : a) {
    for (const auto& y : b) {
      if (Overlaps(x, y)) return true;
    }
  }
  return false;
}

// Whether `later` must not overlap `earlier` on the GPU.
bool Hazard(const StepMemory& earlier, const StepMemory& later) {
  return AnyPair(later.reads, earlier.writes) || AnyPair(later.writes, earlier.writes) ||
         AnyPair(later.writes, earlier.reads);
}

TEST(BarriersBefore, ChainNeedsOneBeforeEveryDispatch) {
  // d_k reads bytes [k, k+1) * 100 of buffer 1 and writes the next range.
  std::vector<StepMemory> steps(5);
  for (size_t k = 0; k < steps.size(); ++k) {
    steps[k].reads = {{1, k * 100, k * 100 + 100}};
    steps[k].writes = {{1, k * 100 + 100, k * 100 + 200}};
  }
  EXPECT_EQ(BarriersBefore(steps), std::vector<bool>(5, true));
}

TEST(BarriersBefore, IndependentDispatchesShareOneBarrier) {
  // Four dispatches reading one input and writing disjoint ranges, then one
  // reading all four outputs.
  std::vector<StepMemory> steps(5);
  for (size_t k = 0; k < 4; ++k) {
    steps[k].reads = {{1, 0, 64}};
    steps[k].writes = {{2, k * 32, k * 32 + 32}};
  }
  steps[4].reads = {{2, 0, 128}};
  steps[4].writes = {{3, 0, 16}};
  EXPECT_EQ(BarriersBefore(steps), (std::vector<bool>{true, false, false, false, true}));
}

TEST(BarriersBefore, WriteAfterReadOfSharedBytesNeedsOne) {
  // The memory planner may give a dead tensor's bytes to a new one: d1
  // writes what d0 still reads (other tensors, same bytes).
  std::vector<StepMemory> steps(2);
  steps[0].reads = {{7, 256, 512}};
  steps[0].writes = {{7, 0, 256}};
  steps[1].reads = {{9, 0, 16}};
  steps[1].writes = {{7, 384, 640}};
  EXPECT_EQ(BarriersBefore(steps), (std::vector<bool>{true, true}));
  // Touching ranges ([0, 256) and [256, 512)) do not overlap.
  steps[1].writes = {{7, 512, 768}};
  EXPECT_EQ(BarriersBefore(steps), (std::vector<bool>{true, false}));
}

TEST(BarriersBefore, RandomStepsAreSafeAndMinimal) {
  std::mt19937 rng(20261122);
  for (int trial = 0; trial < 300; ++trial) {
    const int count = 1 + static_cast<int>(rng() % 12);
    std::vector<StepMemory> steps(count);
    auto random_range = [&rng]() {
      const size_t begin = rng() % 16 * 64;
      return MemoryRange{static_cast<unsigned>(1 + rng() % 3), begin,
                         begin + (1 + rng() % 4) * 64};
    };
    for (StepMemory& step : steps) {
      for (int r = static_cast<int>(rng() % 3); r > 0; --r) step.reads.push_back(random_range());
      for (int w = 1 + static_cast<int>(rng() % 2); w > 0; --w) step.writes.push_back(random_range());
    }
    const std::vector<bool> barrier = BarriersBefore(steps);
    ASSERT_EQ(barrier.size(), steps.size());
    EXPECT_TRUE(barrier[0]);
    for (int j = 0; j < count; ++j) {
      // Safe: a hazard with any earlier step has a barrier in (i, j].
      for (int i = 0; i < j; ++i) {
        if (!Hazard(steps[i], steps[j])) continue;
        bool separated = false;
        for (int k = i + 1; k <= j; ++k) separated = separated || barrier[k];
        EXPECT_TRUE(separated) << "trial " << trial << ": steps " << i << " and " << j;
      }
      // Minimal: a barrier (but the first) answers a hazard with a step
      // since the barrier before it.
      if (j == 0 || !barrier[j]) continue;
      int since = j - 1;
      while (since > 0 && !barrier[since]) --since;
      bool needed = false;
      for (int i = since; i < j; ++i) needed = needed || Hazard(steps[i], steps[j]);
      EXPECT_TRUE(needed) << "trial " << trial << ": needless barrier before " << j;
    }
  }
}

Dispatch Make(std::vector<ValueId> outputs, std::vector<ValueId> inputs, int tag) {
  Dispatch d;
  d.outputs = std::move(outputs);
  d.inputs = std::move(inputs);
  d.label = std::to_string(tag);
  return d;
}

std::vector<int> Tags(const std::vector<Dispatch>& dispatches) {
  std::vector<int> tags;
  for (const Dispatch& d : dispatches) tags.push_back(std::stoi(d.label));
  return tags;
}

TEST(OrderByLevel, ChainKeepsItsOrder) {
  std::vector<Value> values(5);
  std::vector<Dispatch> dispatches;
  for (int k = 0; k < 4; ++k) dispatches.push_back(Make({k + 1}, {k}, k));
  OrderByLevel(values, &dispatches);
  EXPECT_EQ(Tags(dispatches), (std::vector<int>{0, 1, 2, 3}));
}

TEST(OrderByLevel, BranchesOnTheSideInputMoveToTheFront) {
  // Style transfer's pattern: a main chain x0 -> x1 -> x2 whose steps each
  // also read a parameter p_k computed from the style input s alone.
  // Values: 0 x0, 1 s, 2 x1, 3 x2, 4 p1, 5 p2.
  std::vector<Value> values(6);
  std::vector<Dispatch> dispatches = {Make({4}, {1}, 0), Make({2}, {0, 4}, 1),
                                      Make({5}, {1}, 2), Make({3}, {2, 5}, 3)};
  const std::vector<size_t> order = OrderByLevel(values, &dispatches);
  EXPECT_EQ(Tags(dispatches), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(order, (std::vector<size_t>{0, 2, 1, 3}));
}

TEST(OrderByLevel, ViewsCountAsTheirRoot) {
  // Value 2 is a view of value 1: the dispatch reading the view depends on
  // the one writing the root, and the one overwriting the root must wait
  // for that read.
  std::vector<Value> values(4);
  values[2].storage_of = 1;
  std::vector<Dispatch> dispatches = {Make({1}, {0}, 0), Make({3}, {2}, 1),
                                      Make({1}, {0}, 2)};
  OrderByLevel(values, &dispatches);
  EXPECT_EQ(Tags(dispatches), (std::vector<int>{0, 1, 2}));
}

TEST(OrderByLevel, ReadWriteBuffersCountAsReadAndWritten) {
  // A fused softmax's logits (value 1) are a read-write buffer of the GEMM
  // (tag 2), not an input: still it must follow the dispatch that last
  // wrote them (tag 1) and precede the next one that does (tag 3), though
  // its inputs (value 0) alone would put it first.
  std::vector<Value> values(6);
  std::vector<Dispatch> dispatches = {Make({4}, {0}, 0), Make({1}, {4}, 1),
                                      Make({3}, {0}, 2), Make({1}, {0}, 3)};
  dispatches[2].read_write = {1};
  OrderByLevel(values, &dispatches);
  EXPECT_EQ(Tags(dispatches), (std::vector<int>{0, 1, 2, 3}));
}

TEST(OrderByLevel, RandomGraphsKeepEveryConflictInOrder) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int value_count = 2 + static_cast<int>(rng() % 8);
    std::vector<Value> values(value_count);
    for (int v = 1; v < value_count; ++v) {
      if (rng() % 5 == 0) values[v].storage_of = static_cast<ValueId>(rng() % v);
      if (values[v].storage_of >= 0 && values[values[v].storage_of].storage_of >= 0) {
        values[v].storage_of = values[values[v].storage_of].storage_of;  // roots only
      }
    }
    std::vector<Dispatch> dispatches;
    const int count = 1 + static_cast<int>(rng() % 10);
    for (int k = 0; k < count; ++k) {
      std::vector<ValueId> in, out = {static_cast<ValueId>(rng() % value_count)};
      for (int r = static_cast<int>(rng() % 3); r > 0; --r) {
        in.push_back(static_cast<ValueId>(rng() % value_count));
      }
      dispatches.push_back(Make(out, in, k));
    }
    const std::vector<Dispatch> original = dispatches;
    OrderByLevel(values, &dispatches);
    const std::vector<int> tags = Tags(dispatches);
    std::vector<int> sorted = tags;
    std::sort(sorted.begin(), sorted.end());
    for (int k = 0; k < count; ++k) ASSERT_EQ(sorted[k], k) << "not a permutation";
    auto root = [&values](ValueId id) {
      return values[id].storage_of >= 0 ? values[id].storage_of : id;
    };
    auto touches = [&](const std::vector<ValueId>& a, const std::vector<ValueId>& b) {
      for (ValueId x : a) {
        for (ValueId y : b) {
          if (root(x) == root(y)) return true;
        }
      }
      return false;
    };
    std::vector<int> position(count);
    for (int p = 0; p < count; ++p) position[tags[p]] = p;
    for (int i = 0; i < count; ++i) {
      for (int j = i + 1; j < count; ++j) {
        const Dispatch& a = original[i];
        const Dispatch& b = original[j];
        const bool conflict = touches(b.inputs, a.outputs) || touches(b.outputs, a.outputs) ||
                              touches(b.outputs, a.inputs);
        if (conflict) {
          EXPECT_LT(position[i], position[j]) << "trial " << trial << ": " << i << " and " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tflite_gles
