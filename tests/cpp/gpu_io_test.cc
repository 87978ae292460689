// GPU bindings of partition inputs and outputs (delegate/runtime/gpu_binding.h)
// on the real GPU: an application's buffer, a producer and a sink bound to
// an ADD partition, on every transfer path the runtime may take, checked
// against a naive reference over several runs with changing inputs.
#include <GLES3/gl31.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "delegate/abi/tflite_builtin.h"
#include "delegate/runtime/gpu_binding.h"
#include "egl/gl_call.h"
#include "egl/gl_objects.h"
#include "gpu_test_util.h"

namespace tflite_gles {
namespace {

using testing::OpTester;
using testing::RandomData;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// BHWC floats as a buffer of `layout` holds them; PHWC4's padded lanes NaN
// (the runtime must never let them reach a result).
std::vector<float> ToLayout(const std::vector<float>& bhwc, const Shape4& s, GpuLayout layout) {
  if (layout == GpuLayout::kBhwcFloat32) return bhwc;
  std::vector<float> out(static_cast<size_t>(s.vec4_count()) * 4, kNaN);
  for (int h = 0; h < s.h; ++h)
    for (int w = 0; w < s.w; ++w)
      for (int c = 0; c < s.c; ++c)
        out[4 * ((static_cast<size_t>(c / 4) * s.h + h) * s.w + w) + c % 4] =
            bhwc[(static_cast<size_t>(h) * s.w + w) * s.c + c];
  return out;
}

// The reverse; padded lanes must have been written as zero.
std::vector<float> FromLayout(const std::vector<float>& stored, const Shape4& s,
                              GpuLayout layout, bool* pads_zero) {
  *pads_zero = true;
  if (layout == GpuLayout::kBhwcFloat32) return stored;
  std::vector<float> out(static_cast<size_t>(s.elements()));
  for (int sl = 0; sl < s.slices(); ++sl)
    for (int h = 0; h < s.h; ++h)
      for (int w = 0; w < s.w; ++w)
        for (int k = 0; k < 4; ++k) {
          const float v = stored[4 * ((static_cast<size_t>(sl) * s.h + h) * s.w + w) + k];
          const int c = sl * 4 + k;
          if (c >= s.c) {
            if (v != 0.0f) *pads_zero = false;
            continue;
          }
          out[(static_cast<size_t>(h) * s.w + w) * s.c + c] = v;
        }
  return out;
}

// Writes the floats it is given (already in the target's layout) with
// glBufferSubData: a stand-in for a texture producer.
class VectorProducer final : public GpuProducer {
 public:
  explicit VectorProducer(const std::vector<float>* data) : data_(data) {}
  std::string Describe() const override { return "test producer"; }
  Status Produce(const GpuBufferRef& target, ProgramCache&) override {
    if (data_->size() * sizeof(float) != target.bytes) {
      return Status::Error("producer got " + std::to_string(target.bytes) + " bytes");
    }
    TFG_GL(glBindBuffer(GL_COPY_WRITE_BUFFER, target.buffer));
    TFG_GL(glBufferSubData(GL_COPY_WRITE_BUFFER, 0, static_cast<GLsizeiptr>(target.bytes),
                           data_->data()));
    TFG_GL(glBindBuffer(GL_COPY_WRITE_BUFFER, 0));
    return Status::Ok();
  }

