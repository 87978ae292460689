// Depthwise-into-GEMM fusion (delegate/passes/dw_fusion.h, gemm.comp's
// DW_PROLOGUE_*) forced on whatever GPU runs the tests (llvmpipe in CI,
// where the delegate would not choose gemm.comp), on small graphs of real
// kernels: DEPTHWISE_CONV_2D 3x3 -> CONV_2D 1x1 (-> ADD), against a naive
// float64 reference, fused and unfused. Strides 1 and 2, SAME and VALID,
// channel counts that are no multiple of 4, batch 2, the depthwise's and
// the GEMM's activations, an epilogue after the GEMM, forced tiles; and a
// depthwise output with a second reader, which must not fuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "delegate/device/device_tuning.h"
#include "delegate/kernels/quantize.h"
#include "delegate/kernels/registry.h"
#include "delegate/runtime/runtime.h"
#include "delegate/abi/tflite_builtin.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

// A few TFLite nodes in one partition, built and run as the delegate does
// (every node's kernel, then PartitionRuntime::Create).
class GraphTester {
 public:
  GraphTester() { tensors_.reserve(32); }

  int AddTensor(const std::vector<int>& dims, std::vector<float> data,
                bool constant) {
    auto storage = std::make_unique<TensorStorage>();
    storage->dims.push_back(static_cast<int>(dims.size()));
    storage->dims.insert(storage->dims.end(), dims.begin(), dims.end());
    if (data.empty()) data.assign(Count(dims), std::numeric_limits<float>::quiet_NaN());
    storage->floats = std::move(data);
    abi::Tensor tensor{};
    tensor.type = abi::kFloat32;
    tensor.allocation_type = constant ? abi::kMmapRo : abi::kArenaRw;
    tensors_.push_back(tensor);
    storage_.push_back(std::move(storage));
    return static_cast<int>(tensors_.size()) - 1;
  }

  // Makes `tensor` a per-tensor quantized int8 activation (the float view of
  // delegate/graph/quantization.h): the simulator rounds it to its grid.
  void Quantize(int tensor, float scale, int zero_point) {
    TensorStorage& s = *storage_[static_cast<size_t>(tensor)];
    s.scale = {1, 0};
    std::memcpy(&s.scale[1], &scale, sizeof(float));
    s.zero_point = {1, zero_point};
    tensors_[static_cast<size_t>(tensor)].type = abi::kInt8;
    tensors_[static_cast<size_t>(tensor)].params = {scale, zero_point};
  }

  template <typename Params>
  void AddNode(int builtin, const Params& params, const std::vector<int>& inputs,
               const std::vector<int>& outputs) {
    auto node = std::make_unique<NodeStorage>();
    node->registration.builtin_code = builtin;
    node->registration.version = 1;
    node->params.assign(reinterpret_cast<const char*>(&params),
                        reinterpret_cast<const char*>(&params) + sizeof(Params));
    node->inputs.push_back(static_cast<int>(inputs.size()));
    node->inputs.insert(node->inputs.end(), inputs.begin(), inputs.end());
    node->outputs.push_back(static_cast<int>(outputs.size()));
    node->outputs.insert(node->outputs.end(), outputs.begin(), outputs.end());
    nodes_.push_back(std::move(node));
  }

