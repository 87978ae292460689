#include "delegate/passes/schedule.h"

#include <algorithm>
#include <numeric>

namespace tflite_gles {

std::vector<size_t> OrderByLevel(const std::vector<Value>& values,
                                 std::vector<Dispatch>* dispatches) {
  auto root_of = [&values](ValueId id) { return static_cast<size_t>(StorageRoot(values, id)); };
  // Per root: the deepest level that wrote it, and that read it, so far.
  std::vector<int> written_at(values.size(), 0);
  std::vector<int> read_at(values.size(), 0);
  std::vector<int> level(dispatches->size(), 0);
  for (size_t i = 0; i < dispatches->size(); ++i) {
    const Dispatch& d = (*dispatches)[i];
    int depth = 0;
    // Read-write buffers (Dispatch::read_write) count as read and written.
    for (const auto* ids : {&d.inputs, &d.read_write}) {
      for (ValueId id : *ids) depth = std::max(depth, written_at[root_of(id)]);
    }
    for (const auto* ids : {&d.outputs, &d.read_write}) {
      for (ValueId id : *ids) {
        const size_t root = root_of(id);
        depth = std::max({depth, written_at[root], read_at[root]});
      }
    }
    level[i] = depth + 1;
    for (const auto* ids : {&d.inputs, &d.read_write}) {
      for (ValueId id : *ids) {
        int& at = read_at[root_of(id)];
        at = std::max(at, level[i]);
      }
    }
    for (const auto* ids : {&d.outputs, &d.read_write}) {
      for (ValueId id : *ids) written_at[root_of(id)] = level[i];
    }
  }
  std::vector<size_t> order(dispatches->size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&level](size_t a, size_t b) { return level[a] < level[b]; });
  std::vector<Dispatch> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(std::move((*dispatches)[i]));
  *dispatches = std::move(sorted);
  return order;
}

namespace {

bool Overlap(const MemoryRange& a, const MemoryRange& b) {
  return a.buffer == b.buffer && a.begin < b.end && b.begin < a.end;
}

bool AnyOverlap(const std::vector<MemoryRange>& ranges,
                const std::vector<MemoryRange>& since_barrier) {
  for (const MemoryRange& r : ranges) {
    for (const MemoryRange& s : since_barrier) {
      if (Overlap(r, s)) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<bool> BarriersBefore(const std::vector<StepMemory>& steps) {
  std::vector<bool> barrier(steps.size(), false);
  // What the steps since the last barrier wrote and read. A run between
  // barriers is short (a few independent dispatches), so plain lists do.
  std::vector<MemoryRange> written, read;
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepMemory& step = steps[i];
    barrier[i] = i == 0 || AnyOverlap(step.reads, written) ||
                 AnyOverlap(step.writes, written) || AnyOverlap(step.writes, read);
    if (barrier[i]) {
      written.clear();
      read.clear();
    }
    written.insert(written.end(), step.writes.begin(), step.writes.end());
    read.insert(read.end(), step.reads.begin(), step.reads.end());
  }
  return barrier;
}

}  // namespace tflite_gles
