// The tensor contract of a node, checked before any kernel looks at it: every
// tensor the delegate will read or write is what TFLite will read or write
// (index, allocation, constant or not, byte size for the shape and type).
// A mismatch declines the node with the reason; TFLite's CPU kernel then
// does what it does with it (run, or refuse the model as it would without
// the delegate).
#pragma once

#include "delegate/abi/node_view.h"
#include "delegate/graph/graph.h"
#include "egl/status.h"

namespace tflite_gles {

// True where input `input` of `node` is a TFLite constant read as the data
// the op computes on: input 0 of a convolution, pool, reshape, unary op...;
// any operand of a concatenation; an elementwise operand as large as the
// output. TFLite's CPU kernels re-read such a tensor on every invoke, and it
// may be a graph input that carries a buffer (the application still sets
// it, and the CPU answer follows): GraphContext treats it as a partition
// input, uploaded on every invoke, not as a constant. Weights, biases,
// broadcast operands and parameters stay constants.
bool ConstantReadAsData(const abi::Context* context, const abi::Node& node, int op,
                        int input);

// True where input `input` of an `op` node, if it is a graph input that
// carries a buffer, is read on every invoke like the data it is (binary
// elementwise operands but PRELU's alpha: the kernels take a runtime
// broadcast operand as they take a constant one). Other readers would fold
// it once; CheckNodeTensors declines them.
bool GraphInputReadAsData(int op, int input);

// Bytes TFLite needs for `dims` of `type` (what it requires of a constant's
// buffer at load), or -1 for a type without a fixed element size or dims
// that cannot be (negative, overflowing).
long long RequiredBytes(abi::Type type, const abi::IntArray* dims);

// OK, or why the node's tensors are not what a GPU partition can take:
//  * an input index other than -1 (optional) or an output index outside the
//    graph's tensors, and an output listed twice;
//  * a constant whose buffer is shorter than its shape needs;
//  * an output that carries constant data (TFLite maps it read-only: the
//    CPU kernel cannot resize or write it either);
//  * a float16 constant read by any op but DEQUANTIZE (TFLite's float
//    kernels would read it as float32 or refuse it);
//  * a graph input that carries a buffer, read where the GPU would fold it
//    (a weight, bias, alpha, parameter) while TFLite's kernel re-reads it;
//  * a node whose inputs are all constants baked into the GPU program (the
//    CPU recomputes it on every invoke; converters fold such nodes).
Status CheckNodeTensors(const NodeView& node, const GraphContext& graph);

}  // namespace tflite_gles
