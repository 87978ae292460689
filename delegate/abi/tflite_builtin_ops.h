// TFLite builtin operator codes and their names: part of tflite_builtin.h
// (include that), which says where every value here was checked.
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

}  // namespace tflite_gles::abi
