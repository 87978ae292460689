// Writes what the delegate sees of a graph through its own ABI declarations
// (tensors, nodes, decoded builtin parameters) as JSON. Set the environment
// variable TFLITE_GLES_DUMP_GRAPH=path to get it at ModifyGraphWithDelegate.
// tests/python/test_abi.py compares the dump with what the real runtime and
// the model file say, which proves our struct layouts match the runtime.
#pragma once

#include <string>

#include "delegate/abi/tflite_abi.h"
#include "egl/status.h"

namespace tflite_gles {

std::string DumpGraphJson(abi::Context* context);

// Writes the dump to `path`; errors say what failed.
Status WriteGraphDump(abi::Context* context, const std::string& path);

}  // namespace tflite_gles
