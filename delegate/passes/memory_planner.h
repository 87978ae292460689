// Shares GPU memory between the tensors of a partition by lifetime.
//
// Every intermediate tensor is live from the first dispatch that touches it
// to the last one (inclusive); two tensors whose lifetimes do not overlap can
// occupy the same bytes of one arena buffer. PlanMemory places the
// largest tensors first, each at the best-fitting gap among the tensors
// already placed that are live at the same time (the "greedy by size"
// strategy TFLite's GPU delegates also use). Pure arithmetic, no GL, so it is
// unit-tested on random lifetimes.
#pragma once

#include <cstddef>
#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

struct TensorLifetime {
  size_t bytes = 0;  // 0: not placed (the tensor needs no storage)
  int first = 0;     // first dispatch that reads or writes it
  int last = 0;      // last one; inclusive, so a tensor read by dispatch k
                     // never shares bytes with one that k writes
};

struct MemoryPlan {
  std::vector<size_t> offsets;   // per tensor, a multiple of the alignment
  size_t arena_bytes = 0;        // the buffer all tensors live in
  size_t sum_bytes = 0;          // what one buffer per tensor would take
  size_t lower_bound_bytes = 0;  // max over dispatches of bytes live at once
  size_t alignment = 1;
  // Bytes tensor i occupies: its size rounded up to the alignment.
  size_t AlignedBytes(size_t bytes) const {
    return (bytes + alignment - 1) / alignment * alignment;
  }
};

// True if the two lifetimes share a dispatch.
inline bool LifetimesOverlap(const TensorLifetime& a, const TensorLifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

// Places every tensor with bytes > 0. `alignment` (> 0) is what every offset
// must be a multiple of: the least common multiple of the SSBO and texture
// buffer offset alignments and the texel size. Sizes, sums and the bound
// are counted in aligned bytes.
MemoryPlan PlanMemory(const std::vector<TensorLifetime>& tensors,
                            size_t alignment);

// Tensors in RGBA textures (DeviceProfile::rgba_textures) cannot share a
// byte arena: a texture is one object. They share whole textures instead,
// one tenant at a time: a tensor takes a texture whose tenants' lifetimes
// all ended before its first dispatch, and since shaders address a texture
// by its own width (egl/tensor_texture.h), any texture of enough texels
// holds any tensor. `slot` is the texture of each tensor (-1 where bytes is
// 0), `slot_bytes` the most its tenants need, `slot_owner` the tenant that
// needs it (whose shape gives the texture its rows).
struct TexturePlan {
  std::vector<int> slot;
  std::vector<size_t> slot_bytes;
  std::vector<size_t> slot_owner;
};

// Greedy in order of first use: the free texture that fits most tightly,
// else the largest free one (which grows), else a new one. `share` false:
// a texture per tensor.
TexturePlan PlanTextures(const std::vector<TensorLifetime>& tensors, bool share);

// The lifetimes of a partition's tensors over its dispatches, in bytes of
// `vec4_bytes` per vec4. Tensors that may share the arena: every Value that
// is not a constant, not a view and not `excluded` (staging buffers, which
// the CPU reads and writes outside the dispatches), and that some dispatch
// uses; a view's uses count for its root, and the root is sized for the
// largest of them. Others get bytes = 0.
std::vector<TensorLifetime> TensorLifetimes(
    const std::vector<Value>& values,
    const std::vector<const Dispatch*>& dispatches,
    const std::vector<bool>& excluded, size_t vec4_bytes);

}  // namespace tflite_gles
