#include "delegate/runtime/invoke_timeline.h"

#include <algorithm>
#include <cstdio>

namespace tflite_gles {

void InvokeTimeline::Configure(bool cpu_phases, bool gpu_timeline,
                               bool gpu_clock_usable,
                               std::vector<std::string> labels) {
  cpu_phases_ = cpu_phases || gpu_timeline;
  gpu_timeline_ = false;
  labels_ = std::move(labels);
  if (!gpu_timeline) return;
  if (!gpu_clock_usable) {
    std::fprintf(stderr,
                 "WARNING: tflite-gles: TFLITE_GLES_X_TIMELINE: this driver's timer "
                 "queries do not time compute work; reporting CPU phases only\n");
    return;
  }
  auto timer = gl::GpuTimer::Create(static_cast<int>(labels_.size()) + 1);
  if (!timer.ok()) {
    std::fprintf(stderr,
                 "WARNING: tflite-gles: TFLITE_GLES_X_TIMELINE: %s; reporting CPU "
                 "phases only\n",
                 timer.status().message().c_str());
    return;
  }
  stamps_ = std::move(*timer);
  gpu_timeline_ = true;
  sum_gpu_.assign(labels_.size() + 1, 0.0);
  issued_.assign(labels_.size(), 0.0);
  sum_issued_.assign(labels_.size(), 0.0);
  skipped_.assign(labels_.size(), false);
}

double InvokeTimeline::MicrosSinceStart(Clock::time_point t) const {
  return std::chrono::duration<double, std::micro>(t - start_).count();
}

Status InvokeTimeline::Start() {
  if (!enabled()) return Status::Ok();
  if (gpu_timeline_) {
    // The previous invoke waited for its readback, so the GPU is idle and
    // its clock now is the CPU's now.
    TFG_ASSIGN_OR_RETURN(gpu_clock_at_start_, gl::GpuTimer::GpuClockNanoseconds());
  }
  start_ = Clock::now();
  stamped_ = 0;
  waited_ = 0;  // stays 0 where no fence is waited for (banded readbacks wait inside)
  std::fill(skipped_.begin(), skipped_.end(), false);
  return Status::Ok();
}

Status InvokeTimeline::Uploaded() {
  if (!enabled()) return Status::Ok();
  uploaded_ = MicrosSinceStart(Clock::now());
  if (gpu_timeline_) {
    TFG_RETURN_IF_ERROR(stamps_.Stamp(0));
    stamped_ = 1;
  }
  return Status::Ok();
}

Status InvokeTimeline::Dispatched(int step) {
  if (!gpu_timeline_) return Status::Ok();
  issued_[static_cast<size_t>(step)] = MicrosSinceStart(Clock::now());
  TFG_RETURN_IF_ERROR(stamps_.Stamp(step + 1));
  ++stamped_;
  return Status::Ok();
}

Status InvokeTimeline::Skipped(int step) {
  if (!gpu_timeline_) return Status::Ok();
  TFG_RETURN_IF_ERROR(Dispatched(step));
  skipped_[static_cast<size_t>(step)] = true;
  return Status::Ok();
}

Status InvokeTimeline::Submitted() {
  if (!enabled()) return Status::Ok();
  submitted_ = MicrosSinceStart(Clock::now());
  return Status::Ok();
}

void InvokeTimeline::Waited() {
  if (enabled()) waited_ = MicrosSinceStart(Clock::now());
}

Status InvokeTimeline::Done() {
  if (!enabled()) return Status::Ok();
  const double done = MicrosSinceStart(Clock::now());
  if (gpu_timeline_) {
    if (stamped_ != stamps_.size()) return Status::Ok();
    auto read = stamps_.ReadStamps(stamps_.size());
    if (!read.ok()) {
      // The outputs are fine; only this invoke's marks are lost.
      std::fprintf(stderr, "WARNING: tflite-gles: %s\n", read.status().message().c_str());
      return Status::Ok();
    }
    const std::vector<uint64_t>& stamps = *read;
    for (size_t i = 0; i < stamps.size(); ++i) {
      sum_gpu_[i] +=
          (static_cast<double>(stamps[i]) - static_cast<double>(gpu_clock_at_start_)) * 1e-3;
    }
    for (size_t i = 0; i < issued_.size(); ++i) sum_issued_[i] += issued_[i];
  }
  sum_uploaded_ += uploaded_;
  sum_submitted_ += submitted_;
  sum_done_ += done;
  sum_waited_ += waited_ > 0 ? waited_ : done;
  if (++invokes_ == kReportEvery) {
    Report();
    invokes_ = 0;
    sum_uploaded_ = sum_submitted_ = sum_done_ = sum_waited_ = 0;
    std::fill(sum_gpu_.begin(), sum_gpu_.end(), 0.0);
    std::fill(sum_issued_.begin(), sum_issued_.end(), 0.0);
  }
  return Status::Ok();
}

void InvokeTimeline::Report() {
  const double n = kReportEvery;
  std::fprintf(stderr,
               "INFO: tflite-gles: mean of %d invokes: upload %.1f us, upload + "
               "submit %.1f us, wait + readback %.1f us (%zu dispatches)\n",
               kReportEvery, sum_uploaded_ / n, sum_submitted_ / n,
               (sum_done_ - sum_submitted_) / n,
               labels_.size() - static_cast<size_t>(
                                    std::count(skipped_.begin(), skipped_.end(), true)));
  if (!gpu_timeline_) return;
  std::fprintf(stderr,
               "INFO: tflite-gles: time line, mean of %d invokes, us from the start "
               "of the invoke: CPU uploaded %.1f, issued the last dispatch %.1f, "
               "done %.1f; GPU past the uploads %.1f, finished the last dispatch "
               "%.1f; CPU past the readback fence %.1f\n",
               kReportEvery, sum_uploaded_ / n, sum_submitted_ / n, sum_done_ / n,
               sum_gpu_[0] / n, sum_gpu_.back() / n, sum_waited_ / n);
  for (size_t i = 0; i < labels_.size(); ++i) {
    if (skipped_[i]) continue;
    std::fprintf(stderr,
                 "INFO: tflite-gles:   %3zu %-40s %7.1f us, issued at %7.1f, done at %7.1f\n",
                 i, labels_[i].c_str(), (sum_gpu_[i + 1] - sum_gpu_[i]) / n,
                 sum_issued_[i] / n, sum_gpu_[i + 1] / n);
  }
}

}  // namespace tflite_gles