  // Runs the graph once; `inputs` and `outputs` are the partition's.
  Status Run(const std::vector<int>& inputs, const std::vector<int>& outputs,
             bool fp16, bool fuse) {
    for (size_t i = 0; i < tensors_.size(); ++i) {
      tensors_[i].dims = reinterpret_cast<abi::IntArray*>(storage_[i]->dims.data());
      tensors_[i].data = storage_[i]->floats.data();
      tensors_[i].bytes = storage_[i]->floats.size() * sizeof(float);
      if (!storage_[i]->scale.empty()) {
        TensorStorage& s = *storage_[i];
        s.affine.scale = reinterpret_cast<abi::FloatArray*>(s.scale.data());
        s.affine.zero_point = reinterpret_cast<abi::IntArray*>(s.zero_point.data());
        tensors_[i].quantization = {abi::kAffineQuantization, &s.affine};
      }
    }
    plan_ = {static_cast<int>(nodes_.size())};
    for (size_t i = 0; i < nodes_.size(); ++i) {
      NodeStorage& n = *nodes_[i];
      n.node.inputs = reinterpret_cast<abi::IntArray*>(n.inputs.data());
      n.node.outputs = reinterpret_cast<abi::IntArray*>(n.outputs.data());
      n.node.builtin_data = n.params.data();
      plan_.push_back(static_cast<int>(i));
    }
    context_.tensors = tensors_.data();
    context_.tensors_size = tensors_.size();
    context_.impl_ = this;
    context_.GetExecutionPlan = [](abi::Context* context, abi::IntArray** plan) {
      auto* self = static_cast<GraphTester*>(context->impl_);
      *plan = reinterpret_cast<abi::IntArray*>(self->plan_.data());
      return abi::kOk;
    };
    context_.GetNodeAndRegistration = [](abi::Context* context, int index,
                                         abi::Node** node,
                                         abi::Registration** registration) {
      auto* self = static_cast<GraphTester*>(context->impl_);
      *node = &self->nodes_[index]->node;
      *registration = &self->nodes_[index]->registration;
      return abi::kOk;
    };
    const egl::GlEnvironment& env = TestEnvironment();
    DeviceProfile device;
    device.gpu = &TestGpuInfo();
    device.fp16 = fp16;
    device.texture_buffer_reads =
        TestGpuInfo().has_texture_buffer && PreferTextureBufferReads(TestGpuInfo());
    device.staging_texture_reads =
        TestGpuInfo().has_texture_buffer && !device.texture_buffer_reads;
    TuneForDevice(&device);
    device.shared_memory_gemm = true;
    device.fuse_depthwise_into_gemm = fuse;
    device.split_depthwise_gemm_k = split_k_;
    device.gemm_tile_override = tile_;
    TFG_RETURN_IF_ERROR(env.EnsureCurrent());
    GraphContext graph(&context_);
    GraphBuilder builder(graph, device);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      NodeView view(&context_, static_cast<int>(i), &nodes_[i]->node,
                    &nodes_[i]->registration);
      auto kernel = KernelRegistry::Global().Find(view, graph, device);
      if (!kernel.ok()) return kernel.status();
      TFG_RETURN_IF_ERROR((*kernel)->build(view, builder));
      // As the partition build does: quantized outputs get the simulator.
      TFG_RETURN_IF_ERROR(SimulateQuantizedOutputs(view, builder).status());
    }
    ProgramCache programs;
    TFG_ASSIGN_OR_RETURN(auto runtime, PartitionRuntime::Create(
                                           builder, inputs, outputs, device, programs));
    TFG_RETURN_IF_ERROR(runtime->Allocate());
    TFG_RETURN_IF_ERROR(runtime->Run(&context_, false));
    dispatches_ = runtime->dispatch_count();
    arena_tensors_ = runtime->memory().arena_tensors;
    return Status::Ok();
  }

  const std::vector<float>& data(int tensor) const { return storage_[tensor]->floats; }
  int dispatches() const { return dispatches_; }
  long long arena_tensors() const { return arena_tensors_; }
  void set_tile(const std::string& tile) { tile_ = tile; }
  void set_split_k(bool split_k) { split_k_ = split_k; }

 private:
  struct TensorStorage {
    std::vector<int> dims;
    std::vector<float> floats;
    std::vector<int> scale;  // a FloatArray: size, then the float's bits
    std::vector<int> zero_point;
    abi::AffineQuantization affine{};
  };
  struct NodeStorage {
    abi::Node node{};
    abi::Registration registration{};
    std::vector<char> params;
    std::vector<int> inputs, outputs;
  };
  abi::Context context_{};
  std::vector<abi::Tensor> tensors_;
  std::vector<std::unique_ptr<TensorStorage>> storage_;
  std::vector<std::unique_ptr<NodeStorage>> nodes_;
  std::vector<int> plan_;
  std::string tile_;
  bool split_k_ = false;
  int dispatches_ = 0;
  long long arena_tensors_ = 0;
};

int OutputSize(int in, int stride, abi::Padding padding) {
  return padding == abi::kPaddingSame ? (in + stride - 1) / stride
                                      : (in - 3) / stride + 1;
}

