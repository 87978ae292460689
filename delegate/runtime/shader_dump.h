// TFLITE_GLES_X_DUMP_SHADERS (DeviceProfile::dump_shaders): one file per
// step, its assembled source then comment lines with the grid, the flops,
// the uniform block (binding gl::kShaderUniformBinding) and the bindings, so
// that bench/gap_probe.py can time the delegate's exact program outside it.
// Best effort: a debug aid, silent when the folder cannot be written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

void DumpStep(const std::string& folder, const uint32_t (&groups)[3],
              const Dispatch& dispatch, const std::string& source,
              const std::vector<int32_t>& uniforms);

}  // namespace tflite_gles
