#include "delegate/passes/dead_dispatches.h"

#include "delegate/passes/fusion.h"

namespace tflite_gles {

int RemoveDeadDispatches(const std::vector<Value>& values, const std::vector<ValueId>& keep,
                         std::vector<Dispatch>* dispatches) {
  std::vector<Dispatch>& list = *dispatches;
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  std::vector<bool> removed(list.size(), false);
  int count = 0;
  // Readers per storage root among the dispatches left; a removal may leave
  // its own inputs unread, hence the repeat.
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<int> readers(values.size(), 0);
    for (size_t i = 0; i < list.size(); ++i) {
      if (removed[i]) continue;
      for (ValueId id : list[i].inputs) ++readers[StorageRoot(values, id)];
      for (ValueId id : list[i].read_write) ++readers[StorageRoot(values, id)];
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const Dispatch& d = list[i];
      if (removed[i] || !d.read_write.empty() || d.outputs.empty()) continue;
      bool dead = true;
      for (ValueId id : d.outputs) {
        const ValueId root = StorageRoot(values, id);
        if (pinned[root] || readers[root] > 0) dead = false;
      }
      if (!dead) continue;
      removed[i] = true;
      ++count;
      changed = true;
    }
  }
  EraseRemoved(removed, &list);
  return count;
}

}  // namespace tflite_gles
