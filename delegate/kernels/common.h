// Checks and helpers shared by the kernels in delegate/kernels/.
#pragma once

#include <map>
#include <string>

#include "delegate/graph/graph.h"
#include "delegate/abi/node_view.h"
#include "delegate/graph/quantization.h"
#include "delegate/abi/tflite_builtin.h"

namespace tflite_gles::kernels {

// The node's op version is at most `max_version`: a newer version may mean
// semantics the kernel does not know, so it stays on the CPU.
Status CheckVersion(const NodeView& node, int max_version);

// Input/output counts within [min, max].
Status CheckArity(const NodeView& node, int min_inputs, int max_inputs,
                  int outputs);

// Every non-constant input and every output is float32, or uint8/int8 with
// sound per-tensor params where quantized models are allowed and the op has
// a quantized form (delegate/graph/quantization.h), with a GPU shape (rank <= 4,
// static, non-zero dims); quantized constants have sound params.
Status CheckFloatTensors(const NodeView& node, const GraphContext& graph);

// Input `i` is a constant (or foldable) tensor.
Status CheckConstantInput(const NodeView& node, const GraphContext& graph,
                          int i, const char* what);

// Input `i` is not constant: an op over constants only is folded by the
// converter, and such a node is left to the CPU.
Status CheckNotConstantInput(const NodeView& node, const GraphContext& graph,
                             int i);

// The shape of a tensor; call only after a check passed.
Shape4 ShapeOf(const abi::Tensor& tensor);

// The shader define selecting a fused activation ("" for none), or an error
// for activations the shaders do not implement.
StatusOr<std::string> ActivationDefine(abi::FusedActivation activation);

// Adds OUT_B/OUT_H/OUT_W/OUT_S/OUT_C for `shape`.
void AddShapeDefines(const std::string& prefix, const Shape4& shape,
                     std::map<std::string, std::string>& defines);

// A 1-D dispatch with one invocation per element (vec4) of `shape`.
Dispatch ElementwiseDispatch(const std::string& shader, const Shape4& shape,
                             const DeviceProfile& device);

// "1.5" style literal for a float, exact enough to round-trip (GLSL float).
std::string FloatLiteral(float value);

// Loop iterations one invocation may run, counting every pass through every
// loop (nested ones included). Mesa llvmpipe silently stops all loops of an
// invocation after 65535 of them in total (gallivm's loop limiter), so a
// kernel whose loops could run longer must split its work or decline. The
// margin covers small helper loops the estimate leaves out.
constexpr long long kMaxLoopIterationsPerInvocation = 60000;

}  // namespace tflite_gles::kernels
