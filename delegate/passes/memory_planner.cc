#include "delegate/passes/memory_planner.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace tflite_gles {
namespace {

// Bytes live at the busiest dispatch: no plan can use less.
size_t LowerBound(const std::vector<TensorLifetime>& tensors,
                  const MemoryPlan& plan) {
  // Sweep over lifetime ends: +bytes at `first`, -bytes after `last`.
  std::vector<std::pair<int, long long>> events;
  for (const TensorLifetime& t : tensors) {
    if (t.bytes == 0) continue;
    const long long bytes = static_cast<long long>(plan.AlignedBytes(t.bytes));
    events.push_back({t.first, bytes});
    events.push_back({t.last + 1, -bytes});
  }
  // At equal times, frees come first: a tensor ending at k-1 and one
  // starting at k are never live together.
  std::sort(events.begin(), events.end());
  long long live = 0, peak = 0;
  for (const auto& [time, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return static_cast<size_t>(peak);
}


// Places tensors in `order`, each at the best-fitting gap among the already
// placed tensors it is live with; returns the arena size.
size_t PlaceInOrder(const std::vector<TensorLifetime>& tensors,
                    const std::vector<size_t>& order, const MemoryPlan& sizes,
                    std::vector<size_t>* offsets) {
  struct Placed {
    size_t offset;
    size_t end;
    size_t index;
  };
  std::vector<Placed> placed;
  size_t arena = 0;
  for (size_t index : order) {
    const size_t bytes = sizes.AlignedBytes(tensors[index].bytes);
    std::vector<Placed> conflicts;
    for (const Placed& p : placed) {
      if (LifetimesOverlap(tensors[p.index], tensors[index])) conflicts.push_back(p);
    }
    std::sort(conflicts.begin(), conflicts.end(),
              [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
    // Best fit: the smallest gap that holds the tensor, else past the end
    // of everything it is live with.
    size_t best_offset = 0;
    size_t best_gap = SIZE_MAX;
    size_t cursor = 0;
    for (const Placed& c : conflicts) {
      if (c.offset > cursor) {
        const size_t gap = c.offset - cursor;
        if (gap >= bytes && gap < best_gap) {
          best_gap = gap;
          best_offset = cursor;
        }
      }
      cursor = std::max(cursor, c.end);
    }
    if (best_gap == SIZE_MAX) best_offset = cursor;
    (*offsets)[index] = best_offset;
    placed.push_back({best_offset, best_offset + bytes, index});
    arena = std::max(arena, best_offset + bytes);
  }
  return arena;
}

// Greedy by size: largest tensors first (ties by earlier start, then index,
// so plans are deterministic).
std::vector<size_t> OrderBySize(const std::vector<TensorLifetime>& tensors) {
  std::vector<size_t> order;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].bytes > 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (tensors[a].bytes != tensors[b].bytes) return tensors[a].bytes > tensors[b].bytes;
    if (tensors[a].first != tensors[b].first) return tensors[a].first < tensors[b].first;
    return a < b;
  });
  return order;
}

// Greedy by breadth: the busiest dispatch first, its tensors largest first,
// then the next busiest. Packs the moments that set the bound tightly, which
// greedy by size can miss on chains (a big tensor placed early blocks the
// gap a later pair needed).
std::vector<size_t> OrderByBreadth(const std::vector<TensorLifetime>& tensors,
                                   const MemoryPlan& sizes) {
  int steps = 0;
  for (const TensorLifetime& t : tensors) {
    if (t.bytes > 0) steps = std::max(steps, t.last + 1);
  }
  std::vector<std::vector<size_t>> live(static_cast<size_t>(steps));
  std::vector<size_t> breadth(static_cast<size_t>(steps), 0);
  for (size_t i : OrderBySize(tensors)) {
    for (int s = std::max(0, tensors[i].first); s <= tensors[i].last; ++s) {
      live[static_cast<size_t>(s)].push_back(i);
      breadth[static_cast<size_t>(s)] += sizes.AlignedBytes(tensors[i].bytes);
    }
  }
  std::vector<size_t> step_order(static_cast<size_t>(steps));
  std::iota(step_order.begin(), step_order.end(), 0);
  std::stable_sort(step_order.begin(), step_order.end(),
                   [&](size_t a, size_t b) { return breadth[a] > breadth[b]; });
  std::vector<bool> taken(tensors.size(), false);
  std::vector<size_t> order;
  for (size_t s : step_order) {
    for (size_t i : live[s]) {
      if (!taken[i]) {
        taken[i] = true;
        order.push_back(i);
      }
    }
  }
  // Tensors with a negative start and nothing else (not expected) still get
  // a place.
  for (size_t i : OrderBySize(tensors)) {
    if (!taken[i]) order.push_back(i);
  }
  return order;
}

// In dispatch order: tensors by first use, larger first among those born
// together. On chains this is ping-pong between two regions, which reaches
// the bound where the other two orders can leave a hole.
std::vector<size_t> OrderByFirstUse(const std::vector<TensorLifetime>& tensors) {
  std::vector<size_t> order = OrderBySize(tensors);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return tensors[a].first < tensors[b].first;
  });
  return order;
}

}  // namespace

