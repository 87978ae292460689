// Layout/shape ops on the GPU against naive references written in TFLite's
// own N-d indexing (independent of the kernels' Shape4 mapping): CONCAT,
// RESHAPE, SQUEEZE, PAD, PADV2, MIRROR_PAD, SLICE, STRIDED_SLICE, SPLIT,
// SPLIT_V, TRANSPOSE, DEPTH_TO_SPACE, SPACE_TO_DEPTH and the basic LSTM.
// Data movement must be exact in fp32; fp16 only rounds the stored values.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <tuple>

#include "delegate/abi/tflite_builtin.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

using Dims = std::vector<int>;

// Row-major flat index of `index` in `dims`.
size_t Flat(const Dims& dims, const Dims& index) {
  size_t flat = 0;
  for (size_t k = 0; k < dims.size(); ++k) flat = flat * dims[k] + index[k];
  return flat;
}

// Calls fn(index) for every index of `dims` in row-major order.
void ForEach(const Dims& dims, const std::function<void(const Dims&)>& fn) {
  Dims index(dims.size(), 0);
  for (size_t n = 0; n < Count(dims); ++n) {
    fn(index);
    for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
}

// Output of `dims` where each element is gather(index) (a source value).
std::vector<float> Gather(const Dims& dims,
                          const std::function<float(const Dims&)>& gather) {
  std::vector<float> out;
  ForEach(dims, [&](const Dims& index) { out.push_back(gather(index)); });
  return out;
}

void ExpectOutput(OpTester& tester, bool fp16, const std::vector<float>& expected,
                  int output = 0) {
  const double error = MaxRelativeError(tester.output(output), expected);
  if (fp16) {
    EXPECT_LE(error, kFp16Tolerance) << "output " << output;
  } else {
    EXPECT_EQ(error, 0.0) << "output " << output << ": fp32 moves must be exact";
  }
}

#define RUN_OR_FAIL(tester, fp16)                 \
  do {                                            \
    Status status_ = (tester).Run(fp16);          \
    ASSERT_TRUE(status_.ok()) << status_.message(); \
  } while (0)

using ChannelCase = std::tuple<int /*channels*/, bool /*fp16*/>;
class ShapeOpTest : public ::testing::TestWithParam<ChannelCase> {};

// ---- CONCATENATION ---------------------------------------------------------

// Concatenates `inputs` (all of rank dims.size()) along `axis`.
std::vector<float> ConcatReference(const std::vector<Dims>& dims,
                                   const std::vector<std::vector<float>>& data,
                                   int axis, const Dims& out) {
  return Gather(out, [&](const Dims& index) {
    Dims at = index;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (at[axis] < dims[k][axis]) {
        return data[k][Flat(dims[k], at)];
      }
      at[axis] -= dims[k][axis];
    }
    return NAN;
  });
}

void RunConcat(const std::vector<Dims>& dims, int axis, bool fp16,
               int const_input = -1) {
  const int rank = static_cast<int>(dims[0].size());
  const int positive_axis = axis < 0 ? axis + rank : axis;
  Dims out = dims[0];
  out[positive_axis] = 0;
  std::vector<std::vector<float>> data;
  OpTester tester(abi::kTfLiteBuiltinConcatenation);
  for (size_t k = 0; k < dims.size(); ++k) {
    data.push_back(RandomData(Count(dims[k]), 31 + k));
    if (static_cast<int>(k) == const_input) {
      tester.AddConstInput(dims[k], data.back());
    } else {
      tester.AddInput(dims[k], data.back());
    }
    out[positive_axis] += dims[k][positive_axis];
  }
  tester.AddOutput(out);
  abi::ConcatenationParams params{};
  params.axis = axis;
  tester.SetParams(params);
  RUN_OR_FAIL(tester, fp16);
  ExpectOutput(tester, fp16,
               ConcatReference(dims, data, positive_axis, out));
}

TEST_P(ShapeOpTest, ConcatAlongChannelsWithConstant) {
  const auto [c, fp16] = GetParam();
  RunConcat({{2, 3, 5, c}, {2, 3, 5, 5}, {2, 3, 5, 13}}, -1, fp16, 1);
  RunConcat({{2, c}, {2, 3}}, 1, fp16);
}