// 3x3 depthwise, multiplier 1, NHWC, float64 sums.
std::vector<float> DepthwiseReference(const std::vector<float>& x, int b, int h,
                                      int w, int c, int stride, abi::Padding padding,
                                      const std::vector<float>& filter,
                                      const std::vector<float>& bias,
                                      abi::FusedActivation act) {
  const int oh = OutputSize(h, stride, padding), ow = OutputSize(w, stride, padding);
  const int pad_top = std::max(0, ((oh - 1) * stride + 3 - h)) / 2;
  const int pad_left = std::max(0, ((ow - 1) * stride + 3 - w)) / 2;
  std::vector<float> out;
  for (int n = 0; n < b; ++n)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          double sum = bias[ch];
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              const int y = oy * stride - pad_top + ky, xx = ox * stride - pad_left + kx;
              if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
              sum += static_cast<double>(x[((static_cast<size_t>(n) * h + y) * w + xx) * c + ch]) *
                     filter[(ky * 3 + kx) * c + ch];
            }
          out.push_back(static_cast<float>(Activate(sum, act)));
        }
  return out;
}

struct ChainCase {
  int batch, height, width, channels, out_channels, stride;
  abi::Padding padding;
  abi::FusedActivation dw_act, pw_act;
  bool add_after;  // an ADD of another input after the GEMM (an epilogue)
  std::string tile;
};

// Builds dw -> pw (-> add), runs it fused and unfused, and checks both
// against the reference and that fusion removed one dispatch and tensor.
void RunChain(const ChainCase& c, bool fp16, uint32_t seed) {
  SCOPED_TRACE(std::to_string(c.batch) + "x" + std::to_string(c.height) + "x" +
               std::to_string(c.width) + "x" + std::to_string(c.channels) + "->" +
               std::to_string(c.out_channels) + " stride " + std::to_string(c.stride) +
               (c.padding == abi::kPaddingSame ? " SAME" : " VALID") + " tile '" +
               c.tile + "'" + (fp16 ? " fp16" : " fp32"));
  const int oh = OutputSize(c.height, c.stride, c.padding);
  const int ow = OutputSize(c.width, c.stride, c.padding);
  const std::vector<int> in_dims = {c.batch, c.height, c.width, c.channels};
  const std::vector<int> out_dims = {c.batch, oh, ow, c.out_channels};
  auto x = AsStored(RandomData(Count(in_dims), seed, -2, 2), fp16);
  auto filter = AsStored(RandomData(9 * c.channels, seed + 1, -1, 1), fp16);
  auto dw_bias = AsStored(RandomData(c.channels, seed + 2, -1, 1), fp16);
  auto w = AsStored(RandomData(static_cast<size_t>(c.out_channels) * c.channels,
                               seed + 3, -0.5f, 0.5f), fp16);
  auto bias = AsStored(RandomData(c.out_channels, seed + 4, -1, 1), fp16);
  auto skip = AsStored(RandomData(Count(out_dims), seed + 5, -1, 1), fp16);

  std::vector<float> expected = FullyConnectedReference(
      DepthwiseReference(x, c.batch, c.height, c.width, c.channels, c.stride,
                         c.padding, filter, dw_bias, c.dw_act),
      c.batch * oh * ow, c.channels, w, c.out_channels, bias, c.pw_act);
  if (c.add_after) {
    for (size_t i = 0; i < expected.size(); ++i) expected[i] += skip[i];
  }

  int dispatches[2] = {0, 0};
  long long arena_tensors[2] = {0, 0};
  for (bool fuse : {false, true}) {
    GraphTester graph;
    graph.set_tile(c.tile);
    const int in = graph.AddTensor(in_dims, x, false);
    const int dw_w = graph.AddTensor({1, 3, 3, c.channels}, filter, true);
    const int dw_b = graph.AddTensor({c.channels}, dw_bias, true);
    const int mid = graph.AddTensor({c.batch, oh, ow, c.channels}, {}, false);
    const int pw_w = graph.AddTensor({c.out_channels, 1, 1, c.channels}, w, true);
    const int pw_b = graph.AddTensor({c.out_channels}, bias, true);
    const int pw_out = graph.AddTensor(out_dims, {}, false);
    graph.AddNode(abi::kTfLiteBuiltinDepthwiseConv2d,
                  abi::DepthwiseConvParams{c.padding, c.stride, c.stride, 1, c.dw_act, 1, 1},
                  {in, dw_w, dw_b}, {mid});
    graph.AddNode(abi::kTfLiteBuiltinConv2d,
                  abi::ConvParams{abi::kPaddingValid, 1, 1, c.pw_act, 1, 1, abi::kNoType},
                  {mid, pw_w, pw_b}, {pw_out});
    int result = pw_out;
    std::vector<int> inputs = {in};
    if (c.add_after) {
      const int other = graph.AddTensor(out_dims, skip, false);
      result = graph.AddTensor(out_dims, {}, false);
      graph.AddNode(abi::kTfLiteBuiltinAdd, abi::AddParams{abi::kActNone, false},
                    {pw_out, other}, {result});
      inputs.push_back(other);
    }
    Status status = graph.Run(inputs, {result}, fp16, fuse);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_LE(MaxRelativeError(graph.data(result), expected), Tolerance(fp16))
        << (fuse ? "fused" : "unfused");
    dispatches[fuse] = graph.dispatches();
    arena_tensors[fuse] = graph.arena_tensors();
  }
  EXPECT_EQ(dispatches[1], dispatches[0] - 1);
  EXPECT_EQ(arena_tensors[1], arena_tensors[0] - 1);
}

