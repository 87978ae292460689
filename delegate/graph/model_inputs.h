// Which TFLite constants are also graph inputs, read from the model itself.
//
// A graph input that carries a buffer is mapped read-only like any constant,
// yet the application still sets it (set_tensor writes into that buffer)
// and TFLite's builtin CPU kernels re-read it on every invoke. TFLite's C ABI
// does not say which tensors are graph inputs: checked against ai-edge-litert
// 2.3.0 and tflite-runtime 2.14 with a probe delegate (docs/reliability.md,
// "Graph inputs that carry a buffer"), such a tensor has every field of a
// constant (allocation kTfLiteMmapRo, data and `allocation` into the model,
// no dims_signature), DelegateParams::input_tensors and
// PreviewDelegatePartitioning list it as they list constants, and neither
// runtime exports TfLiteOpaqueContextGetInputs.
//
// What the runtime does guarantee: a constant's data pointer points into
// the model's flatbuffer, which stays alive and unchanged while the
// interpreter lives. FindModelInputs walks back from the constants to the
// flatbuffer's start (its "TFL3" identifier), reads the subgraphs' input
// lists, and accepts a subgraph only if every read-only tensor of the
// context points exactly where that subgraph's buffers are. Every read is
// bounds-checked against a readable mapping of the process
// (/proc/self/maps), so a model that is not where it should be, or
// garbage, gives "unknown", never a fault.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "delegate/abi/tflite_abi.h"
#include "egl/status.h"

namespace tflite_gles {

struct ModelInputs {
  // false: the model could not be found or did not match the context
  // (`why` says which); then no tensor is known to be a graph input.
  bool known = false;
  // The context subgraph's graph inputs that carry constant data.
  std::set<int> constant_inputs;
  std::string why;
};

// Searches the readable mapping that holds the context's constants.
ModelInputs FindModelInputs(const abi::Context* context);

// The same search within [begin, end) only, starting below `lowest` (the
// lowest constant data pointer); for tests that hold the model's bytes.
ModelInputs FindModelInputsIn(const abi::Context* context, const uint8_t* begin,
                              const uint8_t* end, const uint8_t* lowest);

// OK while every input (tensor index, dims) still has the shape a delegated
// partition was built for; otherwise an error saying how to resize.
Status CheckInputShapesUnchanged(
    const abi::Context* context, const std::vector<std::pair<int, std::vector<int>>>& built);

}  // namespace tflite_gles