TEST_P(ShapeOpTest, ConcatAlongBatchHeightWidth) {
  const auto [c, fp16] = GetParam();
  RunConcat({{1, 3, 5, c}, {2, 3, 5, c}}, 0, fp16);
  RunConcat({{2, 1, 5, c}, {2, 4, 5, c}, {2, 2, 5, c}}, 1, fp16, 2);
  RunConcat({{2, 3, 1, c}, {2, 3, 6, c}}, -2, fp16);
  RunConcat({{2, 3, c}, {2, 4, c}}, 1, fp16);  // rank 3: width
}

TEST(ShapeOps, ConcatOfTenInputsSplitsIntoDispatches) {
  for (bool fp16 : {false, true}) {
    RunConcat(std::vector<Dims>(10, {1, 2, 3, 1}), 3, fp16);
    RunConcat({{1, 2, 3, 3}, {1, 2, 3, 1}, {1, 2, 3, 2}, {1, 2, 3, 1},
               {1, 2, 3, 1}, {1, 2, 3, 5}, {1, 2, 3, 1}, {1, 2, 3, 1},
               {1, 2, 3, 4}, {1, 2, 3, 1}},
              3, fp16);
    RunConcat(std::vector<Dims>(10, {1, 2, 1, 3}), 2, fp16);
  }
}

// ---- RESHAPE / SQUEEZE ----------------------------------------------------

// SQUEEZE squeezes `squeeze_axes` (empty: every size-1 dim).
void RunReshape(const Dims& in, const Dims& out, bool fp16, int op,
                bool shape_input, const std::vector<int>& squeeze_axes = {}) {
  auto data = RandomData(Count(in), 41);
  OpTester tester(op);
  tester.AddInput(in, data);
  if (op == abi::kTfLiteBuiltinReshape) {
    if (shape_input) {
      std::vector<int32_t> shape(out.begin(), out.end());
      shape[0] = -1;
      tester.AddConstIntInput({static_cast<int>(out.size())}, shape);
    } else {
      abi::ReshapeParams params{};
      params.num_dimensions = static_cast<int>(out.size());
      for (size_t k = 0; k < out.size(); ++k) params.shape[k] = out[k];
      tester.SetParams(params);
    }
  } else {
    abi::SqueezeParams params{};
    params.num_squeeze_dims = static_cast<int>(squeeze_axes.size());
    for (size_t k = 0; k < squeeze_axes.size(); ++k) {
      params.squeeze_dims[k] = squeeze_axes[k];
    }
    tester.SetParams(params);
  }
  tester.AddOutput(out);
  RUN_OR_FAIL(tester, fp16);
  ExpectOutput(tester, fp16, data);  // reshape keeps the element order
}

TEST_P(ShapeOpTest, ReshapeAsViewAndAsRelayout) {
  const auto [c, fp16] = GetParam();
  const int op = abi::kTfLiteBuiltinReshape;
  RunReshape({2, 3, 4, c}, {2, 12, c}, fp16, op, true);     // view
  RunReshape({2, 3, 4, c}, {2, 3, 4 * c}, fp16, op, false);  // relayout
  RunReshape({2, 3, 4, c}, {6, 4, c}, fp16, op, true);
  RunReshape({1, 5, c}, {5, c}, fp16, op, false);
  RunReshape({2, 3 * c}, {2, 3, c, 1}, fp16, op, true);
}

TEST_P(ShapeOpTest, SqueezeListedOrAllUnitDims) {
  const auto [c, fp16] = GetParam();
  const int op = abi::kTfLiteBuiltinSqueeze;
  RunReshape({1, 3, 1, c}, {3, c}, fp16, op, false, {0, -2});
  RunReshape({2, 1, 1, c}, {2, c}, fp16, op, false, {1, 2});
  RunReshape({2, 3, c + 1, 1}, {2, 3, c + 1}, fp16, op, false);
}

// ---- PAD / PADV2 / MIRROR_PAD ---------------------------------------------

enum class PadKind { kZero, kValue, kReflect, kSymmetric };

