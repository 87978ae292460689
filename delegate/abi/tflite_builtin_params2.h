// TFLite's builtin params structs from ResizeBilinearParams on, in upstream
// declaration order (continuing tflite_builtin_params.h): part of
// tflite_builtin.h (include that), which says where every layout here was
// checked and how.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tflite_abi.h"
#include "tflite_builtin_params.h"

namespace tflite_gles::abi {

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
