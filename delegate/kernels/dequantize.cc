// DEQUANTIZE of a constant: folded at init, no dispatch.
//
// MediaPipe ships weights as float16 constants behind DEQUANTIZE nodes, and
// dynamic-range models int8 ones. GraphContext already hands consumers the
// float values of such outputs (ConstantFloats), so the node only has to be
// claimed for the model to stay in one partition. When a CPU op also reads
// the output, the partition plan leaves the node on the CPU with it
// (graph/partition_plan.h); when the graph reads it, the partition runtime
// writes the folded values to it on every Invoke (ConstantOutput).
#include <string>

#include "delegate/kernels/registry.h"
#include "delegate/kernels/common.h"

namespace tflite_gles {
namespace {

constexpr int kMaxVersion = 6;

Status Check(const NodeView& node, const GraphContext& graph,
             const DeviceProfile& device) {
  TFG_RETURN_IF_ERROR(kernels::CheckVersion(node, kMaxVersion));
  TFG_RETURN_IF_ERROR(kernels::CheckArity(node, 1, 1, 1));
  if (!node.has_input(0)) return Status::Error("the input is missing");
  if (node.output(0).type != abi::kFloat32) {
    return Status::Error(std::string("output is ") +
                         TypeName(node.output(0).type) + ", expected float32");
  }
  if (!IsConstantTensor(node.input(0))) {
    return Status::Error("input is not a constant (only constant weights are "
                         "dequantized, at init)");
  }
  TFG_RETURN_IF_ERROR(
      GraphContext::DequantizedFloats(node.input(0), nullptr));
  if (DimsVector(node.output(0).dims) != DimsVector(node.input(0).dims)) {
    // TFLite resizes the output to the input's shape at Prepare, after the
    // delegate has seen the declared one: consumers checked against the
    // declaration would be built for a tensor that never exists.
    return Status::Error("the output is declared " +
                         kernels::ShapeOf(node.output(0)).ToString() +
                         ", TFLite makes it the input's shape " +
                         kernels::ShapeOf(node.input(0)).ToString());
  }
  if (!graph.IsConstant(node.output_index(0))) {
    return Status::Error("the output was not folded at init");
  }
  auto input_shape = ShapeFromDims(node.input(0).dims);
  if (!input_shape.ok()) return input_shape.status().WithContext("input");
  TFG_ASSIGN_OR_RETURN(std::vector<float> values,
                       graph.ConstantFloats(node.output_index(0)));
  if (static_cast<long long>(values.size()) != input_shape->elements()) {
    return Status::Error("the input holds " + std::to_string(values.size()) +
                         " values for shape " + input_shape->ToString());
  }
  return Status::Ok();
}

Status Build(const NodeView& node, GraphBuilder& builder) {
  // The output's Value is the folded constant; consumers in the partition
  // read it, and partition outputs are written from the CPU.
  return builder.Output(node, 0).status();
}

}  // namespace

void RegisterDequantizeKernels(KernelRegistry& registry) {
  KernelCandidate candidate{"dequantize_constant", Check, Build};
  candidate.summary =
      "A constant float16/float32 input, or int8/uint8/int16 with scale and "
      "zero point (per tensor or per channel), folded to float32 at init: no "
      "GPU work. Consumers on the GPU read the folded constant; if a CPU op "
      "also reads it, the node stays on the CPU with it; a graph output is "
      "written on every Invoke.";
  candidate.declines =
      "non-constant inputs (uint8/int8 activations go to "
      "dequantize_activation, kernels/quantize.cc); other input types (int4, "
      "blockwise quantization); bad quantization params; non-float32 outputs; "
      "newer versions";
  candidate.max_version = kMaxVersion;
  registry.AddBuiltin(abi::kTfLiteBuiltinDequantize, candidate);
}

}  // namespace tflite_gles
