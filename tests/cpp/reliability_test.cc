// Failure paths of the GL layer, on the real GPU: broken shaders report the
// driver's log with the numbered source, refused allocations report what was
// refused, and an environment refuses to run on a context or thread it was
// not acquired on. Each test would pass silently if the error were swallowed,
// so each asserts the message, not only the failure.
#include <gtest/gtest.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "delegate/graph/node_checks.h"
#include "delegate/abi/tflite_builtin.h"
#include "egl/context_identity.h"
#include "egl/egl_environment.h"
#include "egl/gl_objects.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Makes the shared test context current again, whatever a test left current.
class GlFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const egl::GlEnvironment& env = TestEnvironment();
    ASSERT_TRUE(env.EnsureCurrent().ok());
  }
};

TEST_F(GlFailureTest, CompileErrorReportsTheLogAndTheNumberedSource) {
  const std::string source =
      "#version 310 es\n"
      "layout(local_size_x = 1) in;\n"
      "void main() {\n"
      "  undeclared_name = 1.0;\n"
      "}\n";
  auto program = gl::Program::CreateCompute(source);
  ASSERT_FALSE(program.ok());
  const std::string& message = program.status().message();
  EXPECT_TRUE(Contains(message, "failed to compile")) << message;
  EXPECT_TRUE(Contains(message, "undeclared_name")) << "no driver log: " << message;
  EXPECT_TRUE(Contains(message, "4:   undeclared_name = 1.0;")) << message;
}

TEST_F(GlFailureTest, LinkErrorReportsTheLogAndTheNumberedSource) {
  // Compiles alone, but a compute program needs a fixed local size to link.
  const std::string source =
      "#version 310 es\n"
      "void main() {\n"
      "}\n";
  auto program = gl::Program::CreateCompute(source);
  ASSERT_FALSE(program.ok());
  const std::string& message = program.status().message();
  EXPECT_TRUE(Contains(message, "failed to link") ||
              Contains(message, "failed to compile"))
      << message;
  EXPECT_TRUE(Contains(message, "2: void main() {")) << message;
}

TEST_F(GlFailureTest, AValidShaderStillCompilesAfterFailures) {
  auto program = gl::Program::CreateCompute(
      "#version 310 es\nlayout(local_size_x = 1) in;\nvoid main() {}\n");
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_NE(program->id(), 0u);
}

TEST_F(GlFailureTest, AnAbsurdBufferSizeFailsWithAMessage) {
  const long before = gl::Buffer::LiveCount();
  auto buffer = gl::Buffer::Create(size_t{1} << 46, nullptr);
  ASSERT_FALSE(buffer.ok());
  EXPECT_TRUE(Contains(buffer.status().message(), "bytes")) << buffer.status().message();
  EXPECT_EQ(gl::Buffer::LiveCount(), before) << "a failed buffer was kept";
}

TEST_F(GlFailureTest, TheTestHookRefusesBuffersAboveItsLimit) {
  ASSERT_EQ(setenv("TFLITE_GLES_TEST_MAX_BUFFER_BYTES", "4096", 1), 0);
  auto small = gl::Buffer::Create(4096, nullptr);
  auto large = gl::Buffer::Create(4097, nullptr);
  unsetenv("TFLITE_GLES_TEST_MAX_BUFFER_BYTES");
  ASSERT_TRUE(small.ok()) << small.status().message();
  ASSERT_FALSE(large.ok());
  EXPECT_TRUE(Contains(large.status().message(), "4097 bytes")) << large.status().message();
  EXPECT_TRUE(Contains(large.status().message(), "GL_OUT_OF_MEMORY"));
  auto after = gl::Buffer::Create(1 << 20, nullptr);
  EXPECT_TRUE(after.ok()) << "the limit outlived the variable";
}

// A node made only of TFLite's structs, for checks that never touch data:
// shapes far beyond memory can be described without allocating them.
class ShapeOnlyNode {
 public:
  // One tensor per entry of `shapes`; the node reads `inputs` and writes
  // `outputs` (indices into `shapes`, which may repeat).
  ShapeOnlyNode(const std::vector<std::vector<int>>& shapes,
                const std::vector<int>& inputs, const std::vector<int>& outputs) {
    for (const auto& dims : shapes) {
      std::vector<int> storage = {static_cast<int>(dims.size())};
      storage.insert(storage.end(), dims.begin(), dims.end());
      dims_.push_back(storage);
    }
    tensors_.resize(shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
      tensors_[i].type = abi::kFloat32;
      tensors_[i].allocation_type = abi::kArenaRw;
      tensors_[i].dims = reinterpret_cast<abi::IntArray*>(dims_[i].data());
    }
    inputs_ = {static_cast<int>(inputs.size())};
    inputs_.insert(inputs_.end(), inputs.begin(), inputs.end());
    outputs_ = {static_cast<int>(outputs.size())};
    outputs_.insert(outputs_.end(), outputs.begin(), outputs.end());
    node_.inputs = reinterpret_cast<abi::IntArray*>(inputs_.data());
    node_.outputs = reinterpret_cast<abi::IntArray*>(outputs_.data());
    registration_.builtin_code = abi::kTfLiteBuiltinRelu;
    registration_.version = 1;
    context_.tensors = tensors_.data();
    context_.tensors_size = tensors_.size();
    context_.GetExecutionPlan = [](abi::Context*, abi::IntArray**) {
      return abi::kError;  // no graph around this node: nothing to fold
    };
  }

