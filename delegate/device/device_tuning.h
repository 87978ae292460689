// Per-device tuning, in one place: what DeviceProfile fields depend on the
// GPU (keyed on its renderer) rather than on the user's options.
#pragma once

#include "delegate/device/developer_overrides.h"
#include "delegate/graph/graph.h"

namespace tflite_gles {

// Fills the tuning fields of `device` for `device->gpu`, then applies the
// developer overrides that are set (developer_overrides.h; the list is
// docs/developer_overrides.md): fields derived from an overridden one
// (fuse_depthwise_into_gemm from shared_memory_gemm, ...) follow it.
void TuneForDevice(DeviceProfile* device, const DeveloperOverrides& overrides);
// The same with the overrides read from the environment now (tests that
// build a DeviceProfile themselves).
void TuneForDevice(DeviceProfile* device);

// The convolution kernels' part of TuneForDevice (conv_tuning.cc), called
// from it in order: it reads choices made before it (fp16, the GPU).
void TuneConvolutionKernels(DeviceProfile* device, const DeveloperOverrides& o);

// Whether tensors should be read through texture-buffer views rather than
// SSBOs on this GPU when the options leave it open (storage=auto).
bool PreferTextureBufferReads(const egl::GpuInfo& gpu);

// The storage of tensors, in one place: `storage` is a TfLiteGlesStorage
// (the option, or TFLITE_GLES_X_STORAGE); auto takes what the device
// measured best (PreferRgbaTextures, PreferTextureBufferReads). Sets
// rgba_textures, texture_buffer_reads and staging_texture_reads; texture-
// buffer reads asked for on a GPU without texture buffers become SSBO reads
// (the delegate refuses that option before).
void ChooseStorage(DeviceProfile* device, int storage);

// Whether tensors should live in 2D RGBA textures (egl/tensor_texture.h)
// on this GPU when the options leave the storage open (storage=auto).
bool PreferRgbaTextures(const egl::GpuInfo& gpu);

// Whether a texture buffer holds the tensors of common models on this GPU
// (max_texture_buffer_texels): the minimum for texture-buffer reads when
// the options leave the read path open, and for staging reads.
bool TextureBuffersHoldTensors(const egl::GpuInfo& gpu);

// Keeps the choices that bind many buffers per dispatch within the GPU's
// limits (DeviceProfile::max_dispatch_buffers and the fusions that exceed
// it); the last step of TuneForDevice, after the overrides, since a limit is
// not a preference.
void FitDeviceLimits(DeviceProfile* device);

// Whether fp16 storage is faster than fp32 on this GPU: where it is not,
// precision_loss_allowed keeps fp32 (unless memory is the first priority).
bool Fp16StoragePays(const egl::GpuInfo& gpu);

}  // namespace tflite_gles
