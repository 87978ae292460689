// Where the time of an invoke goes, for tuning on real GPUs. Off by default,
// and then it reads no clocks and issues no GL calls.
//
// TFLITE_GLES_X_PHASES=1 (DeviceProfile::report_phases): CPU time of the
// upload, of issuing the dispatches and of waiting for the readback, as a
// mean of every 200 invokes on stderr.
//
// TFLITE_GLES_X_TIMELINE=1 (DeviceProfile::report_timeline): the same, plus
// the GPU's side on the same time line, from GL_EXT_disjoint_timer_query
// timestamps: when the GPU got past the uploads, when it finished each
// dispatch, and so what each dispatch costs inside the running pipeline
// (the gap between consecutive ends: kernel, barrier and launch together).
// Unlike bench/profile.py's elapsed-time brackets, one timestamp per
// dispatch does not stop the GPU between dispatches, and the CPU marks
// show whether the GPU waited for the CPU (it reaches a dispatch soon after
// the CPU issued it) or the CPU waited for the GPU. The GPU clock is tied
// to the CPU's once per invoke with glGetInteger64v(GL_TIMESTAMP_EXT).
// Where the driver has no timer queries, or on llvmpipe (its compute
// dispatches run inside glDispatchCompute, outside what its queries
// measure), a warning says so and only the CPU phases are reported.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "egl/gpu_timer.h"
#include "egl/status.h"

namespace tflite_gles {

class InvokeTimeline {
 public:
  // `labels`: one per dispatch, in order; `gpu_clock_usable`: the driver's
  // timer queries measure compute work (not llvmpipe).
  void Configure(bool cpu_phases, bool gpu_timeline, bool gpu_clock_usable,
                 std::vector<std::string> labels);
  bool enabled() const { return cpu_phases_ || gpu_timeline_; }

  // Marks, in the order Run passes them; each is a no-op when disabled.
  Status Start();
  Status Uploaded();
  Status Dispatched(int step);
  // A step a GPU binding skips (its readback conversion): stamped all the
  // same, so that the invoke has every stamp (without it, an invoke with a
  // skipped step was never counted and texture in + out printed no report:
  // bench/device_tex3.sh), and left out of the report's rows.
  Status Skipped(int step);
  Status Submitted();
  // The readback's fence wait returned: the CPU's readback work starts (the
  // report splits the time after the GPU into the wake and that work).
  void Waited();
  // After the readback: collects this invoke's GPU stamps, and prints the
  // means every kReportEvery invokes. A profiled invoke (no stamps) is left
  // out of the means.
  Status Done();

  static constexpr int kReportEvery = 200;

 private:
  using Clock = std::chrono::steady_clock;
  double MicrosSinceStart(Clock::time_point t) const;
  void Report();

  bool cpu_phases_ = false;
  bool gpu_timeline_ = false;
  std::vector<std::string> labels_;
  gl::GpuTimer stamps_;  // one for the uploads + one per dispatch
  Clock::time_point start_;
  int64_t gpu_clock_at_start_ = 0;
  double uploaded_ = 0, submitted_ = 0, waited_ = 0;
  int stamped_ = 0;  // stamps issued this invoke (none in a profiled run)
  // Sums over the invokes since the last report.
  int invokes_ = 0;
  double sum_uploaded_ = 0, sum_submitted_ = 0, sum_done_ = 0, sum_waited_ = 0;
  std::vector<double> sum_gpu_;     // per stamp: µs since Start
  std::vector<double> issued_;      // this invoke: CPU µs when step i was issued
  std::vector<double> sum_issued_;  // their sums
  std::vector<bool> skipped_;       // steps skipped in the last invoke
};

}  // namespace tflite_gles
