// TFLite builtin operator codes and the builtin parameter structs that the
// runtime hands to kernels (and to delegates, through TfLiteNode::builtin_data
// via abi::Node::builtin_data).
//
// Like tflite_abi.h, these are our own declarations of someone else's binary
// interface: the enum values and the struct layouts are facts fixed by the
// TFLite runtime, the names and comments are ours. Nothing here may be
// "improved": a field moved, retyped or dropped silently corrupts every
// parameter we read. Upstream only ever appends fields at the end of a params
// struct, so a newer runtime stays compatible with the prefix we declare.
//
// Checked against (layouts, enum values, op codes):
//   google-ai-edge/LiteRT @ f67457790c9c2ab67347d6fe53270e8d3df20868
//   (main, 2026-08-21; these files are identical at tag v2.2.0, 145c7523ff08):
//     tflite/builtin_ops.h                        (op codes)
//     tflite/converter/core/c/builtin_op_data.h   (params; re-exported by
//                                                  tflite/core/c/builtin_op_data.h)
//     tflite/converter/core/c/tflite_types.h      (TfLiteType, used by fields)
//     tflite/core/api/flatbuffer_conversions.cc   (which op gets which struct,
//                                                  and which get none)
//   and the op list against the schema shipped in PyPI ai-edge-litert==2.3.0:
//     python3 -c "from ai_edge_litert import schema_py_generated as s;
//                 print(vars(s.BuiltinOperator))"    (one line)
//   (210 codes, 0..209, every name and value equal to builtin_ops.h).
//
// Layout notes for LP64 (x86-64, aarch64; the only targets we build for):
//   * Every upstream enum used as a field is a plain C enum with non-negative
//     enumerators: 4 bytes, 4-aligned. We declare them `: int32_t`, same size
//     and alignment. TfLiteType fields are abi::Type (tflite_abi.h).
//   * C `bool` and C++ `bool` are both 1 byte.
//   * Upstream "empty" params structs hold one `char` (size 1). For PAD,
//     PADV2, TRANSPOSE, SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND the runtime
//     does not allocate them at all: builtin_data is nullptr for those ops.
//   * If an operator in the model has no options table, the runtime still
//     allocates the struct (value-initialised, i.e. zeroed) for the ops that
//     have one, so e.g. ReshapeParams::num_dimensions == 0 is possible.
//
// The static_asserts after each struct pin its size and the offsets of its
// fields; they were computed by hand from the upstream layout and are
// the thing to re-check when moving to a newer runtime.
//
// In three parts, each in upstream order: the op codes and their names
// (tflite_builtin_ops.h), the enums and the first params structs
// (tflite_builtin_params.h), the rest of the params structs
// (tflite_builtin_params2.h). Include this header, not the parts.
#pragma once

#include "tflite_builtin_ops.h"
#include "tflite_builtin_params.h"
#include "tflite_builtin_params2.h"
