// The enums used inside TFLite's builtin params structs and the first
// structs in upstream declaration order (ConvParams through
// BidirectionalSequenceLstmParams; tflite_builtin_params2.h continues the
// order): part of tflite_builtin.h (include that), which says where every
// layout here was checked and how.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tflite_abi.h"

namespace tflite_gles::abi {

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

}  // namespace tflite_gles::abi