 private:
  const std::vector<float>* data_;
};

// Reads its source buffer back after each run.
class VectorSink final : public GpuSink {
 public:
  std::string Describe() const override { return "test sink"; }
  Status Consume(const GpuBufferRef& source, ProgramCache&) override {
    values.assign(source.bytes / sizeof(float), kNaN);
    TFG_GL(glBindBuffer(GL_COPY_READ_BUFFER, source.buffer));
    void* mapped = nullptr;
    TFG_GL(mapped = glMapBufferRange(GL_COPY_READ_BUFFER, 0,
                                     static_cast<GLsizeiptr>(source.bytes), GL_MAP_READ_BIT));
    if (mapped == nullptr) return Status::Error("map failed");
    std::memcpy(values.data(), mapped, source.bytes);
    TFG_GL(glUnmapBuffer(GL_COPY_READ_BUFFER));
    TFG_GL(glBindBuffer(GL_COPY_READ_BUFFER, 0));
    return Status::Ok();
  }
  std::vector<float> values;
};

enum class Path { kStaging, kDirect, kHalfStaging, kSsboReads };

const char* PathName(Path path) {
  switch (path) {
    case Path::kStaging: return "staging";
    case Path::kDirect: return "direct";
    case Path::kHalfStaging: return "half_staging";
    default: return "ssbo_reads";
  }
}

struct Case {
  Path path;
  GpuLayout layout;
  bool fp16;
  int channels;
};

// ADD of `a` (bound: an application buffer, or a producer) and `b` (host),
// output bound to a sink; three runs with new `a` and `b` each time.
void ExpectBoundAddMatches(const Case& c, bool producer_input) {
  SCOPED_TRACE(std::string(PathName(c.path)) + " " + GpuLayoutName(c.layout) +
               (c.fp16 ? " fp16" : " fp32") + " C=" + std::to_string(c.channels) +
               (producer_input ? " producer" : " app buffer"));
  const std::vector<int> dims = {1, 5, 3, c.channels};
  const Shape4 shape{1, 5, 3, c.channels};
  const size_t n = testing::Count(dims);
  OpTester tester(abi::kTfLiteBuiltinAdd);
  // The host's copy of `a` is NaN: reading it would poison the output.
  const int a_index = tester.AddInput(dims, std::vector<float>(n, kNaN));
  const int b_index = tester.AddInput(dims, RandomData(n, 1));
  const int out_index = tester.AddOutput(dims);
  abi::AddParams params{};
  tester.SetParams(params);
  tester.TuneDevice([&](DeviceProfile* device) {
    if (c.path == Path::kDirect) {
      device->direct_transfers = true;
      device->direct_max_bytes = 1 << 20;
    }
    if (c.path == Path::kHalfStaging) device->half_upload_staging = true;
    if (c.path == Path::kSsboReads) {
      device->texture_buffer_reads = false;
      device->staging_texture_reads = false;
    }
  });
  std::vector<float> a_bhwc, a_stored;
  gl::Buffer app;
  auto sink = std::make_shared<VectorSink>();
  std::vector<float> b_now;
  tester.SetRunHook([&](PartitionRuntime& runtime, ProgramCache& programs, int run,
                        bool after) -> Status {
    if (after) {
      EXPECT_TRUE(runtime.IsGpuBound(out_index));
      bool pads_zero = false;
      std::vector<float> got = FromLayout(sink->values, shape, c.layout, &pads_zero);
      EXPECT_TRUE(pads_zero) << "run " << run;
      std::vector<float> expected(n);
      for (size_t i = 0; i < n; ++i) {
        expected[i] = testing::AsStored({a_bhwc[i]}, c.fp16)[0] +
                      testing::AsStored({b_now[i]}, c.fp16)[0];
      }
      EXPECT_LE(testing::MaxRelativeError(got, expected), c.fp16 ? 2e-3 : 1e-6) << "run " << run;
      // The host output was not written (outputs start NaN in the tester).
      EXPECT_TRUE(std::isnan(tester.output()[0])) << "run " << run;
      return Status::Ok();
    }
    a_bhwc = RandomData(n, 100 + run);
    a_stored = ToLayout(a_bhwc, shape, c.layout);
    b_now = RandomData(n, 200 + run);
    tester.SetInputData(b_index, b_now);
    if (run == 0) {
      GpuBinding input;
      input.layout = c.layout;
      if (producer_input) {
        input.producer = std::make_shared<VectorProducer>(&a_stored);
      } else {
        TFG_ASSIGN_OR_RETURN(app, gl::Buffer::Create(a_stored.size() * sizeof(float), nullptr,
                                                     GL_STREAM_DRAW));
        input.buffer = app.id();
        input.bytes = app.bytes();
      }
      TFG_RETURN_IF_ERROR(runtime.BindGpu(a_index, input, programs));
      GpuBinding output;
      output.layout = c.layout;
      output.sink = sink;
      TFG_RETURN_IF_ERROR(runtime.BindGpu(out_index, output, programs));
      if (!producer_input) {
        EXPECT_FALSE(runtime.OwnsBuffer(app.id()));
      }
    }
    if (!producer_input) {
      TFG_RETURN_IF_ERROR(app.Upload(0, a_stored.size() * sizeof(float), a_stored.data()));
    }
    return Status::Ok();
  });
  Status status = tester.RunRepeated(c.fp16, 3);
  ASSERT_TRUE(status.ok()) << status.message();
}

class GpuIoTest : public ::testing::TestWithParam<Path> {};

TEST_P(GpuIoTest, BoundBuffersMatchReferenceOverRuns) {
  const Path path = GetParam();
  for (bool fp16 : {false, true}) {
    if (path == Path::kHalfStaging && !fp16) continue;
    for (GpuLayout layout : {GpuLayout::kBhwcFloat32, GpuLayout::kPhwc4Float32}) {
      for (int channels : {5, 8}) {
        ExpectBoundAddMatches({path, layout, fp16, channels}, /*producer_input=*/false);
      }
    }
  }
}

TEST_P(GpuIoTest, ProducerAndSinkMatchReferenceOverRuns) {
  const Path path = GetParam();
  const bool fp16 = path == Path::kHalfStaging;
  for (GpuLayout layout : {GpuLayout::kBhwcFloat32, GpuLayout::kPhwc4Float32}) {
    ExpectBoundAddMatches({path, layout, fp16, 3}, /*producer_input=*/true);
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, GpuIoTest,
                         ::testing::Values(Path::kStaging, Path::kDirect, Path::kHalfStaging,
                                           Path::kSsboReads),
                         [](const auto& info) { return std::string(PathName(info.param)); });

TEST(GpuIo, BindingRefusesWrongSizeAndNonTransferTensors) {
  OpTester tester(abi::kTfLiteBuiltinAdd);
  const std::vector<int> dims = {1, 2, 2, 4};
  const int a = tester.AddInput(dims, RandomData(16, 1));
  tester.AddConstInput(dims, RandomData(16, 2));
  const int out = tester.AddOutput(dims);
  abi::AddParams params{};
  tester.SetParams(params);
  tester.SetRunHook([&](PartitionRuntime& runtime, ProgramCache& programs, int run,
                        bool after) -> Status {
    if (after) return Status::Ok();
    TFG_ASSIGN_OR_RETURN(gl::Buffer small, gl::Buffer::Create(60, nullptr, GL_STREAM_DRAW));
    GpuBinding binding;
    binding.buffer = small.id();
    binding.bytes = small.bytes();
    Status wrong = runtime.BindGpu(a, binding, programs);
    EXPECT_FALSE(wrong.ok());
    EXPECT_NE(wrong.message().find("needs 64"), std::string::npos) << wrong.message();
    Status constant = runtime.BindGpu(out + 1, binding, programs);  // no such tensor
    EXPECT_FALSE(constant.ok());
    EXPECT_NE(constant.message().find("not an input or output"), std::string::npos)
        << constant.message();
    GpuBinding empty;
    Status no_sink = runtime.BindGpu(out, empty, programs);
    EXPECT_NE(no_sink.message().find("needs a sink"), std::string::npos) << no_sink.message();
    EXPECT_FALSE(runtime.IsGpuBound(a));
    EXPECT_FALSE(runtime.UnbindGpu(a));
    return Status::Ok();
  });
  Status status = tester.Run();
  ASSERT_TRUE(status.ok()) << status.message();
  // Nothing bound: the host path ran as always.
  EXPECT_FALSE(std::isnan(tester.output()[0]));
}

}  // namespace
}  // namespace tflite_gles