void RunPad(const Dims& in, const std::vector<int32_t>& paddings, PadKind kind,
            bool fp16) {
  auto data = RandomData(Count(in), 51);
  Dims out = in;
  for (size_t k = 0; k < in.size(); ++k) out[k] += paddings[2 * k] + paddings[2 * k + 1];
  const int op = kind == PadKind::kZero    ? abi::kTfLiteBuiltinPad
                 : kind == PadKind::kValue ? abi::kTfLiteBuiltinPadv2
                                           : abi::kTfLiteBuiltinMirrorPad;
  OpTester tester(op);
  tester.AddInput(in, data);
  tester.AddConstIntInput({static_cast<int>(in.size()), 2}, paddings);
  const float value = 1.625f;
  if (kind == PadKind::kValue) tester.AddConstInput({}, {value});
  if (kind == PadKind::kReflect || kind == PadKind::kSymmetric) {
    abi::MirrorPaddingParams params{};
    params.mode = kind == PadKind::kReflect ? abi::kMirrorPaddingReflect
                                            : abi::kMirrorPaddingSymmetric;
    tester.SetParams(params);
  }
  tester.AddOutput(out);
  RUN_OR_FAIL(tester, fp16);
  auto expected = Gather(out, [&](const Dims& index) {
    Dims at = index;
    for (size_t k = 0; k < in.size(); ++k) {
      int x = at[k] - paddings[2 * k];
      const int n = in[k];
      if (kind == PadKind::kReflect) {
        x = x < 0 ? -x : x >= n ? 2 * (n - 1) - x : x;
      } else if (kind == PadKind::kSymmetric) {
        x = x < 0 ? -x - 1 : x >= n ? 2 * n - 1 - x : x;
      } else if (x < 0 || x >= n) {
        return kind == PadKind::kValue ? value : 0.0f;
      }
      at[k] = x;
    }
    return data[Flat(in, at)];
  });
  ExpectOutput(tester, fp16, expected);
}

TEST_P(ShapeOpTest, PadConstantIncludingChannels) {
  const auto [c, fp16] = GetParam();
  RunPad({2, 3, 5, c}, {0, 1, 1, 2, 2, 0, 1, 2}, PadKind::kZero, fp16);
  RunPad({2, 3, 5, c}, {1, 0, 0, 1, 3, 1, 0, 0}, PadKind::kValue, fp16);
  RunPad({2, c}, {0, 0, 3, 1}, PadKind::kValue, fp16);
}

TEST_P(ShapeOpTest, MirrorPadReflectAndSymmetric) {
  const auto [c, fp16] = GetParam();
  const int cp = std::min(2, c - 1);  // REFLECT allows at most c - 1
  RunPad({2, 3, 5, c}, {0, 0, 1, 2, 2, 1, cp, 1 % c}, PadKind::kReflect, fp16);
  RunPad({2, 3, 5, c}, {1, 1, 3, 2, 2, 5, 1, c}, PadKind::kSymmetric, fp16);
}

// ---- SLICE / STRIDED_SLICE ------------------------------------------------

TEST_P(ShapeOpTest, SliceWithToEndSizes) {
  const auto [c, fp16] = GetParam();
  const Dims in = {2, 5, 7, c + 4};
  auto data = RandomData(Count(in), 61);
  for (int c0 : {0, 1, 4}) {
    const std::vector<int32_t> begin = {1, 1, 2, c0};
    const std::vector<int32_t> size = {-1, 3, -1, c};
    const Dims out = {1, 3, 5, c};
    OpTester tester(abi::kTfLiteBuiltinSlice);
    tester.AddInput(in, data);
    tester.AddConstIntInput({4}, begin);
    tester.AddConstIntInput({4}, size);
    tester.AddOutput(out);
    RUN_OR_FAIL(tester, fp16);
    ExpectOutput(tester, fp16, Gather(out, [&](const Dims& i) {
      return data[Flat(in, {i[0] + 1, i[1] + 1, i[2] + 2, i[3] + c0})];
    }));
  }
}

void RunStridedSlice(const Dims& in, const std::vector<int32_t>& begin,
                     const std::vector<int32_t>& end,
                     const std::vector<int32_t>& strides,
                     const abi::StridedSliceParams& params, const Dims& out,
                     const std::function<Dims(const Dims&)>& source, bool fp16) {
  auto data = RandomData(Count(in), 71);
  OpTester tester(abi::kTfLiteBuiltinStridedSlice);
  tester.AddInput(in, data);
  const int spec = static_cast<int>(begin.size());
  tester.AddConstIntInput({spec}, begin);
  tester.AddConstIntInput({spec}, end);
  tester.AddConstIntInput({spec}, strides);
  tester.AddOutput(out);
  tester.SetParams(params);
  RUN_OR_FAIL(tester, fp16);
  ExpectOutput(tester, fp16, Gather(out, [&](const Dims& i) {
    return data[Flat(in, source(i))];
  }));
}

