// Per-device tuning, in one place: what DeviceProfile fields depend on the
// GPU (keyed on its renderer) rather than on the user's options.
#pragma once

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Fills the tuning fields of `device` for `device->gpu`. The environment
// variable TFLITE_GLES_MIN_INVOCATIONS (an integer >= 0) overrides
// DeviceProfile::min_invocations, for measuring sweeps (bench/nvidia_sweep.sh);
// TFLITE_GLES_SHARED_MEMORY_GEMM (0 or 1) overrides
// DeviceProfile::shared_memory_gemm, for A/B runs and to test gemm.comp on
// llvmpipe; TFLITE_GLES_GEMM_TILE sets DeviceProfile::gemm_tile_override;
// TFLITE_GLES_FUSE_DEPTHWISE (0 or 1) overrides
// DeviceProfile::fuse_depthwise_into_gemm (which needs shared_memory_gemm);
// TFLITE_GLES_FUSE_MEAN and TFLITE_GLES_FUSE_SOFTMAX (0 or 1) likewise
// DeviceProfile::fuse_mean_into_gemm and fuse_softmax_into_gemm;
// TFLITE_GLES_SPECIALIZE_SHAPES (0 or 1) overrides
// DeviceProfile::specialize_shapes (1: shapes compiled into every program;
// 0: shapes as uniforms), for A/B runs.
void TuneForDevice(DeviceProfile* device);

// Whether tensors should be read through texture-buffer views rather than
// SSBOs on this GPU when the options leave it open (storage=auto).
bool PreferTextureBufferReads(const egl::GpuInfo& gpu);

// Whether fp16 storage is faster than fp32 on this GPU: where it is not,
// precision_loss_allowed keeps fp32 (unless memory is the first priority).
bool Fp16StoragePays(const egl::GpuInfo& gpu);

}  // namespace tflite_gles
