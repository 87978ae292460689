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
#pragma once

#include <cstddef>
#include <cstdint>

#include "tflite_abi.h"

namespace tflite_gles::abi {

// ---------------------------------------------------------------------------
// Builtin operator codes (Registration::builtin_code,
// OperatorCode.builtin_code in the .tflite schema).
//
// Generated from the ai-edge-litert 2.3.0 schema and cross-checked name by
// name and value by value against tflite/builtin_ops.h. CUSTOM (32),
// DELEGATE (51) and PLACEHOLDER_FOR_GREATER_OP_CODES (127) are not real
// kernels. Codes above 127 are stored in the schema's extended field; at
// runtime builtin_code always holds the full value.
enum BuiltinOperator : int32_t {
  kTfLiteBuiltinAdd = 0,
  kTfLiteBuiltinAveragePool2d = 1,
  kTfLiteBuiltinConcatenation = 2,
  kTfLiteBuiltinConv2d = 3,
  kTfLiteBuiltinDepthwiseConv2d = 4,
  kTfLiteBuiltinDepthToSpace = 5,
  kTfLiteBuiltinDequantize = 6,
  kTfLiteBuiltinEmbeddingLookup = 7,
  kTfLiteBuiltinFloor = 8,
  kTfLiteBuiltinFullyConnected = 9,
  kTfLiteBuiltinHashtableLookup = 10,
  kTfLiteBuiltinL2Normalization = 11,
  kTfLiteBuiltinL2Pool2d = 12,
  kTfLiteBuiltinLocalResponseNormalization = 13,
  kTfLiteBuiltinLogistic = 14,
  kTfLiteBuiltinLshProjection = 15,
  kTfLiteBuiltinLstm = 16,
  kTfLiteBuiltinMaxPool2d = 17,
  kTfLiteBuiltinMul = 18,
  kTfLiteBuiltinRelu = 19,
  kTfLiteBuiltinReluN1To1 = 20,
  kTfLiteBuiltinRelu6 = 21,
  kTfLiteBuiltinReshape = 22,
  kTfLiteBuiltinResizeBilinear = 23,
  kTfLiteBuiltinRnn = 24,
  kTfLiteBuiltinSoftmax = 25,
  kTfLiteBuiltinSpaceToDepth = 26,
  kTfLiteBuiltinSvdf = 27,
  kTfLiteBuiltinTanh = 28,
  kTfLiteBuiltinConcatEmbeddings = 29,
  kTfLiteBuiltinSkipGram = 30,
  kTfLiteBuiltinCall = 31,
  kTfLiteBuiltinCustom = 32,
  kTfLiteBuiltinEmbeddingLookupSparse = 33,
  kTfLiteBuiltinPad = 34,
  kTfLiteBuiltinUnidirectionalSequenceRnn = 35,
  kTfLiteBuiltinGather = 36,
  kTfLiteBuiltinBatchToSpaceNd = 37,
  kTfLiteBuiltinSpaceToBatchNd = 38,
  kTfLiteBuiltinTranspose = 39,
  kTfLiteBuiltinMean = 40,
  kTfLiteBuiltinSub = 41,
  kTfLiteBuiltinDiv = 42,
  kTfLiteBuiltinSqueeze = 43,
  kTfLiteBuiltinUnidirectionalSequenceLstm = 44,
  kTfLiteBuiltinStridedSlice = 45,
  kTfLiteBuiltinBidirectionalSequenceRnn = 46,
  kTfLiteBuiltinExp = 47,
  kTfLiteBuiltinTopkV2 = 48,
  kTfLiteBuiltinSplit = 49,
  kTfLiteBuiltinLogSoftmax = 50,
  kTfLiteBuiltinDelegate = 51,
  kTfLiteBuiltinBidirectionalSequenceLstm = 52,
  kTfLiteBuiltinCast = 53,
  kTfLiteBuiltinPrelu = 54,
  kTfLiteBuiltinMaximum = 55,
  kTfLiteBuiltinArgMax = 56,
  kTfLiteBuiltinMinimum = 57,
  kTfLiteBuiltinLess = 58,
  kTfLiteBuiltinNeg = 59,
  kTfLiteBuiltinPadv2 = 60,
  kTfLiteBuiltinGreater = 61,
  kTfLiteBuiltinGreaterEqual = 62,
  kTfLiteBuiltinLessEqual = 63,
  kTfLiteBuiltinSelect = 64,
  kTfLiteBuiltinSlice = 65,
  kTfLiteBuiltinSin = 66,
  kTfLiteBuiltinTransposeConv = 67,
  kTfLiteBuiltinSparseToDense = 68,
  kTfLiteBuiltinTile = 69,
  kTfLiteBuiltinExpandDims = 70,
  kTfLiteBuiltinEqual = 71,
  kTfLiteBuiltinNotEqual = 72,
  kTfLiteBuiltinLog = 73,
  kTfLiteBuiltinSum = 74,
  kTfLiteBuiltinSqrt = 75,
  kTfLiteBuiltinRsqrt = 76,
  kTfLiteBuiltinShape = 77,
  kTfLiteBuiltinPow = 78,
  kTfLiteBuiltinArgMin = 79,
  kTfLiteBuiltinFakeQuant = 80,
  kTfLiteBuiltinReduceProd = 81,
  kTfLiteBuiltinReduceMax = 82,
  kTfLiteBuiltinPack = 83,
  kTfLiteBuiltinLogicalOr = 84,
  kTfLiteBuiltinOneHot = 85,
  kTfLiteBuiltinLogicalAnd = 86,
  kTfLiteBuiltinLogicalNot = 87,
  kTfLiteBuiltinUnpack = 88,
  kTfLiteBuiltinReduceMin = 89,
  kTfLiteBuiltinFloorDiv = 90,
  kTfLiteBuiltinReduceAny = 91,
  kTfLiteBuiltinSquare = 92,
  kTfLiteBuiltinZerosLike = 93,
  kTfLiteBuiltinFill = 94,
  kTfLiteBuiltinFloorMod = 95,
  kTfLiteBuiltinRange = 96,
  kTfLiteBuiltinResizeNearestNeighbor = 97,
  kTfLiteBuiltinLeakyRelu = 98,
  kTfLiteBuiltinSquaredDifference = 99,
  kTfLiteBuiltinMirrorPad = 100,
  kTfLiteBuiltinAbs = 101,
  kTfLiteBuiltinSplitV = 102,
  kTfLiteBuiltinUnique = 103,
  kTfLiteBuiltinCeil = 104,
  kTfLiteBuiltinReverseV2 = 105,
  kTfLiteBuiltinAddN = 106,
  kTfLiteBuiltinGatherNd = 107,
  kTfLiteBuiltinCos = 108,
  kTfLiteBuiltinWhere = 109,
  kTfLiteBuiltinRank = 110,
  kTfLiteBuiltinElu = 111,
  kTfLiteBuiltinReverseSequence = 112,
  kTfLiteBuiltinMatrixDiag = 113,
  kTfLiteBuiltinQuantize = 114,
  kTfLiteBuiltinMatrixSetDiag = 115,
  kTfLiteBuiltinRound = 116,
  kTfLiteBuiltinHardSwish = 117,
  kTfLiteBuiltinIf = 118,
  kTfLiteBuiltinWhile = 119,
  kTfLiteBuiltinNonMaxSuppressionV4 = 120,
  kTfLiteBuiltinNonMaxSuppressionV5 = 121,
  kTfLiteBuiltinScatterNd = 122,
  kTfLiteBuiltinSelectV2 = 123,
  kTfLiteBuiltinDensify = 124,
  kTfLiteBuiltinSegmentSum = 125,
  kTfLiteBuiltinBatchMatmul = 126,
  kTfLiteBuiltinPlaceholderForGreaterOpCodes = 127,
  kTfLiteBuiltinCumsum = 128,
  kTfLiteBuiltinCallOnce = 129,
  kTfLiteBuiltinBroadcastTo = 130,
  kTfLiteBuiltinRfft2d = 131,
  kTfLiteBuiltinConv3d = 132,
  kTfLiteBuiltinImag = 133,
  kTfLiteBuiltinReal = 134,
  kTfLiteBuiltinComplexAbs = 135,
  kTfLiteBuiltinHashtable = 136,
  kTfLiteBuiltinHashtableFind = 137,
  kTfLiteBuiltinHashtableImport = 138,
  kTfLiteBuiltinHashtableSize = 139,
  kTfLiteBuiltinReduceAll = 140,
  kTfLiteBuiltinConv3dTranspose = 141,
  kTfLiteBuiltinVarHandle = 142,
  kTfLiteBuiltinReadVariable = 143,
  kTfLiteBuiltinAssignVariable = 144,
  kTfLiteBuiltinBroadcastArgs = 145,
  kTfLiteBuiltinRandomStandardNormal = 146,
  kTfLiteBuiltinBucketize = 147,
  kTfLiteBuiltinRandomUniform = 148,
  kTfLiteBuiltinMultinomial = 149,
  kTfLiteBuiltinGelu = 150,
  kTfLiteBuiltinDynamicUpdateSlice = 151,
  kTfLiteBuiltinRelu0To1 = 152,
  kTfLiteBuiltinUnsortedSegmentProd = 153,
  kTfLiteBuiltinUnsortedSegmentMax = 154,
  kTfLiteBuiltinUnsortedSegmentSum = 155,
  kTfLiteBuiltinAtan2 = 156,
  kTfLiteBuiltinUnsortedSegmentMin = 157,
  kTfLiteBuiltinSign = 158,
  kTfLiteBuiltinBitcast = 159,
  kTfLiteBuiltinBitwiseXor = 160,
  kTfLiteBuiltinRightShift = 161,
  kTfLiteBuiltinStablehloLogistic = 162,
  kTfLiteBuiltinStablehloAdd = 163,
  kTfLiteBuiltinStablehloDivide = 164,
  kTfLiteBuiltinStablehloMultiply = 165,
  kTfLiteBuiltinStablehloMaximum = 166,
  kTfLiteBuiltinStablehloReshape = 167,
  kTfLiteBuiltinStablehloClamp = 168,
  kTfLiteBuiltinStablehloConcatenate = 169,
  kTfLiteBuiltinStablehloBroadcastInDim = 170,
  kTfLiteBuiltinStablehloConvolution = 171,
  kTfLiteBuiltinStablehloSlice = 172,
  kTfLiteBuiltinStablehloCustomCall = 173,
  kTfLiteBuiltinStablehloReduce = 174,
  kTfLiteBuiltinStablehloAbs = 175,
  kTfLiteBuiltinStablehloAnd = 176,
  kTfLiteBuiltinStablehloCosine = 177,
  kTfLiteBuiltinStablehloExponential = 178,
  kTfLiteBuiltinStablehloFloor = 179,
  kTfLiteBuiltinStablehloLog = 180,
  kTfLiteBuiltinStablehloMinimum = 181,
  kTfLiteBuiltinStablehloNegate = 182,
  kTfLiteBuiltinStablehloOr = 183,
  kTfLiteBuiltinStablehloPower = 184,
  kTfLiteBuiltinStablehloRemainder = 185,
  kTfLiteBuiltinStablehloRsqrt = 186,
  kTfLiteBuiltinStablehloSelect = 187,
  kTfLiteBuiltinStablehloSubtract = 188,
  kTfLiteBuiltinStablehloTanh = 189,
  kTfLiteBuiltinStablehloScatter = 190,
  kTfLiteBuiltinStablehloCompare = 191,
  kTfLiteBuiltinStablehloConvert = 192,
  kTfLiteBuiltinStablehloDynamicSlice = 193,
  kTfLiteBuiltinStablehloDynamicUpdateSlice = 194,
  kTfLiteBuiltinStablehloPad = 195,
  kTfLiteBuiltinStablehloIota = 196,
  kTfLiteBuiltinStablehloDotGeneral = 197,
  kTfLiteBuiltinStablehloReduceWindow = 198,
  kTfLiteBuiltinStablehloSort = 199,
  kTfLiteBuiltinStablehloWhile = 200,
  kTfLiteBuiltinStablehloGather = 201,
  kTfLiteBuiltinStablehloTranspose = 202,
  kTfLiteBuiltinDilate = 203,
  kTfLiteBuiltinStablehloRngBitGenerator = 204,
  kTfLiteBuiltinReduceWindow = 205,
  kTfLiteBuiltinStablehloComposite = 206,
  kTfLiteBuiltinStablehloShiftLeft = 207,
  kTfLiteBuiltinStablehloCbrt = 208,
  kTfLiteBuiltinStablehloCase = 209,
};

// Highest builtin code known to this header; a newer runtime may report
// larger ones (treat them as unsupported).
constexpr int32_t kMaxKnownBuiltinOperator = kTfLiteBuiltinStablehloCase;

// Schema name of a builtin operator code ("ADD", "CONV_2D", ...), for log
// messages. Returns "UNKNOWN" for codes this header does not know.
constexpr const char* BuiltinOperatorName(int32_t code) {
  switch (code) {
    case kTfLiteBuiltinAdd: return "ADD";
    case kTfLiteBuiltinAveragePool2d: return "AVERAGE_POOL_2D";
    case kTfLiteBuiltinConcatenation: return "CONCATENATION";
    case kTfLiteBuiltinConv2d: return "CONV_2D";
    case kTfLiteBuiltinDepthwiseConv2d: return "DEPTHWISE_CONV_2D";
    case kTfLiteBuiltinDepthToSpace: return "DEPTH_TO_SPACE";
    case kTfLiteBuiltinDequantize: return "DEQUANTIZE";
    case kTfLiteBuiltinEmbeddingLookup: return "EMBEDDING_LOOKUP";
    case kTfLiteBuiltinFloor: return "FLOOR";
    case kTfLiteBuiltinFullyConnected: return "FULLY_CONNECTED";
    case kTfLiteBuiltinHashtableLookup: return "HASHTABLE_LOOKUP";
    case kTfLiteBuiltinL2Normalization: return "L2_NORMALIZATION";
    case kTfLiteBuiltinL2Pool2d: return "L2_POOL_2D";
    case kTfLiteBuiltinLocalResponseNormalization: return "LOCAL_RESPONSE_NORMALIZATION";
    case kTfLiteBuiltinLogistic: return "LOGISTIC";
    case kTfLiteBuiltinLshProjection: return "LSH_PROJECTION";
    case kTfLiteBuiltinLstm: return "LSTM";
    case kTfLiteBuiltinMaxPool2d: return "MAX_POOL_2D";
    case kTfLiteBuiltinMul: return "MUL";
    case kTfLiteBuiltinRelu: return "RELU";
    case kTfLiteBuiltinReluN1To1: return "RELU_N1_TO_1";
    case kTfLiteBuiltinRelu6: return "RELU6";
    case kTfLiteBuiltinReshape: return "RESHAPE";
    case kTfLiteBuiltinResizeBilinear: return "RESIZE_BILINEAR";
    case kTfLiteBuiltinRnn: return "RNN";
    case kTfLiteBuiltinSoftmax: return "SOFTMAX";
    case kTfLiteBuiltinSpaceToDepth: return "SPACE_TO_DEPTH";
    case kTfLiteBuiltinSvdf: return "SVDF";
    case kTfLiteBuiltinTanh: return "TANH";
    case kTfLiteBuiltinConcatEmbeddings: return "CONCAT_EMBEDDINGS";
    case kTfLiteBuiltinSkipGram: return "SKIP_GRAM";
    case kTfLiteBuiltinCall: return "CALL";
    case kTfLiteBuiltinCustom: return "CUSTOM";
    case kTfLiteBuiltinEmbeddingLookupSparse: return "EMBEDDING_LOOKUP_SPARSE";
    case kTfLiteBuiltinPad: return "PAD";
    case kTfLiteBuiltinUnidirectionalSequenceRnn: return "UNIDIRECTIONAL_SEQUENCE_RNN";
    case kTfLiteBuiltinGather: return "GATHER";
    case kTfLiteBuiltinBatchToSpaceNd: return "BATCH_TO_SPACE_ND";
    case kTfLiteBuiltinSpaceToBatchNd: return "SPACE_TO_BATCH_ND";
    case kTfLiteBuiltinTranspose: return "TRANSPOSE";
    case kTfLiteBuiltinMean: return "MEAN";
    case kTfLiteBuiltinSub: return "SUB";
    case kTfLiteBuiltinDiv: return "DIV";
    case kTfLiteBuiltinSqueeze: return "SQUEEZE";
    case kTfLiteBuiltinUnidirectionalSequenceLstm: return "UNIDIRECTIONAL_SEQUENCE_LSTM";
    case kTfLiteBuiltinStridedSlice: return "STRIDED_SLICE";
    case kTfLiteBuiltinBidirectionalSequenceRnn: return "BIDIRECTIONAL_SEQUENCE_RNN";
    case kTfLiteBuiltinExp: return "EXP";
    case kTfLiteBuiltinTopkV2: return "TOPK_V2";
    case kTfLiteBuiltinSplit: return "SPLIT";
    case kTfLiteBuiltinLogSoftmax: return "LOG_SOFTMAX";
    case kTfLiteBuiltinDelegate: return "DELEGATE";
    case kTfLiteBuiltinBidirectionalSequenceLstm: return "BIDIRECTIONAL_SEQUENCE_LSTM";
    case kTfLiteBuiltinCast: return "CAST";
    case kTfLiteBuiltinPrelu: return "PRELU";
    case kTfLiteBuiltinMaximum: return "MAXIMUM";
    case kTfLiteBuiltinArgMax: return "ARG_MAX";
    case kTfLiteBuiltinMinimum: return "MINIMUM";
    case kTfLiteBuiltinLess: return "LESS";
    case kTfLiteBuiltinNeg: return "NEG";
    case kTfLiteBuiltinPadv2: return "PADV2";
    case kTfLiteBuiltinGreater: return "GREATER";
    case kTfLiteBuiltinGreaterEqual: return "GREATER_EQUAL";
    case kTfLiteBuiltinLessEqual: return "LESS_EQUAL";
    case kTfLiteBuiltinSelect: return "SELECT";
    case kTfLiteBuiltinSlice: return "SLICE";
    case kTfLiteBuiltinSin: return "SIN";
    case kTfLiteBuiltinTransposeConv: return "TRANSPOSE_CONV";
    case kTfLiteBuiltinSparseToDense: return "SPARSE_TO_DENSE";
    case kTfLiteBuiltinTile: return "TILE";
    case kTfLiteBuiltinExpandDims: return "EXPAND_DIMS";
    case kTfLiteBuiltinEqual: return "EQUAL";
    case kTfLiteBuiltinNotEqual: return "NOT_EQUAL";
    case kTfLiteBuiltinLog: return "LOG";
    case kTfLiteBuiltinSum: return "SUM";
    case kTfLiteBuiltinSqrt: return "SQRT";
    case kTfLiteBuiltinRsqrt: return "RSQRT";
    case kTfLiteBuiltinShape: return "SHAPE";
    case kTfLiteBuiltinPow: return "POW";
    case kTfLiteBuiltinArgMin: return "ARG_MIN";
    case kTfLiteBuiltinFakeQuant: return "FAKE_QUANT";
    case kTfLiteBuiltinReduceProd: return "REDUCE_PROD";
    case kTfLiteBuiltinReduceMax: return "REDUCE_MAX";
    case kTfLiteBuiltinPack: return "PACK";
    case kTfLiteBuiltinLogicalOr: return "LOGICAL_OR";
    case kTfLiteBuiltinOneHot: return "ONE_HOT";
    case kTfLiteBuiltinLogicalAnd: return "LOGICAL_AND";
    case kTfLiteBuiltinLogicalNot: return "LOGICAL_NOT";
    case kTfLiteBuiltinUnpack: return "UNPACK";
    case kTfLiteBuiltinReduceMin: return "REDUCE_MIN";
    case kTfLiteBuiltinFloorDiv: return "FLOOR_DIV";
    case kTfLiteBuiltinReduceAny: return "REDUCE_ANY";
    case kTfLiteBuiltinSquare: return "SQUARE";
    case kTfLiteBuiltinZerosLike: return "ZEROS_LIKE";
    case kTfLiteBuiltinFill: return "FILL";
    case kTfLiteBuiltinFloorMod: return "FLOOR_MOD";
    case kTfLiteBuiltinRange: return "RANGE";
    case kTfLiteBuiltinResizeNearestNeighbor: return "RESIZE_NEAREST_NEIGHBOR";
    case kTfLiteBuiltinLeakyRelu: return "LEAKY_RELU";
    case kTfLiteBuiltinSquaredDifference: return "SQUARED_DIFFERENCE";
    case kTfLiteBuiltinMirrorPad: return "MIRROR_PAD";
    case kTfLiteBuiltinAbs: return "ABS";
    case kTfLiteBuiltinSplitV: return "SPLIT_V";
    case kTfLiteBuiltinUnique: return "UNIQUE";
    case kTfLiteBuiltinCeil: return "CEIL";
    case kTfLiteBuiltinReverseV2: return "REVERSE_V2";
    case kTfLiteBuiltinAddN: return "ADD_N";
    case kTfLiteBuiltinGatherNd: return "GATHER_ND";
    case kTfLiteBuiltinCos: return "COS";
    case kTfLiteBuiltinWhere: return "WHERE";
    case kTfLiteBuiltinRank: return "RANK";
    case kTfLiteBuiltinElu: return "ELU";
    case kTfLiteBuiltinReverseSequence: return "REVERSE_SEQUENCE";
    case kTfLiteBuiltinMatrixDiag: return "MATRIX_DIAG";
    case kTfLiteBuiltinQuantize: return "QUANTIZE";
    case kTfLiteBuiltinMatrixSetDiag: return "MATRIX_SET_DIAG";
    case kTfLiteBuiltinRound: return "ROUND";
    case kTfLiteBuiltinHardSwish: return "HARD_SWISH";
    case kTfLiteBuiltinIf: return "IF";
    case kTfLiteBuiltinWhile: return "WHILE";
    case kTfLiteBuiltinNonMaxSuppressionV4: return "NON_MAX_SUPPRESSION_V4";
    case kTfLiteBuiltinNonMaxSuppressionV5: return "NON_MAX_SUPPRESSION_V5";
    case kTfLiteBuiltinScatterNd: return "SCATTER_ND";
    case kTfLiteBuiltinSelectV2: return "SELECT_V2";
    case kTfLiteBuiltinDensify: return "DENSIFY";
    case kTfLiteBuiltinSegmentSum: return "SEGMENT_SUM";
    case kTfLiteBuiltinBatchMatmul: return "BATCH_MATMUL";
    case kTfLiteBuiltinPlaceholderForGreaterOpCodes: return "PLACEHOLDER_FOR_GREATER_OP_CODES";
    case kTfLiteBuiltinCumsum: return "CUMSUM";
    case kTfLiteBuiltinCallOnce: return "CALL_ONCE";
    case kTfLiteBuiltinBroadcastTo: return "BROADCAST_TO";
    case kTfLiteBuiltinRfft2d: return "RFFT2D";
    case kTfLiteBuiltinConv3d: return "CONV_3D";
    case kTfLiteBuiltinImag: return "IMAG";
    case kTfLiteBuiltinReal: return "REAL";
    case kTfLiteBuiltinComplexAbs: return "COMPLEX_ABS";
    case kTfLiteBuiltinHashtable: return "HASHTABLE";
    case kTfLiteBuiltinHashtableFind: return "HASHTABLE_FIND";
    case kTfLiteBuiltinHashtableImport: return "HASHTABLE_IMPORT";
    case kTfLiteBuiltinHashtableSize: return "HASHTABLE_SIZE";
    case kTfLiteBuiltinReduceAll: return "REDUCE_ALL";
    case kTfLiteBuiltinConv3dTranspose: return "CONV_3D_TRANSPOSE";
    case kTfLiteBuiltinVarHandle: return "VAR_HANDLE";
    case kTfLiteBuiltinReadVariable: return "READ_VARIABLE";
    case kTfLiteBuiltinAssignVariable: return "ASSIGN_VARIABLE";
    case kTfLiteBuiltinBroadcastArgs: return "BROADCAST_ARGS";
    case kTfLiteBuiltinRandomStandardNormal: return "RANDOM_STANDARD_NORMAL";
    case kTfLiteBuiltinBucketize: return "BUCKETIZE";
    case kTfLiteBuiltinRandomUniform: return "RANDOM_UNIFORM";
    case kTfLiteBuiltinMultinomial: return "MULTINOMIAL";
    case kTfLiteBuiltinGelu: return "GELU";
    case kTfLiteBuiltinDynamicUpdateSlice: return "DYNAMIC_UPDATE_SLICE";
    case kTfLiteBuiltinRelu0To1: return "RELU_0_TO_1";
    case kTfLiteBuiltinUnsortedSegmentProd: return "UNSORTED_SEGMENT_PROD";
    case kTfLiteBuiltinUnsortedSegmentMax: return "UNSORTED_SEGMENT_MAX";
    case kTfLiteBuiltinUnsortedSegmentSum: return "UNSORTED_SEGMENT_SUM";
    case kTfLiteBuiltinAtan2: return "ATAN2";
    case kTfLiteBuiltinUnsortedSegmentMin: return "UNSORTED_SEGMENT_MIN";
    case kTfLiteBuiltinSign: return "SIGN";
    case kTfLiteBuiltinBitcast: return "BITCAST";
    case kTfLiteBuiltinBitwiseXor: return "BITWISE_XOR";
    case kTfLiteBuiltinRightShift: return "RIGHT_SHIFT";
    case kTfLiteBuiltinStablehloLogistic: return "STABLEHLO_LOGISTIC";
    case kTfLiteBuiltinStablehloAdd: return "STABLEHLO_ADD";
    case kTfLiteBuiltinStablehloDivide: return "STABLEHLO_DIVIDE";
    case kTfLiteBuiltinStablehloMultiply: return "STABLEHLO_MULTIPLY";
    case kTfLiteBuiltinStablehloMaximum: return "STABLEHLO_MAXIMUM";
    case kTfLiteBuiltinStablehloReshape: return "STABLEHLO_RESHAPE";
    case kTfLiteBuiltinStablehloClamp: return "STABLEHLO_CLAMP";
    case kTfLiteBuiltinStablehloConcatenate: return "STABLEHLO_CONCATENATE";
    case kTfLiteBuiltinStablehloBroadcastInDim: return "STABLEHLO_BROADCAST_IN_DIM";
    case kTfLiteBuiltinStablehloConvolution: return "STABLEHLO_CONVOLUTION";
    case kTfLiteBuiltinStablehloSlice: return "STABLEHLO_SLICE";
    case kTfLiteBuiltinStablehloCustomCall: return "STABLEHLO_CUSTOM_CALL";
    case kTfLiteBuiltinStablehloReduce: return "STABLEHLO_REDUCE";
    case kTfLiteBuiltinStablehloAbs: return "STABLEHLO_ABS";
    case kTfLiteBuiltinStablehloAnd: return "STABLEHLO_AND";
    case kTfLiteBuiltinStablehloCosine: return "STABLEHLO_COSINE";
    case kTfLiteBuiltinStablehloExponential: return "STABLEHLO_EXPONENTIAL";
    case kTfLiteBuiltinStablehloFloor: return "STABLEHLO_FLOOR";
    case kTfLiteBuiltinStablehloLog: return "STABLEHLO_LOG";
    case kTfLiteBuiltinStablehloMinimum: return "STABLEHLO_MINIMUM";
    case kTfLiteBuiltinStablehloNegate: return "STABLEHLO_NEGATE";
    case kTfLiteBuiltinStablehloOr: return "STABLEHLO_OR";
    case kTfLiteBuiltinStablehloPower: return "STABLEHLO_POWER";
    case kTfLiteBuiltinStablehloRemainder: return "STABLEHLO_REMAINDER";
    case kTfLiteBuiltinStablehloRsqrt: return "STABLEHLO_RSQRT";
    case kTfLiteBuiltinStablehloSelect: return "STABLEHLO_SELECT";
    case kTfLiteBuiltinStablehloSubtract: return "STABLEHLO_SUBTRACT";
    case kTfLiteBuiltinStablehloTanh: return "STABLEHLO_TANH";
    case kTfLiteBuiltinStablehloScatter: return "STABLEHLO_SCATTER";
    case kTfLiteBuiltinStablehloCompare: return "STABLEHLO_COMPARE";
    case kTfLiteBuiltinStablehloConvert: return "STABLEHLO_CONVERT";
    case kTfLiteBuiltinStablehloDynamicSlice: return "STABLEHLO_DYNAMIC_SLICE";
    case kTfLiteBuiltinStablehloDynamicUpdateSlice: return "STABLEHLO_DYNAMIC_UPDATE_SLICE";
    case kTfLiteBuiltinStablehloPad: return "STABLEHLO_PAD";
    case kTfLiteBuiltinStablehloIota: return "STABLEHLO_IOTA";
    case kTfLiteBuiltinStablehloDotGeneral: return "STABLEHLO_DOT_GENERAL";
    case kTfLiteBuiltinStablehloReduceWindow: return "STABLEHLO_REDUCE_WINDOW";
    case kTfLiteBuiltinStablehloSort: return "STABLEHLO_SORT";
    case kTfLiteBuiltinStablehloWhile: return "STABLEHLO_WHILE";
    case kTfLiteBuiltinStablehloGather: return "STABLEHLO_GATHER";
    case kTfLiteBuiltinStablehloTranspose: return "STABLEHLO_TRANSPOSE";
    case kTfLiteBuiltinDilate: return "DILATE";
    case kTfLiteBuiltinStablehloRngBitGenerator: return "STABLEHLO_RNG_BIT_GENERATOR";
    case kTfLiteBuiltinReduceWindow: return "REDUCE_WINDOW";
    case kTfLiteBuiltinStablehloComposite: return "STABLEHLO_COMPOSITE";
    case kTfLiteBuiltinStablehloShiftLeft: return "STABLEHLO_SHIFT_LEFT";
    case kTfLiteBuiltinStablehloCbrt: return "STABLEHLO_CBRT";
    case kTfLiteBuiltinStablehloCase: return "STABLEHLO_CASE";
    default: return "UNKNOWN";
  }
}

static_assert(sizeof(BuiltinOperator) == 4);
static_assert(kTfLiteBuiltinCustom == 32 && kTfLiteBuiltinDelegate == 51 &&
              kTfLiteBuiltinPlaceholderForGreaterOpCodes == 127);
static_assert(kMaxKnownBuiltinOperator == 209);

// ---------------------------------------------------------------------------
// Enums used inside the params structs.

// TfLitePadding.
enum Padding : int32_t {
  kPaddingUnknown = 0,
  kPaddingSame = 1,
  kPaddingValid = 2,
};

// TfLiteMirrorPaddingMode.
enum MirrorPaddingMode : int32_t {
  kMirrorPaddingUnknown = 0,
  kMirrorPaddingReflect = 1,
  kMirrorPaddingSymmetric = 2,
};

// TfLiteFusedActivation: applied by the op to its result.
enum FusedActivation : int32_t {
  kActNone = 0,
  kActRelu = 1,
  kActReluN1To1 = 2,  // clamp to [-1, 1]
  kActRelu6 = 3,      // clamp to [0, 6]
  kActTanh = 4,
  kActSignBit = 5,
  kActSigmoid = 6,
};

// TfLiteFullyConnectedWeightsFormat.
enum FullyConnectedWeightsFormat : int32_t {
  kFullyConnectedWeightsFormatDefault = 0,
  kFullyConnectedWeightsFormatShuffled4x16Int8 = 1,
};

// TfLiteLSHProjectionType.
enum LshProjectionType : int32_t {
  kLshProjectionUnknown = 0,
  kLshProjectionSparse = 1,
  kLshProjectionDense = 2,
};

// TfLiteLSTMKernelType.
enum LstmKernelType : int32_t {
  kLstmFullKernel = 0,
  kLstmBasicKernel = 1,
};

// TfLiteCombinerType.
enum CombinerType : int32_t {
  kCombinerTypeSum = 0,
  kCombinerTypeMean = 1,
  kCombinerTypeSqrtn = 2,
};

// TfLiteReduceWindowFunction (REDUCE_WINDOW).
enum ReduceWindowFunction : int32_t {
  kReduceWindowFunctionUnsupported = 0,
  kReduceWindowFunctionAdd = 1,
  kReduceWindowFunctionMul = 2,
  kReduceWindowFunctionMin = 3,
  kReduceWindowFunctionMax = 4,
  kReduceWindowFunctionAll = 5,
  kReduceWindowFunctionAny = 6,
};

// TfLitePaddingValues: explicit padding computed by a kernel (only the Pool
// struct embeds it; delegates compute their own).
struct PaddingValues {
  int width;
  int height;
  int width_offset;
  int height_offset;
};

static_assert(sizeof(Padding) == 4 && sizeof(MirrorPaddingMode) == 4 &&
              sizeof(FusedActivation) == 4 &&
              sizeof(FullyConnectedWeightsFormat) == 4 &&
              sizeof(LshProjectionType) == 4 && sizeof(LstmKernelType) == 4 &&
              sizeof(CombinerType) == 4 && sizeof(ReduceWindowFunction) == 4);
static_assert(sizeof(PaddingValues) == 16);

// TfLiteMirrorPaddingParams: MIRROR_PAD (paddings are input 1).
struct MirrorPaddingParams {
  MirrorPaddingMode mode;
};
static_assert(sizeof(MirrorPaddingParams) == 4);

// ---------------------------------------------------------------------------
// Params structs, in upstream declaration order. The comment names the
// upstream struct and the ops whose builtin_data points at it.

// TfLiteConvParams: CONV_2D.
struct ConvParams {
  Padding padding;
  int stride_width;
  int stride_height;
  FusedActivation activation;
  int dilation_width_factor;   // op version >= 2 (schema default 1)
  int dilation_height_factor;
  Type quantized_bias_type;    // op version >= 7; kNoType = default
};
static_assert(sizeof(ConvParams) == 28);
static_assert(offsetof(ConvParams, padding) == 0);
static_assert(offsetof(ConvParams, stride_width) == 4);
static_assert(offsetof(ConvParams, stride_height) == 8);
static_assert(offsetof(ConvParams, activation) == 12);
static_assert(offsetof(ConvParams, dilation_width_factor) == 16);
static_assert(offsetof(ConvParams, dilation_height_factor) == 20);
static_assert(offsetof(ConvParams, quantized_bias_type) == 24);

// TfLiteConv3DParams: CONV_3D and CONV_3D_TRANSPOSE.
struct Conv3DParams {
  Padding padding;
  int stride_width;
  int stride_height;
  int stride_depth;
  int dilation_width_factor;
  int dilation_height_factor;
  int dilation_depth_factor;
  FusedActivation activation;
};
using Conv3DTransposeParams = Conv3DParams;
static_assert(sizeof(Conv3DParams) == 32);
static_assert(offsetof(Conv3DParams, stride_depth) == 12);
static_assert(offsetof(Conv3DParams, dilation_depth_factor) == 24);
static_assert(offsetof(Conv3DParams, activation) == 28);

// TfLitePoolParams: AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D.
struct PoolParams {
  Padding padding;
  int stride_width;
  int stride_height;
  int filter_width;
  int filter_height;
  FusedActivation activation;
  // Filled in by the CPU kernel's Prepare; meaningless to a delegate.
  struct Computed {
    PaddingValues padding;
  } computed;
};
static_assert(sizeof(PoolParams) == 40);
static_assert(offsetof(PoolParams, padding) == 0);
static_assert(offsetof(PoolParams, stride_width) == 4);
static_assert(offsetof(PoolParams, stride_height) == 8);
static_assert(offsetof(PoolParams, filter_width) == 12);
static_assert(offsetof(PoolParams, filter_height) == 16);
static_assert(offsetof(PoolParams, activation) == 20);
static_assert(offsetof(PoolParams, computed) == 24);

// TfLiteDepthwiseConvParams: DEPTHWISE_CONV_2D.
struct DepthwiseConvParams {
  Padding padding;
  int stride_width;
  int stride_height;
  // Redundant with the filter shape (output channels / input channels);
  // recent converters may leave it inconsistent. Derive it from the shapes.
  int depth_multiplier;
  FusedActivation activation;
  int dilation_width_factor;   // op version >= 2 (schema default 1)
  int dilation_height_factor;
};
static_assert(sizeof(DepthwiseConvParams) == 28);
static_assert(offsetof(DepthwiseConvParams, padding) == 0);
static_assert(offsetof(DepthwiseConvParams, stride_width) == 4);
static_assert(offsetof(DepthwiseConvParams, stride_height) == 8);
static_assert(offsetof(DepthwiseConvParams, depth_multiplier) == 12);
static_assert(offsetof(DepthwiseConvParams, activation) == 16);
static_assert(offsetof(DepthwiseConvParams, dilation_width_factor) == 20);
static_assert(offsetof(DepthwiseConvParams, dilation_height_factor) == 24);

// TfLiteSVDFParams: SVDF.
struct SvdfParams {
  int rank;
  FusedActivation activation;
  bool asymmetric_quantize_inputs;
};
static_assert(sizeof(SvdfParams) == 12);
static_assert(offsetof(SvdfParams, asymmetric_quantize_inputs) == 8);

// TfLiteRNNParams: RNN.
struct RnnParams {
  FusedActivation activation;
  bool asymmetric_quantize_inputs;
};
static_assert(sizeof(RnnParams) == 8);
static_assert(offsetof(RnnParams, asymmetric_quantize_inputs) == 4);

// TfLiteSequenceRNNParams: UNIDIRECTIONAL_SEQUENCE_RNN.
struct SequenceRnnParams {
  bool time_major;
  FusedActivation activation;
  bool asymmetric_quantize_inputs;
};
static_assert(sizeof(SequenceRnnParams) == 12);
static_assert(offsetof(SequenceRnnParams, activation) == 4);
static_assert(offsetof(SequenceRnnParams, asymmetric_quantize_inputs) == 8);

// TfLiteBidirectionalSequenceRNNParams: BIDIRECTIONAL_SEQUENCE_RNN.
struct BidirectionalSequenceRnnParams {
  bool time_major;
  FusedActivation activation;
  bool merge_outputs;
  bool asymmetric_quantize_inputs;
};
static_assert(sizeof(BidirectionalSequenceRnnParams) == 12);
static_assert(offsetof(BidirectionalSequenceRnnParams, activation) == 4);
static_assert(offsetof(BidirectionalSequenceRnnParams, merge_outputs) == 8);
static_assert(
    offsetof(BidirectionalSequenceRnnParams, asymmetric_quantize_inputs) == 9);

// TfLiteFullyConnectedParams: FULLY_CONNECTED.
struct FullyConnectedParams {
  FusedActivation activation;
  FullyConnectedWeightsFormat weights_format;  // op version >= 2
  // op version >= 5: output rank == input rank (all but the last dim equal)
  // instead of flattening to 2-D.
  bool keep_num_dims;
  bool asymmetric_quantize_inputs;  // op version >= 7 (hybrid weights)
  Type quantized_bias_type;         // op version >= 10; kNoType = default
};
static_assert(sizeof(FullyConnectedParams) == 16);
static_assert(offsetof(FullyConnectedParams, activation) == 0);
static_assert(offsetof(FullyConnectedParams, weights_format) == 4);
static_assert(offsetof(FullyConnectedParams, keep_num_dims) == 8);
static_assert(offsetof(FullyConnectedParams, asymmetric_quantize_inputs) == 9);
static_assert(offsetof(FullyConnectedParams, quantized_bias_type) == 12);

// TfLiteLSHProjectionParams: LSH_PROJECTION.
struct LshProjectionParams {
  LshProjectionType type;
};
static_assert(sizeof(LshProjectionParams) == 4);

// TfLiteSoftmaxParams: SOFTMAX.
struct SoftmaxParams {
  float beta;
};
static_assert(sizeof(SoftmaxParams) == 4);

// TfLiteConcatenationParams: CONCATENATION.
struct ConcatenationParams {
  int axis;  // may be negative (counts from the back)
  FusedActivation activation;
};
static_assert(sizeof(ConcatenationParams) == 8);
static_assert(offsetof(ConcatenationParams, axis) == 0);
static_assert(offsetof(ConcatenationParams, activation) == 4);

// TfLiteAddParams: ADD.
struct AddParams {
  FusedActivation activation;
  bool pot_scale_int16;  // op version >= 4
};
static_assert(sizeof(AddParams) == 8);
static_assert(offsetof(AddParams, activation) == 0);
static_assert(offsetof(AddParams, pot_scale_int16) == 4);

// TfLiteSpaceToBatchNDParams: declared upstream, but SPACE_TO_BATCH_ND gets
// builtin_data == nullptr.
struct SpaceToBatchNDParams {
  char placeholder;
};
static_assert(sizeof(SpaceToBatchNDParams) == 1);

// TfLiteBatchToSpaceNDParams: declared upstream, but BATCH_TO_SPACE_ND gets
// builtin_data == nullptr.
struct BatchToSpaceNDParams {
  char placeholder;
};
static_assert(sizeof(BatchToSpaceNDParams) == 1);

// TfLiteBatchMatMulParams: BATCH_MATMUL.
struct BatchMatMulParams {
  bool adj_x;
  bool adj_y;
  bool asymmetric_quantize_inputs;  // op version >= 4
};
static_assert(sizeof(BatchMatMulParams) == 3);
static_assert(offsetof(BatchMatMulParams, adj_y) == 1);
static_assert(offsetof(BatchMatMulParams, asymmetric_quantize_inputs) == 2);

// TfLiteMulParams: MUL. (No pot_scale_int16 here, unlike Add/Sub.)
struct MulParams {
  FusedActivation activation;
};
static_assert(sizeof(MulParams) == 4);

// TfLiteSubParams: SUB.
struct SubParams {
  FusedActivation activation;
  bool pot_scale_int16;  // op version >= 5
};
static_assert(sizeof(SubParams) == 8);
static_assert(offsetof(SubParams, activation) == 0);
static_assert(offsetof(SubParams, pot_scale_int16) == 4);

// TfLiteDivParams: DIV. (No pot_scale_int16.)
struct DivParams {
  FusedActivation activation;
};
static_assert(sizeof(DivParams) == 4);

// TfLiteL2NormParams: L2_NORMALIZATION.
struct L2NormParams {
  FusedActivation activation;
};
static_assert(sizeof(L2NormParams) == 4);

// TfLiteLocalResponseNormParams: LOCAL_RESPONSE_NORMALIZATION.
struct LocalResponseNormParams {
  int radius;
  float bias;
  float alpha;
  float beta;
};
static_assert(sizeof(LocalResponseNormParams) == 16);
static_assert(offsetof(LocalResponseNormParams, bias) == 4);
static_assert(offsetof(LocalResponseNormParams, alpha) == 8);
static_assert(offsetof(LocalResponseNormParams, beta) == 12);

// TfLiteLSTMParams: LSTM.
struct LstmParams {
  FusedActivation activation;
  float cell_clip;
  float proj_clip;
  LstmKernelType kernel_type;        // op version >= 2
  bool asymmetric_quantize_inputs;   // op version >= 4
};
static_assert(sizeof(LstmParams) == 20);
static_assert(offsetof(LstmParams, cell_clip) == 4);
static_assert(offsetof(LstmParams, proj_clip) == 8);
static_assert(offsetof(LstmParams, kernel_type) == 12);
static_assert(offsetof(LstmParams, asymmetric_quantize_inputs) == 16);

// TfLiteUnidirectionalSequenceLSTMParams: UNIDIRECTIONAL_SEQUENCE_LSTM.
struct UnidirectionalSequenceLstmParams {
  FusedActivation activation;
  float cell_clip;
  float proj_clip;
  bool time_major;
  bool asymmetric_quantize_inputs;   // op version >= 3
  bool diagonal_recurrent_tensors;   // op version >= 4
};
static_assert(sizeof(UnidirectionalSequenceLstmParams) == 16);
static_assert(offsetof(UnidirectionalSequenceLstmParams, cell_clip) == 4);
static_assert(offsetof(UnidirectionalSequenceLstmParams, proj_clip) == 8);
static_assert(offsetof(UnidirectionalSequenceLstmParams, time_major) == 12);
static_assert(offsetof(UnidirectionalSequenceLstmParams,
                       asymmetric_quantize_inputs) == 13);
static_assert(offsetof(UnidirectionalSequenceLstmParams,
                       diagonal_recurrent_tensors) == 14);

// TfLiteBidirectionalSequenceLSTMParams: BIDIRECTIONAL_SEQUENCE_LSTM.
struct BidirectionalSequenceLstmParams {
  FusedActivation activation;
  float cell_clip;
  float proj_clip;
  bool merge_outputs;
  bool time_major;                   // op version >= 2
  bool asymmetric_quantize_inputs;   // op version >= 3
};
static_assert(sizeof(BidirectionalSequenceLstmParams) == 16);
static_assert(offsetof(BidirectionalSequenceLstmParams, merge_outputs) == 12);
static_assert(offsetof(BidirectionalSequenceLstmParams, time_major) == 13);
static_assert(offsetof(BidirectionalSequenceLstmParams,
                       asymmetric_quantize_inputs) == 14);

// TfLiteResizeBilinearParams: RESIZE_BILINEAR.
struct ResizeBilinearParams {
  bool align_corners;
  bool half_pixel_centers;
};
static_assert(sizeof(ResizeBilinearParams) == 2);
static_assert(offsetof(ResizeBilinearParams, half_pixel_centers) == 1);

// TfLiteResizeNearestNeighborParams: RESIZE_NEAREST_NEIGHBOR.
struct ResizeNearestNeighborParams {
  bool align_corners;
  bool half_pixel_centers;
};
static_assert(sizeof(ResizeNearestNeighborParams) == 2);
static_assert(offsetof(ResizeNearestNeighborParams, half_pixel_centers) == 1);

// TfLitePadParams: declared upstream, but PAD gets builtin_data == nullptr
// (paddings come from input 1).
struct PadParams {
  char placeholder;
};
static_assert(sizeof(PadParams) == 1);

// TfLitePadV2Params: declared upstream, but PADV2 gets builtin_data ==
// nullptr (paddings from input 1, constant from input 2).
struct PadV2Params {
  char placeholder;
};
static_assert(sizeof(PadV2Params) == 1);

// Capacity of ReshapeParams::shape.
constexpr int kReshapeParamsMaxDimensionCount = 8;

// TfLiteReshapeParams: RESHAPE. Legacy: the authoritative new shape is
// input 1 when present (and the output tensor's dims after Prepare);
// num_dimensions is 0 when the model carries no ReshapeOptions.
struct ReshapeParams {
  int32_t shape[kReshapeParamsMaxDimensionCount];
  int num_dimensions;
};
static_assert(sizeof(ReshapeParams) == 36);
static_assert(offsetof(ReshapeParams, shape) == 0);
static_assert(offsetof(ReshapeParams, num_dimensions) == 32);

// TfLiteSkipGramParams: SKIP_GRAM.
struct SkipGramParams {
  int ngram_size;
  int max_skip_size;
  bool include_all_ngrams;
};
static_assert(sizeof(SkipGramParams) == 12);
static_assert(offsetof(SkipGramParams, include_all_ngrams) == 8);

// TfLiteSpaceToDepthParams: SPACE_TO_DEPTH.
struct SpaceToDepthParams {
  int block_size;
};
static_assert(sizeof(SpaceToDepthParams) == 4);

// TfLiteDepthToSpaceParams: DEPTH_TO_SPACE.
struct DepthToSpaceParams {
  int block_size;
};
static_assert(sizeof(DepthToSpaceParams) == 4);

// TfLiteCastParams: CAST (both kNoType when the model has no CastOptions;
// use the tensor types).
struct CastParams {
  Type in_data_type;
  Type out_data_type;
};
static_assert(sizeof(CastParams) == 8);
static_assert(offsetof(CastParams, out_data_type) == 4);

// TfLiteEmbeddingLookupSparseParams: EMBEDDING_LOOKUP_SPARSE.
struct EmbeddingLookupSparseParams {
  CombinerType combiner;
};
static_assert(sizeof(EmbeddingLookupSparseParams) == 4);

// TfLiteGatherParams: GATHER.
struct GatherParams {
  int axis;
  int batch_dims;
};
static_assert(sizeof(GatherParams) == 8);
static_assert(offsetof(GatherParams, axis) == 0);
static_assert(offsetof(GatherParams, batch_dims) == 4);

// TfLiteTransposeParams: declared upstream, but TRANSPOSE gets builtin_data
// == nullptr (the permutation is input 1).
struct TransposeParams {
  char placeholder;
};
static_assert(sizeof(TransposeParams) == 1);

// TfLiteReducerParams: MEAN, SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN,
// REDUCE_ANY, REDUCE_ALL (axes are input 1).
struct ReducerParams {
  bool keep_dims;
};
static_assert(sizeof(ReducerParams) == 1);

// TfLiteSplitParams: SPLIT (the axis is input 0, the data input 1).
struct SplitParams {
  int num_splits;
};
static_assert(sizeof(SplitParams) == 4);

// TfLiteSplitVParams: SPLIT_V.
struct SplitVParams {
  int num_splits;
};
static_assert(sizeof(SplitVParams) == 4);

// Capacity of SqueezeParams::squeeze_dims.
constexpr int kSqueezeParamsMaxDimensionCount = 8;

// TfLiteSqueezeParams: SQUEEZE. num_squeeze_dims == 0 means "all size-1
// dims".
struct SqueezeParams {
  int32_t squeeze_dims[kSqueezeParamsMaxDimensionCount];
  int num_squeeze_dims;
};
static_assert(sizeof(SqueezeParams) == 36);
static_assert(offsetof(SqueezeParams, squeeze_dims) == 0);
static_assert(offsetof(SqueezeParams, num_squeeze_dims) == 32);

// TfLiteStridedSliceParams: STRIDED_SLICE.
struct StridedSliceParams {
  int begin_mask;
  int end_mask;
  int ellipsis_mask;
  int new_axis_mask;
  int shrink_axis_mask;
  // op version >= 8: input 2 ("end") holds sizes relative to begin.
  bool offset;
};
static_assert(sizeof(StridedSliceParams) == 24);
static_assert(offsetof(StridedSliceParams, begin_mask) == 0);
static_assert(offsetof(StridedSliceParams, end_mask) == 4);
static_assert(offsetof(StridedSliceParams, ellipsis_mask) == 8);
static_assert(offsetof(StridedSliceParams, new_axis_mask) == 12);
static_assert(offsetof(StridedSliceParams, shrink_axis_mask) == 16);
static_assert(offsetof(StridedSliceParams, offset) == 20);

// TfLiteArgMaxParams: ARG_MAX (the axis is input 1).
struct ArgMaxParams {
  Type output_type;
};
static_assert(sizeof(ArgMaxParams) == 4);

// TfLiteArgMinParams: ARG_MIN.
struct ArgMinParams {
  Type output_type;
};
static_assert(sizeof(ArgMinParams) == 4);

// TfLiteTransposeConvParams: TRANSPOSE_CONV (inputs: output_shape, weights,
// input, optional bias).
struct TransposeConvParams {
  Padding padding;
  int stride_width;
  int stride_height;
  FusedActivation activation;  // op version >= 4; kActNone before
  Type quantized_bias_type;    // op version >= 5; kNoType = default
};
static_assert(sizeof(TransposeConvParams) == 20);
static_assert(offsetof(TransposeConvParams, padding) == 0);
static_assert(offsetof(TransposeConvParams, stride_width) == 4);
static_assert(offsetof(TransposeConvParams, stride_height) == 8);
static_assert(offsetof(TransposeConvParams, activation) == 12);
static_assert(offsetof(TransposeConvParams, quantized_bias_type) == 16);

// TfLiteSparseToDenseParams: SPARSE_TO_DENSE.
struct SparseToDenseParams {
  bool validate_indices;
};
static_assert(sizeof(SparseToDenseParams) == 1);

// TfLiteShapeParams: SHAPE.
struct ShapeParams {
  Type out_type;
};
static_assert(sizeof(ShapeParams) == 4);

// TfLiteRankParams: declared upstream; RANK gets builtin_data == nullptr.
struct RankParams {
  char placeholder;
};
static_assert(sizeof(RankParams) == 1);

// TfLiteFakeQuantParams: FAKE_QUANT.
struct FakeQuantParams {
  float min;
  float max;
  int num_bits;
  bool narrow_range;  // op version >= 2
};
static_assert(sizeof(FakeQuantParams) == 16);
static_assert(offsetof(FakeQuantParams, max) == 4);
static_assert(offsetof(FakeQuantParams, num_bits) == 8);
static_assert(offsetof(FakeQuantParams, narrow_range) == 12);

// TfLitePackParams: PACK.
struct PackParams {
  int values_count;
  int axis;
};
static_assert(sizeof(PackParams) == 8);
static_assert(offsetof(PackParams, axis) == 4);

// TfLiteOneHotParams: ONE_HOT.
struct OneHotParams {
  int axis;
};
static_assert(sizeof(OneHotParams) == 4);

// TfLiteUnpackParams: UNPACK.
struct UnpackParams {
  int num;
  int axis;
};
static_assert(sizeof(UnpackParams) == 8);
static_assert(offsetof(UnpackParams, axis) == 4);

// TfLiteLeakyReluParams: LEAKY_RELU.
struct LeakyReluParams {
  float alpha;
};
static_assert(sizeof(LeakyReluParams) == 4);

// TfLiteUniqueParams: UNIQUE.
struct UniqueParams {
  Type index_out_type;
};
static_assert(sizeof(UniqueParams) == 4);

// TfLiteReverseSequenceParams: REVERSE_SEQUENCE.
struct ReverseSequenceParams {
  int seq_dim;
  int batch_dim;
};
static_assert(sizeof(ReverseSequenceParams) == 8);
static_assert(offsetof(ReverseSequenceParams, batch_dim) == 4);

// TfLiteMatrixDiagParams: declared upstream; MATRIX_DIAG gets nullptr.
struct MatrixDiagParams {
  char placeholder;
};
static_assert(sizeof(MatrixDiagParams) == 1);

// TfLiteMatrixSetDiagParams: declared upstream; MATRIX_SET_DIAG gets nullptr.
struct MatrixSetDiagParams {
  char placeholder;
};
static_assert(sizeof(MatrixSetDiagParams) == 1);

// TfLiteIfParams: IF.
struct IfParams {
  int then_subgraph_index;
  int else_subgraph_index;
};
static_assert(sizeof(IfParams) == 8);
static_assert(offsetof(IfParams, else_subgraph_index) == 4);

// TfLiteWhileParams: WHILE.
struct WhileParams {
  int cond_subgraph_index;
  int body_subgraph_index;
};
static_assert(sizeof(WhileParams) == 8);
static_assert(offsetof(WhileParams, body_subgraph_index) == 4);

// TfLiteCumsumParams: CUMSUM.
struct CumsumParams {
  bool exclusive;
  bool reverse;
};
static_assert(sizeof(CumsumParams) == 2);
static_assert(offsetof(CumsumParams, reverse) == 1);

// TfLiteCallOnceParams: CALL_ONCE.
struct CallOnceParams {
  int init_subgraph_index;
};
static_assert(sizeof(CallOnceParams) == 4);

// TfLiteHashtableParams: HASHTABLE.
struct HashtableParams {
  int table_id;
  Type key_dtype;
  Type value_dtype;
};
static_assert(sizeof(HashtableParams) == 12);
static_assert(offsetof(HashtableParams, key_dtype) == 4);
static_assert(offsetof(HashtableParams, value_dtype) == 8);

// TfLiteVarHandleParams: VAR_HANDLE (strings point into the model).
struct VarHandleParams {
  const char* container;
  const char* shared_name;
};
static_assert(sizeof(VarHandleParams) == 16);
static_assert(offsetof(VarHandleParams, shared_name) == 8);

// TfLiteRandomParams: RANDOM_STANDARD_NORMAL, RANDOM_UNIFORM, MULTINOMIAL.
struct RandomParams {
  int seed;
  int seed2;
};
static_assert(sizeof(RandomParams) == 8);
static_assert(offsetof(RandomParams, seed2) == 4);

// TfLiteBucketizeParams: BUCKETIZE (boundaries point into the model).
struct BucketizeParams {
  int num_boundaries;
  const float* boundaries;  // 8-aligned: 4 bytes of padding before it
};
static_assert(sizeof(BucketizeParams) == 16);
static_assert(offsetof(BucketizeParams, boundaries) == 8);

// TfLiteGeluParams: GELU.
struct GeluParams {
  bool approximate;
};
static_assert(sizeof(GeluParams) == 1);

// TfLiteReduceWindowParams: REDUCE_WINDOW (the TFLite op, code 205).
struct ReduceWindowParams {
  ReduceWindowFunction reduce_function;
};
static_assert(sizeof(ReduceWindowParams) == 4);

// TfLiteStablehloCompositeParams: STABLEHLO_COMPOSITE (pointers into the
// model). The other StableHLO params structs are not declared here.
struct StablehloCompositeParams {
  const char* name;
  int32_t subgraph_index;
  int32_t version;
  const uint8_t* attributes;  // flexbuffer
  size_t attributes_size;
};
static_assert(sizeof(StablehloCompositeParams) == 32);
static_assert(offsetof(StablehloCompositeParams, subgraph_index) == 8);
static_assert(offsetof(StablehloCompositeParams, version) == 12);
static_assert(offsetof(StablehloCompositeParams, attributes) == 16);
static_assert(offsetof(StablehloCompositeParams, attributes_size) == 24);

}  // namespace tflite_gles::abi
