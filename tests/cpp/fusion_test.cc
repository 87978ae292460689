// FuseEpilogues on hand-made dispatch lists with known answers: what folds,
// where the fused dispatch lands, what it reads and writes, and every
// condition that must keep a dispatch apart (the end-to-end numbers are in
// tests/python/test_fusion.py).
#include <gtest/gtest.h>

#include <vector>

#include "delegate/passes/fusion.h"

namespace tflite_gles {
namespace {

class FusionTest : public ::testing::Test {
 protected:
  ValueId Tensor(int c = 8, Value::Kind kind = Value::Kind::kIntermediate) {
    Value value;
    value.kind = kind;
    value.shape.b = 1;
    value.shape.h = 4;
    value.shape.w = 5;
    value.shape.c = c;
    values_.push_back(value);
    return static_cast<ValueId>(values_.size() - 1);
  }
  ValueId Constant(std::vector<float> data) {
    Value value;
    value.kind = Value::Kind::kConstant;
    value.constant_data = std::move(data);
    values_.push_back(value);
    return static_cast<ValueId>(values_.size() - 1);
  }
  ValueId PerChannel(int c) {
    ValueId id = Tensor(c, Value::Kind::kConstant);
    values_[id].shape.h = values_[id].shape.w = 1;
    return id;
  }
  Dispatch Conv(ValueId in, ValueId out, const char* shader = "conv2d") {
    Dispatch d;
    d.shader = shader;
    d.label = "conv";
    d.inputs = {in, Constant({1, 1, 1, 1}), Constant({0, 0, 0, 0})};
    d.outputs = {out};
    return d;
  }
  Dispatch Elementwise(std::vector<ValueId> inputs, ValueId out,
                       std::map<std::string, std::string> defines) {
    Dispatch d;
    d.shader = "elementwise";
    d.label = "elementwise";
    d.inputs = std::move(inputs);
    d.outputs = {out};
    d.defines = std::move(defines);
    return d;
  }
  int Fuse(std::vector<Dispatch>* list, std::vector<ValueId> keep = {}) {
    return FuseEpilogues(values_, keep, list);
  }
  std::vector<Value> values_;
};

TEST_F(FusionTest, ConvAddReluFoldsIntoOneDispatchAtTheConsumersPlace) {
  const ValueId x = Tensor(), y = Tensor(), skip = Tensor(), sum = Tensor(),
                out = Tensor(8, Value::Kind::kOutput), other_in = Tensor(),
                other_out = Tensor(8, Value::Kind::kOutput);
  std::vector<Dispatch> list = {
      Conv(x, y),
      Conv(other_in, other_out, "depthwise_conv2d"),  // unrelated, in between
      Elementwise({y, skip}, sum, {{"OP_ADD", ""}}),
      Elementwise({sum}, out, {{"ACT_RELU", ""}})};
  EXPECT_EQ(Fuse(&list), 2);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].shader, "depthwise_conv2d");
  const Dispatch& fused = list[1];
  EXPECT_EQ(fused.shader, "conv2d");
  EXPECT_EQ(fused.outputs, std::vector<ValueId>{out});
  ASSERT_EQ(fused.inputs.size(), 4u);
  EXPECT_EQ(fused.inputs[0], x);
  EXPECT_EQ(fused.inputs[3], skip);
  EXPECT_TRUE(fused.defines.count("EPILOGUE_IN"));
  const std::string expression = fused.defines.at(kEpilogueDefine);
  EXPECT_NE(expression.find("LOAD(epilogue_in, index)"), std::string::npos);
  // RELU outermost (the epilogue names elementwise_ops.glsl's functions).
  EXPECT_EQ(expression.find("ew_relu("), 0u) << expression;
}

TEST_F(FusionTest, OperandOrderIsKeptForSubtraction) {
  const ValueId x = Tensor(), y = Tensor(), a = Tensor(), out = Tensor(8, Value::Kind::kOutput);
  std::vector<Dispatch> list = {Conv(x, y), Elementwise({a, y}, out, {{"OP_SUB", ""}})};
  EXPECT_EQ(Fuse(&list), 1);
  const std::string expression = list[0].defines.at(kEpilogueDefine);
  EXPECT_NE(expression.find("ew_sub(LOAD(epilogue_in, index), x)"), std::string::npos)
      << expression;
}

TEST_F(FusionTest, PerChannelAndLiteralOperands) {
  const ValueId x = Tensor(), y = Tensor(), scale = PerChannel(8), z = Tensor(),
                out = Tensor(8, Value::Kind::kOutput);
  std::vector<Dispatch> list = {
      Conv(x, y), Elementwise({y, scale}, z, {{"OP_MUL", ""}}),
      Elementwise({z}, out, {{"OP_ADD", ""}, {"B_LITERAL", ""}, {"B_VALUE", "0.5"}})};
  EXPECT_EQ(Fuse(&list), 2);
  ASSERT_EQ(list.size(), 1u);
  const std::string expression = list[0].defines.at(kEpilogueDefine);
  EXPECT_NE(expression.find("LOAD(epilogue_in, slice)"), std::string::npos) << expression;
  EXPECT_NE(expression.find("vec4(0.5)"), std::string::npos) << expression;
}

