// PartitionRuntime, readback fusion (delegate/passes/readback_fusion.h): a
// model output's producer writes its readback staging itself and the layout
// conversion after it is skipped, while the CPU reads the output back. The
// original steps stay in steps_ (the memory plan and the barriers are
// theirs; the tensor keeps its arena range, unwritten while fused), so that
// a GPU binding of the output (runtime_gpu_io.cc, runtime_texture_io.cc)
// finds the tensor and its conversion as it would without the fusion.
// A fused output crosses whole, or with DeviceProfile::fused_readback_bands
// in row bands of the fused kernel's pixel groups (runtime_bands.cc).
#include <cstdio>

#include "delegate/passes/readback_fusion.h"
#include "delegate/runtime/runtime.h"

namespace tflite_gles {

void PartitionRuntime::PlanReadbackFusions(ProgramCache& programs) {
  if (!device_.fuse_readback) return;
  std::vector<const Dispatch*> dispatches;
  for (const Step& step : steps_) dispatches.push_back(&step.dispatch);
  for (const Transfer& t : downloads_) {
    if (t.direct || t.write_back || t.resize.active) continue;
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Dispatch& d = steps_[i].dispatch;
      if (d.shader != "layout_convert" || d.outputs.empty() || d.outputs[0] != t.buffer) {
        continue;
      }
      ReadbackFusion fusion;
      if (!PlanReadbackFusion(values_, dispatches, static_cast<int>(i), &fusion)) break;
      const Step& original = steps_[static_cast<size_t>(fusion.producer)];
      StatusOr<Step> made = MakeStep(std::move(fusion.fused), programs, &original);
      if (!made.ok()) {
        // The unfused pair runs: slower, never wrong.
        std::fprintf(stderr, "WARNING: tflite-gles: readback fusion of tensor %d: %s\n",
                     t.tflite_index, made.status().message().c_str());
        break;
      }
      fused_readbacks_.push_back({t.tflite_index, fusion.producer, fusion.conversion,
                                  std::make_shared<Step>(std::move(*made))});
      ++fused_;
      break;
    }
  }
  ApplyReadbackFusions();
}

void PartitionRuntime::ApplyReadbackFusions(int unfused_output) {
  if (fused_readbacks_.empty()) return;
  skip_step_.resize(steps_.size(), 0);
  replaced_by_.resize(steps_.size(), nullptr);
  for (const FusedReadback& f : fused_readbacks_) {
    bool fused = f.tflite_index != unfused_output;
    for (const Transfer& t : downloads_) {
      if (t.tflite_index == f.tflite_index && !t.write_back && t.gpu_bound) fused = false;
    }
    const size_t producer = static_cast<size_t>(f.producer);
    const size_t conversion = static_cast<size_t>(f.conversion);
    // A binding's own replacement or skip (it saw the pair unfused) stays.
    if (fused && replaced_by_[producer] == nullptr && skip_step_[conversion] == 0) {
      replaced_by_[producer] = f.step.get();
      skip_step_[conversion] = kFusedReadbackSkip;
    } else if (!fused && replaced_by_[producer] == f.step.get()) {
      replaced_by_[producer] = nullptr;
      skip_step_[conversion] = 0;
    }
  }
}

bool PartitionRuntime::ReadbackFused(const Transfer& t) const {
  for (const FusedReadback& f : fused_readbacks_) {
    if (f.tflite_index == t.tflite_index && !t.write_back) return true;
  }
  return false;
}

}  // namespace tflite_gles
