// Copies into memory the GPU reads over the bus (persistently mapped upload
// staging) with non-temporal stores: the CPU writes whole cache lines
// straight to memory instead of reading each line in first (read for
// ownership) and leaving it dirty in its caches, where the GPU's reads
// would then have to snoop it out. Chosen per device
// (DeviceProfile::streaming_upload); docs/perf/log.md has the measurement.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tflite_gles {

// memcpy with non-temporal stores for the 16-byte-aligned bulk (memcpy for
// a misaligned head and the tail), then a store fence: the bytes are in
// memory, visible to commands issued after the call. Falls back to memcpy
// where the CPU has no streaming stores.
void StreamingCopy(void* dst, const void* src, size_t bytes);

// FloatsToHalves (delegate/runtime/half_convert.h) whose stores stream the same way.
void FloatsToHalvesStreaming(const float* in, uint16_t* out, size_t count);

}  // namespace tflite_gles