TEST_F(FusionTest, NothingFoldsWhenTheConvOutputIsNeededElsewhere) {
  const ValueId x = Tensor(), y = Tensor(), r = Tensor(8, Value::Kind::kOutput),
                s = Tensor(8, Value::Kind::kOutput);
  // A second reader.
  std::vector<Dispatch> two_readers = {Conv(x, y), Elementwise({y}, r, {{"ACT_RELU", ""}}),
                                       Elementwise({y}, s, {{"OP_NEG", ""}})};
  EXPECT_EQ(Fuse(&two_readers), 0);
  EXPECT_EQ(two_readers.size(), 3u);
  // A partition output, a write-back source, a view of it.
  const ValueId y_out = Tensor(8, Value::Kind::kOutput), t = Tensor(8, Value::Kind::kOutput);
  std::vector<Dispatch> output = {Conv(x, y_out), Elementwise({y_out}, t, {{"ACT_RELU", ""}})};
  EXPECT_EQ(Fuse(&output), 0);
  const ValueId w = Tensor(), u = Tensor(8, Value::Kind::kOutput);
  std::vector<Dispatch> write_back = {Conv(x, w), Elementwise({w}, u, {{"ACT_RELU", ""}})};
  EXPECT_EQ(Fuse(&write_back, {w}), 0);
  const ValueId v = Tensor(), v_out = Tensor(8, Value::Kind::kOutput);
  Value view = values_[v];
  view.storage_of = v;
  values_.push_back(view);
  std::vector<Dispatch> viewed = {Conv(x, v), Elementwise({v}, v_out, {{"ACT_RELU", ""}})};
  EXPECT_EQ(Fuse(&viewed), 0);
}

TEST_F(FusionTest, PreluFoldsWithAlphaAsItsOperand) {
  // ENet-style blocks: conv -> PRELU (per-channel alpha), then a residual
  // conv + ADD whose PRELU has no binding left and stays.
  const ValueId x = Tensor(), y = Tensor(), alpha = PerChannel(8), z = Tensor(),
                w = Tensor(), s = Tensor(), out = Tensor(8, Value::Kind::kOutput);
  std::vector<Dispatch> list = {Conv(x, y), Elementwise({y, alpha}, z, {{"OP_PRELU", ""}}),
                                Conv(z, w), Elementwise({w, x}, s, {{"OP_ADD", ""}}),
                                Elementwise({s, alpha}, out, {{"OP_PRELU", ""}})};
  EXPECT_EQ(Fuse(&list), 2);
  ASSERT_EQ(list.size(), 3u);
  const std::string expression = list[0].defines.at(kEpilogueDefine);
  EXPECT_NE(expression.find("ew_prelu(x, LOAD(epilogue_in, slice))"), std::string::npos)
      << expression;
  EXPECT_EQ(list[2].shader, "elementwise");
  EXPECT_EQ(list[2].outputs[0], out);
}

TEST_F(FusionTest, UnfusableStepsAndShapesStayApart) {
  const ValueId x = Tensor(), y = Tensor(), out = Tensor(8, Value::Kind::kOutput);
  for (const char* op : {"OP_POW", "OP_LOGICAL_AND", "OP_SQRT"}) {
    std::vector<Dispatch> list = {Conv(x, y), Elementwise({y, x}, out, {{op, ""}})};
    EXPECT_EQ(Fuse(&list), 0) << op;
  }
  std::vector<Dispatch> splat = {
      Conv(x, y), Elementwise({y, x}, out, {{"OP_ADD", ""}, {"B_SPLAT", ""}})};
  EXPECT_EQ(Fuse(&splat), 0);
  // Broadcast over the pixels of a non-per-channel operand.
  const ValueId row = Tensor();
  values_[row].shape.h = 1;
  std::vector<Dispatch> broadcast = {Conv(x, y), Elementwise({y, row}, out, {{"OP_ADD", ""}})};
  EXPECT_EQ(Fuse(&broadcast), 0);
  // A second tensor operand: the first one takes the only extra binding.
  const ValueId a = Tensor(), b = Tensor(), z = Tensor();
  std::vector<Dispatch> two = {Conv(x, y), Elementwise({y, a}, z, {{"OP_ADD", ""}}),
                               Elementwise({z, b}, out, {{"OP_MUL", ""}})};
  EXPECT_EQ(Fuse(&two), 1);
  EXPECT_EQ(two.size(), 2u);
}

TEST_F(FusionTest, AtMostKMaxEpilogueStepsPerProducer) {
  ValueId previous = Tensor();
  const ValueId x = Tensor();
  std::vector<Dispatch> list = {Conv(x, previous)};
  for (int i = 0; i < kMaxEpilogueSteps + 2; ++i) {
    const ValueId next = Tensor();
    list.push_back(Elementwise({previous}, next, {{"ACT_RELU", ""}}));
    previous = next;
  }
  // The conv takes kMaxEpilogueSteps of the chain; the next elementwise
  // dispatch stays and is itself a producer: the last one folds into it.
  EXPECT_EQ(Fuse(&list), kMaxEpilogueSteps + 1);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].shader, "conv2d");
  EXPECT_EQ(list[1].shader, "elementwise");
  EXPECT_EQ(list[1].outputs[0], previous);
}

}  // namespace
}  // namespace tflite_gles
