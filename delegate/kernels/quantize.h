// QUANTIZE, DEQUANTIZE of activations and the quantization simulator step of
// quantized models (delegate/graph/quantization.h explains the float view).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "delegate/graph/graph.h"
#include "delegate/graph/quantization.h"

namespace tflite_gles {

// The defines that make elementwise.comp's unary step the simulator of `q`
// (OP_FAKE_QUANT: round to the grid and clamp to the range; with `round`
// false OP_QUANT_CLAMP, the clamp alone); delegate/passes/fusion.cc folds
// either into the producer's store.
// `round_stored_integers`: round q itself, not q - zero_point (ops whose
// integer kernel averages the stored integers: AVERAGE_POOL_2D).
void AddQuantizationSimulatorDefines(const QuantParams& q, bool round,
                                     bool round_stored_integers,
                                     std::map<std::string, std::string>& defines);

// The define that rounds a float partition input that only QUANTIZE reads
// where the upload converts it (layout_convert.comp, or conv2d.comp's
// BHWC_INPUT read), and its expression for the QUANTIZE's params `q`:
// TFLite's vector-path rounding (ew_quantize_input).
constexpr char kInputQuantDefine[] = "INPUT_QUANT(x)";
std::string QuantizeInputExpression(const QuantParams& q);

// After `node` was built: every uint8/int8 output is rounded to its grid and
// clamped to its range (with GraphContext::quantization().simulator off:
// clamped only) by one elementwise dispatch that writes the tensor's new
// Value (GraphBuilder::Rebind); later readers see the simulated values.
// Left out where the op only moves values already on that grid. Returns the
// number of steps added.
StatusOr<int> SimulateQuantizedOutputs(const NodeView& node, GraphBuilder& builder);

// Float partition inputs that only QUANTIZE nodes of the partition (`nodes`)
// read, all to the same params, and that are no partition output: rounded on
// the CPU at upload (GraphBuilder::QuantizeOnUpload).
Status FindQuantizedUploads(abi::Context* context, const std::vector<int>& nodes,
                            const std::vector<int>& inputs,
                            const std::vector<int>& outputs, GraphBuilder& builder);

}  // namespace tflite_gles