  Status Check(bool fp16) {
    DeviceProfile device;
    device.gpu = &TestGpuInfo();
    device.fp16 = fp16;
    device.texture_buffer_reads = TestGpuInfo().has_texture_buffer;
    GraphContext graph(&context_);
    NodeView view(&context_, 0, &node_, &registration_);
    return CheckNodeForDevice(view, graph, device);
  }

 private:
  std::vector<std::vector<int>> dims_;
  std::vector<abi::Tensor> tensors_;
  std::vector<int> inputs_, outputs_;
  abi::Node node_{};
  abi::Registration registration_{};
  abi::Context context_{};
};

TEST(DeviceLimits, ATensorLargerThanTheStorageLimitIsDeclined) {
  const egl::GpuInfo& gpu = TestGpuInfo();
  ASSERT_GT(gpu.max_ssbo_bytes, 0);
  // 1 x 1024 x 1024 x C floats, C just past GL_MAX_SHADER_STORAGE_BLOCK_SIZE.
  const int channels =
      static_cast<int>(gpu.max_ssbo_bytes / (1024LL * 1024 * 4) + 4);
  const std::vector<int> too_big = {1, 1024, 1024, channels};
  for (bool fp16 : {false, true}) {
    Status status = ShapeOnlyNode({too_big, too_big}, {0}, {1}).Check(fp16);
    ASSERT_FALSE(status.ok()) << "a tensor beyond the device limits was accepted";
    EXPECT_TRUE(Contains(status.message(), "GL_MAX_SHADER_STORAGE_BLOCK_SIZE") ||
                Contains(status.message(), "GL_MAX_TEXTURE_BUFFER_SIZE"))
        << status.message();
  }
  const std::vector<int> fits = {1, 64, 64, 8};
  EXPECT_TRUE(ShapeOnlyNode({fits, fits}, {0}, {1}).Check(false).ok());
}

TEST(DeviceLimits, AnInPlaceNodeIsDeclined) {
  Status status = ShapeOnlyNode({{1, 4, 4, 8}}, {0}, {0}).Check(false);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message(), "in-place")) << status.message();
}

// An EGL context the "application" owns: made directly with EGL on the
// display the tests use, never through tflite-gles.
class ApplicationContext {
 public:
  explicit ApplicationContext(EGLDisplay display) : display_(display) {
    eglBindAPI(EGL_OPENGL_ES_API);
    const EGLint config_attributes[] = {EGL_RENDERABLE_TYPE,
                                        EGL_OPENGL_ES3_BIT_KHR, EGL_SURFACE_TYPE,
                                        EGL_DONT_CARE, EGL_NONE};
    EGLConfig config = nullptr;
    EGLint count = 0;
    if (!eglChooseConfig(display_, config_attributes, &config, 1, &count) ||
        count == 0) {
      return;
    }
    const EGLint context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3,
                                         EGL_CONTEXT_MINOR_VERSION, 1, EGL_NONE};
    context_ = eglCreateContext(display_, config, EGL_NO_CONTEXT,
                                context_attributes);
  }
  ~ApplicationContext() {
    if (eglGetCurrentContext() == context_) {
      eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    }
    if (context_ != EGL_NO_CONTEXT) eglDestroyContext(display_, context_);
  }
  bool ok() const { return context_ != EGL_NO_CONTEXT; }
  bool MakeCurrent() {
    return eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_) ==
           EGL_TRUE;
  }

 private:
  EGLDisplay display_ = EGL_NO_DISPLAY;
  EGLContext context_ = EGL_NO_CONTEXT;
};

TEST(EnvironmentContract, RefusesToRunWithTheApplicationsContextCurrent) {
  const egl::GlEnvironment& env = TestEnvironment();
  ApplicationContext application(env.display());
  ASSERT_TRUE(application.ok()) << "eglCreateContext failed for the test";
  ASSERT_TRUE(application.MakeCurrent());
  Status status = env.EnsureCurrent();
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message(), "another EGLContext is current"))
      << status.message();
  EXPECT_NE(eglGetCurrentContext(), env.context())
      << "the application's context was replaced";
  eglMakeCurrent(eglGetCurrentDisplay(), EGL_NO_SURFACE, EGL_NO_SURFACE,
                 EGL_NO_CONTEXT);
  EXPECT_TRUE(env.EnsureCurrent().ok()) << "our own context came back";
}