TEST_P(ShapeOpTest, StridedSliceMasksNegativeStridesAndShrink) {
  const auto [c, fp16] = GetParam();
  abi::StridedSliceParams params{};
  // Stride 2 over height, -6 (= 1) to 7 over width with stride 3; the
  // masks ignore begin 1 of the channels and end 0 of them (all channels).
  params.begin_mask = 0b1001;
  params.end_mask = 0b1000;
  RunStridedSlice({2, 5, 7, c + 1}, {1, 0, -6, 1}, {2, 5, 7, 0}, {1, 2, 3, 1},
                  params, {2, 3, 2, c + 1},
                  [](const Dims& i) { return Dims{i[0], 2 * i[1], 1 + 3 * i[2], i[3]}; },
                  fp16);
  // Reverse width and channels.
  params = {};
  params.end_mask = 0b1010;
  RunStridedSlice({2, 3, 6, c}, {0, 2, 4, -1}, {2, 0, 0, 0}, {1, -1, -2, -1},
                  params, {2, 3, 2, c},
                  [c](const Dims& i) {
                    return Dims{i[0], 2 - i[1], 4 - 2 * i[2], c - 1 - i[3]};
                  },
                  fp16);
  // [..., None, 1:3] on a rank-3 input: a new axis before the last.
  params = {};
  params.ellipsis_mask = 0b001;
  params.new_axis_mask = 0b010;
  RunStridedSlice({2, 5, c + 3}, {0, 0, 1}, {0, 0, 3}, {1, 1, 1}, params,
                  {2, 5, 1, 2},
                  [](const Dims& i) { return Dims{i[0], i[1], 1 + i[3]}; }, fp16);
  // Shrink height: rank 4 -> rank 3 ([b, w, c]).
  params = {};
  params.shrink_axis_mask = 0b0010;
  RunStridedSlice({2, 4, 5, c}, {0, -2, 1, 0}, {2, 0, 5, c}, {1, 1, 1, 1},
                  params, {2, 4, c},
                  [](const Dims& i) { return Dims{i[0], 2, 1 + i[1], i[2]}; },
                  fp16);
}

// ---- SPLIT / SPLIT_V -------------------------------------------------------

TEST_P(ShapeOpTest, SplitAndSplitV) {
  const auto [c, fp16] = GetParam();
  {
    const Dims in = {2, 3, 6, c};
    auto data = RandomData(Count(in), 81);
    OpTester tester(abi::kTfLiteBuiltinSplit);
    tester.AddConstIntInput({}, {-2});
    tester.AddInput(in, data);
    for (int k = 0; k < 3; ++k) tester.AddOutput({2, 3, 2, c});
    abi::SplitParams params{3};
    tester.SetParams(params);
    RUN_OR_FAIL(tester, fp16);
    for (int k = 0; k < 3; ++k) {
      ExpectOutput(tester, fp16, Gather({2, 3, 2, c}, [&](const Dims& i) {
        return data[Flat(in, {i[0], i[1], 2 * k + i[2], i[3]})];
      }), k);
    }
  }
  {
    const Dims in = {2, 3, c + 5};
    auto data = RandomData(Count(in), 82);
    const std::vector<int> sizes = {c, 3, 2};
    OpTester tester(abi::kTfLiteBuiltinSplitV);
    tester.AddInput(in, data);
    tester.AddConstIntInput({3}, {c, 3, -1});
    tester.AddConstIntInput({}, {2});
    for (int size : sizes) tester.AddOutput({2, 3, size});
    tester.SetParams(abi::SplitVParams{3});
    RUN_OR_FAIL(tester, fp16);
    int offset = 0;
    for (int k = 0; k < 3; ++k) {
      ExpectOutput(tester, fp16, Gather({2, 3, sizes[k]}, [&](const Dims& i) {
        return data[Flat(in, {i[0], i[1], offset + i[2]})];
      }), k);
      offset += sizes[k];
    }
  }
}

// ---- TRANSPOSE / DEPTH_TO_SPACE / SPACE_TO_DEPTH ----------------------------

void RunTranspose(const Dims& in, const std::vector<int32_t>& perm, bool fp16) {
  auto data = RandomData(Count(in), 91);
  Dims out;
  for (int p : perm) out.push_back(in[p]);
  OpTester tester(abi::kTfLiteBuiltinTranspose);
  tester.AddInput(in, data);
  tester.AddConstIntInput({static_cast<int>(perm.size())}, perm);
  tester.AddOutput(out);
  RUN_OR_FAIL(tester, fp16);
  ExpectOutput(tester, fp16, Gather(out, [&](const Dims& i) {
    Dims at(in.size());
    for (size_t k = 0; k < perm.size(); ++k) at[perm[k]] = i[k];
    return data[Flat(in, at)];
  }));
}

