#include "delegate/graph/tensor_checks.h"

#include <string>

#include "delegate/abi/tflite_builtin.h"
#include "delegate/graph/partition_plan.h"

namespace tflite_gles {
namespace {

// Bytes per element of the types with a fixed size; 0 for the others
// (strings, resources, packed sub-byte types), which are not checked here.
int ElementBytes(abi::Type type) {
  switch (type) {
    case abi::kBool: case abi::kUInt8: case abi::kInt8:
    case abi::kFloat8E4M3FN: case abi::kFloat8E5M2:
      return 1;
    case abi::kInt16: case abi::kUInt16: case abi::kFloat16: case abi::kBFloat16:
      return 2;
    case abi::kFloat32: case abi::kInt32: case abi::kUInt32:
      return 4;
    case abi::kInt64: case abi::kUInt64: case abi::kFloat64: case abi::kComplex64:
      return 8;
    case abi::kComplex128:
      return 16;
    default:
      return 0;
  }
}

bool IsBinaryElementwise(int op) {
  switch (op) {
    case abi::kTfLiteBuiltinAdd: case abi::kTfLiteBuiltinSub:
    case abi::kTfLiteBuiltinMul: case abi::kTfLiteBuiltinDiv:
    case abi::kTfLiteBuiltinMaximum: case abi::kTfLiteBuiltinMinimum:
    case abi::kTfLiteBuiltinPow: case abi::kTfLiteBuiltinSquaredDifference:
    case abi::kTfLiteBuiltinFloorDiv: case abi::kTfLiteBuiltinFloorMod:
    case abi::kTfLiteBuiltinLess: case abi::kTfLiteBuiltinGreater:
    case abi::kTfLiteBuiltinEqual: case abi::kTfLiteBuiltinNotEqual:
    case abi::kTfLiteBuiltinLogicalAnd: case abi::kTfLiteBuiltinLogicalOr:
    case abi::kTfLiteBuiltinPrelu:
      return true;
    default:
      return false;
  }
}

// Ops whose input 0 is a parameter (an axis, a shape) or may be a constant
// operand of an elementwise op, not the data the op computes on.
bool FirstInputMayBeConstant(int op) {
  return IsBinaryElementwise(op) || op == abi::kTfLiteBuiltinSplit ||
         op == abi::kTfLiteBuiltinTransposeConv ||
         op == abi::kTfLiteBuiltinDequantize ||
         op == abi::kTfLiteBuiltinConcatenation || op == abi::kTfLiteBuiltinPack;
}

// Inputs TFLite's kernels take as optional (-1): the bias of FULLY_CONNECTED
// and TRANSPOSE_CONV, PADV2's pad value, RESHAPE's shape operand, the LSTMs'
// optional weights and states. Everywhere else a -1 input is a missing
// tensor that the kernel would read.
bool MayBeOmitted(int op, int input) {
  switch (op) {
    case abi::kTfLiteBuiltinFullyConnected: return input == 2;
    case abi::kTfLiteBuiltinTransposeConv: return input == 3;
    case abi::kTfLiteBuiltinPadv2: return input == 2;
    case abi::kTfLiteBuiltinReshape: return input == 1;
    case abi::kTfLiteBuiltinLstm:
    case abi::kTfLiteBuiltinUnidirectionalSequenceLstm:
    case abi::kTfLiteBuiltinBidirectionalSequenceLstm:
      return input > 0;
    default:
      return false;
  }
}

long long Elements(const abi::IntArray* dims) {
  if (dims == nullptr) return -1;
  long long count = 1;
  for (int d = 0; d < dims->size; ++d) {
    if (dims->data[d] < 0) return -1;
    count *= dims->data[d];
    if (count > (1LL << 40)) return -1;
  }
  return count;
}

std::string TensorRole(const char* role, int i, int index) {
  return std::string(role) + " " + std::to_string(i) + " (tensor " +
         std::to_string(index) + ")";
}

// Whether TFLite has a CPU kernel for `node` (true where the context cannot
// say: only inside the delegate's Prepare does it answer).
bool HasCpuKernelOrUnknown(const NodeView& node) {
  abi::Context* context = node.context();
  abi::Node* unused = nullptr;
  abi::Registration* registration = nullptr;
  if (context->GetNodeAndRegistration == nullptr ||
      context->GetNodeAndRegistration(context, node.index(), &unused, &registration) !=
          abi::kOk ||
      registration == nullptr) {
    return true;
  }
  return HasCpuKernel(*registration);
}

}  // namespace

bool ConstantReadAsData(const abi::Context* context, const abi::Node& node, int op,
                        int input) {
  if (input < 0 || input >= node.inputs->size) return false;
  const int index = node.inputs->data[input];
  if (index < 0 || static_cast<size_t>(index) >= context->tensors_size ||
      !IsConstantTensor(context->tensors[index])) {
    return false;
  }
  if (op == abi::kTfLiteBuiltinConcatenation || op == abi::kTfLiteBuiltinPack) {
    return true;
  }
  if (IsBinaryElementwise(op)) {
    if (op == abi::kTfLiteBuiltinPrelu && input == 1) return false;  // alpha: a weight
    if (node.outputs->size < 1 || node.outputs->data[0] < 0 ||
        static_cast<size_t>(node.outputs->data[0]) >= context->tensors_size) {
      return false;
    }
    // A one-element operand of a one-element output is data too (a MUL of
    // two scalars): only a smaller operand is a broadcast weight.
    const long long elements = Elements(context->tensors[index].dims);
    return elements >= 1 &&
           elements == Elements(context->tensors[node.outputs->data[0]].dims);
  }
  // TFLite computes RESHAPE and SQUEEZE of a constant once, at Prepare
  // (their output becomes a persistent constant): the GPU bakes it too.
  if (op == abi::kTfLiteBuiltinReshape || op == abi::kTfLiteBuiltinSqueeze ||
      op == abi::kTfLiteBuiltinExpandDims) {
    return false;
  }
  return input == 0 && !FirstInputMayBeConstant(op);
}

bool GraphInputReadAsData(int op, int input) {
  return IsBinaryElementwise(op) && !(op == abi::kTfLiteBuiltinPrelu && input == 1);
}

long long RequiredBytes(abi::Type type, const abi::IntArray* dims) {
  const int element = ElementBytes(type);
  const long long count = Elements(dims);
  if (element == 0 || count < 0) return -1;
  return count * element;
}

Status CheckNodeTensors(const NodeView& node, const GraphContext& graph) {
  const abi::Context* context = graph.context();
  const long long tensors = static_cast<long long>(context->tensors_size);
  for (int i = 0; i < node.num_inputs(); ++i) {
    const int index = node.input_index(i);
    if (index == -1 && MayBeOmitted(node.op(), i)) continue;  // the kernel decides
    if (index == -1) {
      return Status::Error("input " + std::to_string(i) +
                           " is absent (-1), and TFLite's kernel reads it");
    }
    if (index < 0 || index >= tensors) {
      return Status::Error("input " + std::to_string(i) + " names tensor " +
                           std::to_string(index) + ", the graph has " +
                           std::to_string(tensors));
    }
  }
  for (int o = 0; o < node.num_outputs(); ++o) {
    const int index = node.output_index(o);
    if (index < 0 || index >= tensors) {
      return Status::Error("output " + std::to_string(o) + " names tensor " +
                           std::to_string(index) + ", the graph has " +
                           std::to_string(tensors));
    }
    for (int other = 0; other < o; ++other) {
      if (node.output_index(other) == index) {
        return Status::Error("outputs " + std::to_string(other) + " and " +
                             std::to_string(o) + " are the same tensor");
      }
    }
    const abi::Tensor& tensor = node.output(o);
    if (tensor.allocation_type == abi::kMmapRo ||
        tensor.allocation_type == abi::kPersistentRo) {
      return Status::Error(TensorRole("output", o, index) +
                           " carries constant data: TFLite maps it read-only, "
                           "and its CPU kernel cannot write it either");
    }
  }
  int inputs = 0, constants = 0;
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    ++inputs;
    const abi::Tensor& tensor = node.input(i);
    if (!IsConstantTensor(tensor)) continue;
    ++constants;
    const long long required = RequiredBytes(tensor.type, tensor.dims);
    if (required >= 0 && static_cast<long long>(tensor.bytes) < required) {
      return Status::Error(TensorRole("input", i, node.input_index(i)) +
                           " holds " + std::to_string(tensor.bytes) +
                           " bytes; its shape needs " + std::to_string(required));
    }
  }
  for (int i = 0; i < node.num_inputs(); ++i) {
    const int index = node.input_index(i);
    if (node.has_input(i) && graph.IsGraphInputWithData(index) && graph.IsConstant(index)) {
      // TFLite's CPU kernel reads what the application sets (set_tensor
      // writes into the buffer); the GPU program would keep the values
      // it folded at init.
      return Status::Error(TensorRole("input", i, index) +
                           " is a graph input that carries a buffer: TFLite's "
                           "kernel reads what the application sets on every "
                           "invoke, the GPU would fold it once");
    }
  }
  if (node.op() == abi::kTfLiteBuiltinDequantize) return Status::Ok();
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (node.has_input(i) && IsConstantTensor(node.input(i)) &&
        node.input(i).type == abi::kFloat16) {
      // Models carry float16 weights behind a DEQUANTIZE; TFLite's float
      // kernels read a float16 constant handed to them directly as float32
      // (or refuse it): there is no answer to agree with.
      return Status::Error(TensorRole("input", i, node.input_index(i)) +
                           " is a float16 constant read without a DEQUANTIZE");
    }
  }
  // Whether or not the GPU would re-read some of them: TFLite folds some
  // such nodes at Prepare (RESHAPE, elementwise ops) and recomputes others
  // on every invoke, so only the CPU gives its own answer.
  // An op the CPU has no kernel for (MediaPipe's GPU-only custom ops) has no
  // CPU answer to follow: its inputs read as data are uploaded on every
  // invoke (GraphContext), so the GPU computes on what the application sets.
  if (inputs > 0 && constants == inputs && HasCpuKernelOrUnknown(node)) {
    return Status::Error("constant inputs only: the node computes a constant, "
                         "which TFLite's CPU kernel folds or recomputes from "
                         "tensors the application may set (a graph input that "
                         "carries a buffer looks like a constant); converters "
                         "fold such nodes");
  }
  return Status::Ok();
}

}  // namespace tflite_gles