TEST(EnvironmentContract, TakesOverFromAnotherTfliteGlesContext) {
  const egl::GlEnvironment& first = TestEnvironment();
  ASSERT_TRUE(first.EnsureCurrent().ok());
  const long contexts = egl::GlEnvironment::LiveOwnedContexts();
  {
    // With the first environment's context current, a second environment
    // must make its own context rather than borrow one the first owns.
    auto second = egl::GlEnvironment::Acquire(egl::DisplayPlatform::kAuto);
    ASSERT_TRUE(second.ok()) << second.status().message();
    EXPECT_TRUE((*second)->owns_context());
    EXPECT_NE((*second)->context(), first.context());
    EXPECT_EQ(egl::GlEnvironment::LiveOwnedContexts(), contexts + 1);
    EXPECT_TRUE(first.EnsureCurrent().ok());
    EXPECT_EQ(eglGetCurrentContext(), first.context());
    EXPECT_TRUE((*second)->EnsureCurrent().ok());
    EXPECT_EQ(eglGetCurrentContext(), (*second)->context());
  }
  EXPECT_EQ(egl::GlEnvironment::LiveOwnedContexts(), contexts);
  EXPECT_TRUE(first.EnsureCurrent().ok());
}

// A GL object is deleted only in the context it was made in, made current
// for the teardown and the caller's restored; a context that reuses a
// destroyed one's handle keeps its objects (egl/context_identity.h; NVIDIA
// handed a destroyed context's handle to the next one, session 9).
TEST(EnvironmentContract, TeardownDeletesOnlyInTheObjectsOwnContext) {
  const egl::GlEnvironment& first = TestEnvironment();
  ASSERT_TRUE(first.EnsureCurrent().ok());
  auto a = egl::GlEnvironment::Acquire(egl::DisplayPlatform::kAuto);
  ASSERT_TRUE(a.ok()) << a.status().message();
  auto identity_a = gl::ContextIdentity::OfCurrent();
  ASSERT_TRUE(identity_a.ok()) << identity_a.status().message();
  auto in_a = gl::Buffer::Create(64, nullptr, GL_STATIC_DRAW);
  ASSERT_TRUE(in_a.ok()) << in_a.status().message();
  const GLuint name_in_a = in_a->id();
  auto b = egl::GlEnvironment::Acquire(egl::DisplayPlatform::kAuto);
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(eglGetCurrentContext(), (*b)->context());
  // B's own buffers, up to the names A's witness and buffer have there.
  std::vector<gl::Buffer> in_b;
  while (in_b.empty() || in_b.back().id() < std::max(name_in_a, (*identity_a)->witness())) {
    auto made = gl::Buffer::Create(32, nullptr, GL_STATIC_DRAW);
    ASSERT_TRUE(made.ok()) << made.status().message();
    in_b.push_back(std::move(*made));
  }
  {
    // B under A's handle, as after the driver reused it: not A.
    auto reused = gl::ContextIdentity::ClaimingForTesting(**identity_a, (*b)->context());
    EXPECT_FALSE(reused->IsCurrent());
    gl::ScopedTeardown teardown(reused.get(), "a test's objects");
    EXPECT_FALSE(teardown.deletes());
    in_b.clear();  // made in B: nothing may be deleted now
  }
  for (GLuint name = 1; name <= name_in_a; ++name) {
    EXPECT_TRUE(glIsBuffer(name)) << "B's buffer " << name << " was deleted";
  }
  EXPECT_FALSE((*identity_a)->IsCurrent());
  {
    // A's teardown from B: A made current, its buffer deleted, B back.
    gl::ScopedTeardown teardown(identity_a->get(), "a test's objects");
    EXPECT_TRUE(teardown.deletes());
    EXPECT_EQ(eglGetCurrentContext(), (*a)->context());
    *in_a = gl::Buffer();
    EXPECT_FALSE(glIsBuffer(name_in_a));
  }
  EXPECT_EQ(eglGetCurrentContext(), (*b)->context());
  EXPECT_TRUE(glIsBuffer(name_in_a)) << "B's buffer of the same name was deleted";
  ASSERT_TRUE((*a)->EnsureCurrent().ok());
  identity_a->reset();
  b->reset();
  a->reset();
  EXPECT_TRUE(first.EnsureCurrent().ok());
}

TEST(EnvironmentContract, RefusesAnotherThread) {
  const egl::GlEnvironment& env = TestEnvironment();
  Status status;
  std::thread other([&] { status = env.EnsureCurrent(); });
  other.join();
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message(), "different thread")) << status.message();
  EXPECT_TRUE(env.EnsureCurrent().ok());
}

}  // namespace
}  // namespace tflite_gles::testing