TEST_P(ShapeOpTest, TransposeRanks2To4) {
  const auto [c, fp16] = GetParam();
  RunTranspose({2, 3, 5, c}, {0, 2, 1, 3}, fp16);
  RunTranspose({2, 3, 5, c}, {0, 3, 1, 2}, fp16);
  RunTranspose({2, 3, 5, c}, {3, 2, 0, 1}, fp16);
  RunTranspose({3, 5, c}, {2, 0, 1}, fp16);
  RunTranspose({5, c}, {1, 0}, fp16);
}

TEST_P(ShapeOpTest, DepthToSpaceAndBack) {
  const auto [c, fp16] = GetParam();
  for (int block : {2, 3}) {
    const Dims deep = {2, 3, 2, block * block * c};
    const Dims wide = {2, 3 * block, 2 * block, c};
    for (bool to_space : {true, false}) {
      const Dims& in = to_space ? deep : wide;
      const Dims& out = to_space ? wide : deep;
      auto data = RandomData(Count(in), 101);
      OpTester tester(to_space ? abi::kTfLiteBuiltinDepthToSpace
                               : abi::kTfLiteBuiltinSpaceToDepth);
      tester.AddInput(in, data);
      tester.AddOutput(out);
      tester.SetParams(abi::DepthToSpaceParams{block});
      RUN_OR_FAIL(tester, fp16);
      // Element (b, y, x, ch) of the wide tensor is element (b, y / block,
      // x / block, ((y % block) * block + x % block) * c + ch) of the deep.
      auto deep_index = [&](const Dims& w) {
        return Dims{w[0], w[1] / block, w[2] / block,
                    ((w[1] % block) * block + w[2] % block) * c + w[3]};
      };
      std::vector<float> expected(Count(out));
      ForEach(wide, [&](const Dims& w) {
        if (to_space) {
          expected[Flat(wide, w)] = data[Flat(deep, deep_index(w))];
        } else {
          expected[Flat(deep, deep_index(w))] = data[Flat(wide, w)];
        }
      });
      ExpectOutput(tester, fp16, expected);
    }
  }
}

// ---- LSTM (basic kernel) ----------------------------------------------------

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

using LstmCase = std::tuple<int /*batch*/, int /*input depth*/, int /*depth*/, bool>;
class LstmTest : public ::testing::TestWithParam<LstmCase> {};

TEST_P(LstmTest, BasicCellMatchesReference) {
  const auto [batch, input_depth, depth, fp16] = GetParam();
  const int total = input_depth + depth;
  auto input = RandomData(batch * input_depth, 111);
  auto prev_activation = RandomData(batch * depth, 112, -1, 1);
  auto weights = RandomData(4 * depth * total, 113, -0.5f, 0.5f);
  auto biases = RandomData(4 * depth, 114, -0.5f, 0.5f);
  auto prev_state = RandomData(batch * depth, 115);
  OpTester tester(abi::kTfLiteBuiltinLstm, /*version=*/2);
  tester.AddInput({batch, input_depth}, input);
  tester.AddInput({batch, depth}, prev_activation);
  tester.AddConstInput({4 * depth, total}, weights);
  tester.AddConstInput({4 * depth}, biases);
  tester.AddInput({batch, depth}, prev_state);
  tester.AddOutput({batch, depth});
  tester.AddOutput({batch, depth});
  tester.AddOutput({batch, total});
  tester.AddOutput({batch, 4 * depth});
  abi::LstmParams params{};
  params.activation = abi::kActTanh;
  params.kernel_type = abi::kLstmBasicKernel;
  tester.SetParams(params);
  RUN_OR_FAIL(tester, fp16);

  std::vector<float> activation, state, concat, temp;
  for (int b = 0; b < batch; ++b) {
    std::vector<double> x;
    for (int i = 0; i < input_depth; ++i) x.push_back(input[b * input_depth + i]);
    for (int i = 0; i < depth; ++i) x.push_back(prev_activation[b * depth + i]);
    for (double v : x) concat.push_back(static_cast<float>(v));
    std::vector<double> gates(4 * depth);
    for (int n = 0; n < 4 * depth; ++n) {
      double sum = biases[n];
      for (int k = 0; k < total; ++k) sum += x[k] * weights[n * total + k];
      gates[n] = sum;
      temp.push_back(static_cast<float>(sum));
    }
    for (int c = 0; c < depth; ++c) {
      const double new_state =
          Sigmoid(gates[c]) * std::tanh(gates[depth + c]) +
          Sigmoid(gates[2 * depth + c]) * prev_state[b * depth + c];
      state.push_back(static_cast<float>(new_state));
      activation.push_back(
          static_cast<float>(Sigmoid(gates[3 * depth + c]) * std::tanh(new_state)));
    }
  }
  const double tolerance = fp16 ? kFp16Tolerance : kFp32Tolerance;
  EXPECT_LE(MaxRelativeError(tester.output(0), activation), tolerance);
  EXPECT_LE(MaxRelativeError(tester.output(1), state), tolerance);
  ExpectOutput(tester, fp16, concat, 2);  // the inputs, moved
  EXPECT_LE(MaxRelativeError(tester.output(3), temp), tolerance);
}