constexpr abi::FusedActivation kNone = abi::kActNone;
constexpr abi::FusedActivation kRelu6 = abi::kActRelu6;

TEST(DepthwiseIntoGemm, StridesPaddingsActivationsAndBatches) {
  const ChainCase cases[] = {
      {1, 9, 11, 13, 10, 1, abi::kPaddingSame, kRelu6, kNone, false, ""},
      {2, 10, 7, 6, 17, 2, abi::kPaddingValid, kNone, abi::kActRelu, false, ""},
      {1, 8, 9, 20, 12, 2, abi::kPaddingSame, abi::kActRelu, kRelu6, true, ""},
      {1, 7, 6, 37, 9, 1, abi::kPaddingValid, abi::kActReluN1To1, kNone, false, ""},
  };
  uint32_t seed = 100;
  for (const ChainCase& c : cases) RunChain(c, false, seed += 10);
  RunChain(cases[2], true, 200);
}

TEST(DepthwiseIntoGemm, ForcedTiles) {
  // Two rows and two slices per invocation, K in 4 parts (the A tile is
  // overwritten by partial sums); one part (no second barrier).
  RunChain({1, 11, 9, 22, 21, 1, abi::kPaddingSame, kRelu6, kRelu6, false,
            "2,2,8,4,4"}, false, 300);
  RunChain({2, 6, 7, 5, 6, 2, abi::kPaddingSame, kRelu6, kNone, true, "1,1,16,4,1"},
           false, 310);
}

// A quantized model's depthwise output (int8, the float view) gets the
// quantization simulator, fused into the depthwise's store as an epilogue;
// fused into the GEMM, that epilogue runs in the prologue (DW_EPILOGUE) and
// the GEMM reads the values rounded to the grid, with and without the depth
// split across workgroups.
TEST(DepthwiseIntoGemm, QuantizationSimulatorOfTheDepthwiseRunsInThePrologue) {
  const int h = 7, w = 6, c = 10, oc = 9;
  const std::vector<int> in_dims = {1, h, w, c};
  auto x = RandomData(Count(in_dims), 500, -2, 2);
  auto filter = RandomData(9 * c, 501, -1, 1);
  auto dw_bias = RandomData(c, 502, -1, 1);
  auto pw = RandomData(static_cast<size_t>(oc) * c, 503, -0.5f, 0.5f);
  auto bias = RandomData(oc, 504, -1, 1);
  const float scale = 0.05f;
  const int zero_point = -20;  // range [-5.4, 7.35]: some values clamp
  auto dw = DepthwiseReference(x, 1, h, w, c, 1, abi::kPaddingSame, filter, dw_bias,
                               abi::kActNone);
  for (float& v : dw) {
    // TFLite's QUANTIZE (half away from zero, clamp) and back, in double.
    const double r = static_cast<double>(v) / scale;
    const double q = std::min(127.0, std::max(-128.0, std::round(r) + zero_point));
    v = static_cast<float>((q - zero_point) * scale);
  }
  const auto expected = FullyConnectedReference(dw, h * w, c, pw, oc, bias, kNone);
  for (bool split_k : {false, true}) {
    int dispatches[2] = {0, 0};
    for (bool fuse : {false, true}) {
      SCOPED_TRACE(std::string(fuse ? "fused" : "unfused") + (split_k ? ", split-K" : ""));
      GraphTester graph;
      graph.set_split_k(split_k);
      const int in = graph.AddTensor(in_dims, x, false);
      const int dw_w = graph.AddTensor({1, 3, 3, c}, filter, true);
      const int dw_b = graph.AddTensor({c}, dw_bias, true);
      const int mid = graph.AddTensor({1, h, w, c}, {}, false);
      graph.Quantize(mid, scale, zero_point);
      const int pw_w = graph.AddTensor({oc, 1, 1, c}, pw, true);
      const int pw_b = graph.AddTensor({oc}, bias, true);
      const int out = graph.AddTensor({1, h, w, oc}, {}, false);
      graph.AddNode(abi::kTfLiteBuiltinDepthwiseConv2d,
                    abi::DepthwiseConvParams{abi::kPaddingSame, 1, 1, 1, kNone, 1, 1},
                    {in, dw_w, dw_b}, {mid});
      graph.AddNode(abi::kTfLiteBuiltinConv2d,
                    abi::ConvParams{abi::kPaddingValid, 1, 1, kNone, 1, 1, abi::kNoType},
                    {mid, pw_w, pw_b}, {out});
      Status status = graph.Run({in}, {out}, false, fuse);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_LE(MaxRelativeError(graph.data(out), expected), kFp32Tolerance);
      dispatches[fuse] = graph.dispatches();
    }
    EXPECT_EQ(dispatches[1], dispatches[0] - 1) << (split_k ? "split-K" : "");
  }
}

