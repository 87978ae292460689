// GPU-side timing of compute dispatches with GL_EXT_disjoint_timer_query.
//
// A synchronous profile (glFinish before and after each dispatch, timed on
// the CPU) works everywhere but includes the driver's submission and wake-up
// latency, which on a discrete GPU (tens of microseconds per glFinish) can
// dwarf small kernels. Where the driver has timer queries (NVIDIA does; Mesa
// llvmpipe does not), each dispatch is bracketed by a GL_TIME_ELAPSED_EXT
// query instead, and the results are read once after the whole run, so the
// GPU is never stalled between dispatches.
#pragma once

#include <EGL/egl.h>
#include <GLES3/gl31.h>

#include <cstdint>
#include <vector>

#include "egl/status.h"

namespace tflite_gles::gl {

class GpuTimer {
 public:
  GpuTimer() = default;
  // A pool of `count` elapsed-time queries in the current context. Fails
  // (with the reason) if the context lacks GL_EXT_disjoint_timer_query or
  // eglGetProcAddress does not give its entry points.
  static StatusOr<GpuTimer> Create(int count);
  GpuTimer(GpuTimer&& other) noexcept { *this = std::move(other); }
  GpuTimer& operator=(GpuTimer&& other) noexcept;
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  ~GpuTimer() { Reset(); }

  int size() const { return static_cast<int>(queries_.size()); }
  // Brackets GPU work with query `index`; queries must not nest.
  Status Begin(int index) const;
  Status End() const;
  // Waits for queries 0..count-1 and returns their times in milliseconds.
  // Fails if the GPU reported a disjoint event (clock change, preemption)
  // during the measurement, since the times are then meaningless.
  StatusOr<std::vector<double>> ReadMilliseconds(int count) const;

  // Timestamps (the same pool, for InvokeTimeline): query `index` records the
  // GPU clock when the GPU has finished every command issued before it.
  Status Stamp(int index) const;
  // Waits for queries 0..count-1 (stamps) and returns their GPU clock
  // values in nanoseconds; fails on a disjoint event like ReadMilliseconds.
  StatusOr<std::vector<uint64_t>> ReadStamps(int count) const;
  // The GPU clock now (glGetInteger64v(GL_TIMESTAMP_EXT): it does not wait
  // for earlier commands), to place stamps on the CPU's time line.
  static StatusOr<int64_t> GpuClockNanoseconds();

 private:
  void Reset();
  Status CheckIndex(int index) const;
  Status CheckDisjoint() const;
  // The raw results of the first `count` queries (`what` names them in the
  // error for a bad count), then CheckDisjoint.
  StatusOr<std::vector<uint64_t>> ReadResults(int count, const char* what) const;
  std::vector<GLuint> queries_;
  EGLContext context_ = EGL_NO_CONTEXT;
};

}  // namespace tflite_gles::gl