MemoryPlan PlanMemory(const std::vector<TensorLifetime>& tensors,
                            size_t alignment) {
  MemoryPlan plan;
  plan.alignment = alignment == 0 ? 1 : alignment;
  plan.offsets.assign(tensors.size(), 0);
  for (const TensorLifetime& t : tensors) plan.sum_bytes += plan.AlignedBytes(t.bytes);
  plan.lower_bound_bytes = LowerBound(tensors, plan);
  // Each order is cheap (quadratic in tensors, a few hundred at most); the
  // smallest arena wins, the first order on ties.
  const std::vector<std::vector<size_t>> orders = {
      OrderBySize(tensors), OrderByBreadth(tensors, plan), OrderByFirstUse(tensors)};
  plan.arena_bytes = SIZE_MAX;
  for (const std::vector<size_t>& order : orders) {
    std::vector<size_t> offsets(tensors.size(), 0);
    const size_t arena = PlaceInOrder(tensors, order, plan, &offsets);
    if (arena < plan.arena_bytes) {
      plan.arena_bytes = arena;
      plan.offsets = std::move(offsets);
    }
  }
  if (plan.arena_bytes == SIZE_MAX) plan.arena_bytes = 0;
  return plan;
}

TexturePlan PlanTextures(const std::vector<TensorLifetime>& tensors, bool share) {
  TexturePlan plan;
  plan.slot.assign(tensors.size(), -1);
  std::vector<size_t> order;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].bytes > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return tensors[a].first < tensors[b].first;
  });
  std::vector<int> slot_last;  // the last dispatch of each texture's latest tenant
  for (size_t i : order) {
    const TensorLifetime& t = tensors[i];
    int best = -1;
    for (size_t s = 0; share && s < slot_last.size(); ++s) {
      if (slot_last[s] >= t.first) continue;
      if (best < 0) {
        best = static_cast<int>(s);
        continue;
      }
      const size_t have = plan.slot_bytes[s];
      const size_t best_have = plan.slot_bytes[static_cast<size_t>(best)];
      const bool fits = have >= t.bytes, best_fits = best_have >= t.bytes;
      // A fitting texture beats one that must grow; among fitting ones the
      // smallest, among growing ones the largest (it grows least).
      if ((fits && !best_fits) || (fits && best_fits && have < best_have) ||
          (!fits && !best_fits && have > best_have)) {
        best = static_cast<int>(s);
      }
    }
    if (best < 0) {
      best = static_cast<int>(slot_last.size());
      slot_last.push_back(t.last);
      plan.slot_bytes.push_back(t.bytes);
      plan.slot_owner.push_back(i);
    }
    const size_t s = static_cast<size_t>(best);
    slot_last[s] = t.last;
    if (t.bytes > plan.slot_bytes[s]) {
      plan.slot_bytes[s] = t.bytes;
      plan.slot_owner[s] = i;
    }
    plan.slot[i] = best;
  }
  return plan;
}

std::vector<TensorLifetime> TensorLifetimes(
    const std::vector<Value>& values,
    const std::vector<const Dispatch*>& dispatches,
    const std::vector<bool>& excluded, size_t vec4_bytes) {
  std::vector<TensorLifetime> lifetimes(values.size());
  std::vector<bool> used(values.size(), false);
  auto eligible = [&](size_t id) {
    return values[id].kind != Value::Kind::kConstant &&
           values[id].storage_of < 0 && !excluded[id];
  };
  for (size_t step = 0; step < dispatches.size(); ++step) {
    for (const std::vector<ValueId>* ids :
         {&dispatches[step]->outputs, &dispatches[step]->inputs,
          &dispatches[step]->read_write}) {
      for (ValueId id : *ids) {
        const size_t root = static_cast<size_t>(StorageRoot(values, id));
        if (!eligible(root)) continue;
        TensorLifetime& t = lifetimes[root];
        const size_t bytes =
            static_cast<size_t>(values[static_cast<size_t>(id)].vec4_count()) *
            vec4_bytes;
        if (!used[root]) {
          used[root] = true;
          t.first = static_cast<int>(step);
        }
        t.last = static_cast<int>(step);
        t.bytes = std::max(t.bytes, bytes);
      }
    }
  }
  // A root's own size counts even when only its views are bound.
  for (size_t id = 0; id < values.size(); ++id) {
    if (used[id]) {
      lifetimes[id].bytes = std::max(
          lifetimes[id].bytes, static_cast<size_t>(values[id].vec4_count()) * vec4_bytes);
    }
  }
  return lifetimes;
}

}  // namespace tflite_gles