TEST(DepthwiseIntoGemm, SecondReaderOfTheDepthwiseOutputKeepsItUnfused) {
  const std::vector<int> in_dims = {1, 6, 6, 8};
  auto x = RandomData(Count(in_dims), 400);
  auto filter = RandomData(72, 401, -1, 1);
  auto dw_bias = RandomData(8, 402, -1, 1);
  auto w = RandomData(40, 403, -0.5f, 0.5f);
  auto bias = RandomData(5, 404, -1, 1);
  int dispatches[2] = {0, 0};
  for (bool fuse : {false, true}) {
    GraphTester graph;
    const int in = graph.AddTensor(in_dims, x, false);
    const int dw_w = graph.AddTensor({1, 3, 3, 8}, filter, true);
    const int dw_b = graph.AddTensor({8}, dw_bias, true);
    const int mid = graph.AddTensor(in_dims, {}, false);
    const int pw_w = graph.AddTensor({5, 1, 1, 8}, w, true);
    const int pw_b = graph.AddTensor({5}, bias, true);
    const int pw_out = graph.AddTensor({1, 6, 6, 5}, {}, false);
    const int doubled = graph.AddTensor(in_dims, {}, false);
    graph.AddNode(abi::kTfLiteBuiltinDepthwiseConv2d,
                  abi::DepthwiseConvParams{abi::kPaddingSame, 1, 1, 1, kNone, 1, 1},
                  {in, dw_w, dw_b}, {mid});
    graph.AddNode(abi::kTfLiteBuiltinConv2d,
                  abi::ConvParams{abi::kPaddingValid, 1, 1, kNone, 1, 1, abi::kNoType},
                  {mid, pw_w, pw_b}, {pw_out});
    graph.AddNode(abi::kTfLiteBuiltinAdd, abi::AddParams{kNone, false}, {mid, mid},
                  {doubled});
    Status status = graph.Run({in}, {pw_out, doubled}, false, fuse);
    ASSERT_TRUE(status.ok()) << status.message();
    const auto dw = DepthwiseReference(x, 1, 6, 6, 8, 1, abi::kPaddingSame, filter,
                                       dw_bias, kNone);
    EXPECT_LE(MaxRelativeError(graph.data(pw_out),
                               FullyConnectedReference(dw, 36, 8, w, 5, bias, kNone)),
              kFp32Tolerance);
    std::vector<float> twice = dw;
    for (float& v : twice) v *= 2;
    EXPECT_LE(MaxRelativeError(graph.data(doubled), twice), kFp32Tolerance);
    dispatches[fuse] = graph.dispatches();
  }
  EXPECT_EQ(dispatches[1], dispatches[0]);
}

}  // namespace
}  // namespace tflite_gles::testing