INSTANTIATE_TEST_SUITE_P(Shape, LstmTest,
                         ::testing::Values(LstmCase{1, 3, 4, false},
                                           LstmCase{2, 5, 5, false},
                                           LstmCase{2, 8, 13, false},
                                           LstmCase{1, 3, 4, true},
                                           LstmCase{2, 5, 13, true}));

// ---- Declined parameters ---------------------------------------------------

void ExpectDeclined(OpTester& tester, const std::string& reason) {
  Status status = tester.Check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(reason), std::string::npos) << status.message();
}

TEST(ShapeOpsDecline, ConcatWithAFusedActivationLikeTheCpuKernel) {
  OpTester tester(abi::kTfLiteBuiltinConcatenation);
  tester.AddInput({1, 2, 2, 3}, RandomData(12, 1));
  tester.AddInput({1, 2, 2, 3}, RandomData(12, 2));
  tester.AddOutput({1, 2, 2, 6});
  abi::ConcatenationParams params{};
  params.axis = 3;
  params.activation = abi::kActRelu;
  tester.SetParams(params);
  ExpectDeclined(tester, "refuses them too");
}

TEST(ShapeOpsDecline, StridedSliceWithTwoEllipses) {
  OpTester tester(abi::kTfLiteBuiltinStridedSlice);
  tester.AddInput({1, 4, 4, 3}, RandomData(48, 1));
  for (int k = 0; k < 3; ++k) tester.AddConstIntInput({4}, {0, 0, 0, 0});
  tester.AddOutput({1, 4, 4, 3});
  abi::StridedSliceParams params{};
  params.ellipsis_mask = 0b101;
  tester.SetParams(params);
  ExpectDeclined(tester, "more than one ellipsis");
}

TEST(ShapeOpsDecline, LstmFullKernel) {
  OpTester tester(abi::kTfLiteBuiltinLstm, 2);
  abi::LstmParams params{};
  params.activation = abi::kActTanh;
  params.kernel_type = abi::kLstmFullKernel;
  tester.SetParams(params);
  tester.AddInput({1, 2}, RandomData(2, 1));
  tester.AddOutput({1, 2});
  ExpectDeclined(tester, "basic LSTM kernel");
}

TEST(ShapeOpsDecline, MirrorPadTooWide) {
  OpTester tester(abi::kTfLiteBuiltinMirrorPad);
  tester.AddInput({1, 2, 2, 1}, RandomData(4, 1));
  tester.AddConstIntInput({4, 2}, {0, 0, 2, 0, 0, 0, 0, 0});
  tester.AddOutput({1, 4, 2, 1});
  abi::MirrorPaddingParams params{};
  params.mode = abi::kMirrorPaddingReflect;
  tester.SetParams(params);
  ExpectDeclined(tester, "mirror padding of 2");
}

TEST(ShapeOpsDecline, NonConstantPermutation) {
  OpTester tester(abi::kTfLiteBuiltinTranspose);
  tester.AddInput({2, 3}, RandomData(6, 1));
  tester.AddInput({2}, {1, 0});
  tester.AddOutput({3, 2});
  ExpectDeclined(tester, "must be a constant");
}

INSTANTIATE_TEST_SUITE_P(Shape, ShapeOpTest,
                         ::testing::Combine(::testing::Values(1, 3, 4, 5, 8, 13),
                                            ::testing::Bool()));

}  // namespace
}  // namespace tflite_gles::testing
