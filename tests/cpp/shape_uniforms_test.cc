// Shapes as uniforms (egl/shader_source.h): how @uniform names are assembled
// into a uniform block instead of the text, and the float div_mod() the
// shaders index with, checked exhaustively on the real GPU over the range
// the kernels use it for.
#include <gtest/gtest.h>

#include <GLES3/gl31.h>

#include <cstdint>
#include <string>
#include <vector>

#include "egl/gl_call.h"
#include "egl/gl_objects.h"
#include "egl/shader_source.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

constexpr char kShapeShader[] = R"(#version 310 es
// @const LOCAL_X=8 LOCAL_Y=1 LOCAL_Z=1 TILE=4
// @uniform ROWS=16 WIDTH=4
layout(local_size_x = LOCAL_X) in;
void main() {}
)";

gl::StorageChoice Storage() { return gl::StorageChoice(); }

// A `// @include NAME` line (egl/shader_source.h) becomes that part's text
// between #line directives, the file's later lines keeping their numbers;
// an unknown part is an error naming it.
TEST(ShaderParts, AnIncludeLineBecomesThePartBetweenLineDirectives) {
  constexpr char kIncluding[] =
      "#version 310 es\n// @const LOCAL_X=8\nint a;\n// @include gemm_splitk.glsl\nint b;\n";
  auto text = gl::AssembleShader("t", kIncluding, Storage(), {{"LOCAL_X", "8"}});
  ASSERT_TRUE(text.ok()) << text.status().message();
  const size_t part = text->find("#line 1\n// gemm.comp's split-K kernel");
  ASSERT_NE(part, std::string::npos) << *text;
  EXPECT_LT(text->find("int a;"), part);
  EXPECT_NE(text->find("#line 5\nint b;", part), std::string::npos) << *text;
  EXPECT_EQ(text->find("@include"), std::string::npos);
  auto unknown = gl::AssembleShader("t", "#version 310 es\n// @include none.glsl\n",
                                    Storage(), {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("none.glsl"), std::string::npos);
}

TEST(ShapeUniforms, UniformNamesGoToTheBlockSoShapesShareOneSource) {
  std::map<std::string, std::string> a = {
      {"LOCAL_X", "8"}, {"LOCAL_Y", "1"}, {"LOCAL_Z", "1"}, {"TILE", "4"},
      {"ROWS", "100"}, {"WIDTH", "10"}};
  std::map<std::string, std::string> b = a;
  b["ROWS"] = "49";
  b["WIDTH"] = "7";
  auto text_a = gl::AssembleShader("t", kShapeShader, Storage(), a);
  auto text_b = gl::AssembleShader("t", kShapeShader, Storage(), b);
  ASSERT_TRUE(text_a.ok()) << text_a.status().message();
  ASSERT_TRUE(text_b.ok()) << text_b.status().message();
  EXPECT_EQ(*text_a, *text_b);
  EXPECT_NE(text_a->find("uniform DispatchUniforms"), std::string::npos);
  EXPECT_NE(text_a->find("highp int ROWS;\n  highp int WIDTH;"), std::string::npos);
  EXPECT_EQ(text_a->find("#define ROWS"), std::string::npos);
  EXPECT_NE(text_a->find("#define TILE 4"), std::string::npos);

  auto values = gl::ShaderUniformValues("t", kShapeShader, b);
  ASSERT_TRUE(values.ok()) << values.status().message();
  EXPECT_EQ(*values, (std::vector<int32_t>{49, 7}));  // declaration order
}

TEST(ShapeUniforms, SpecializeCompilesTheValuesInInstead) {
  std::map<std::string, std::string> d = {
      {"LOCAL_X", "8"}, {"LOCAL_Y", "1"}, {"LOCAL_Z", "1"}, {"TILE", "4"},
      {"ROWS", "100"}, {"WIDTH", "10"}};
  auto text = gl::AssembleShader("t", kShapeShader, Storage(), d, true);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_NE(text->find("#define ROWS 100"), std::string::npos);
  EXPECT_NE(text->find("#define SPECIALIZED 1"), std::string::npos);
  EXPECT_EQ(text->find("DispatchUniforms"), std::string::npos);
  auto values = gl::ShaderUniformValues("t", kShapeShader, d, true);
  ASSERT_TRUE(values.ok());
  EXPECT_TRUE(values->empty());
}

TEST(ShapeUniforms, MissingOrNonIntegerValuesAndDoubleDeclarationsAreErrors) {
  std::map<std::string, std::string> d = {{"ROWS", "100"}};
  auto missing = gl::ShaderUniformValues("t", kShapeShader, d);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'WIDTH'"), std::string::npos)
      << missing.status().message();
  d["WIDTH"] = "12x";
  auto bad = gl::ShaderUniformValues("t", kShapeShader, d);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a 32-bit integer"), std::string::npos)
      << bad.status().message();
  d["WIDTH"] = "4294967296";
  EXPECT_FALSE(gl::ShaderUniformValues("t", kShapeShader, d).ok());

  const std::string both =
      "#version 310 es\n// @const ROWS=1\n// @uniform ROWS=2\nvoid main() {}\n";
  auto assembled = gl::AssembleShader("t", both, Storage(), {});
  ASSERT_FALSE(assembled.ok());
  EXPECT_NE(assembled.status().message().find("both as @const and as @uniform"),
            std::string::npos);
  auto no_value = gl::ParseShaderDeclaration("#version 310 es\n// @uniform ROWS\n");
  EXPECT_FALSE(no_value.ok());
}

// Every n in [0, kExactDivModLimit) against divisors from 1 to the limit
// (MobileNet's map sizes among them); a lane whose (q, r) is not the exact
// quotient and remainder (q * d + r == n, 0 <= r < d) counts itself and
// records the smallest such n.
constexpr char kDivModShader[] = R"(#version 310 es
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 COUNT=64
// @uniform DIVISOR=7
layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;
layout(std430, binding = 0) buffer Result { int wrong; int first_wrong; };
void main() {
  int n = int(gl_GlobalInvocationID.x);
  if (n >= COUNT) return;
  ivec2 qr = div_mod(n, DIVISOR);
  if (qr.x * DIVISOR + qr.y != n || qr.y < 0 || qr.y >= DIVISOR) {
    atomicAdd(wrong, 1);
    atomicMin(first_wrong, n);
  }
}
)";

TEST(ShapeUniforms, FloatDivModIsExactOverItsWholeRange) {
  ASSERT_TRUE(TestEnvironment().EnsureCurrent().ok());
  const int count = static_cast<int>(gl::kExactDivModLimit);
  std::map<std::string, std::string> defines = {
      {"LOCAL_X", "64"}, {"LOCAL_Y", "1"}, {"LOCAL_Z", "1"},
      {"COUNT", std::to_string(count)}};
  gl::StorageChoice storage;
  storage.texture_buffer_extension = TestEnvironment().info().texture_buffer_extension;
  storage.texture_buffer_reads = TestEnvironment().info().has_texture_buffer;
  auto source = gl::AssembleShader("div_mod", kDivModShader, storage, defines);
  ASSERT_TRUE(source.ok()) << source.status().message();
  auto program = gl::Program::CreateCompute(*source);
  ASSERT_TRUE(program.ok()) << program.status().message();
  for (int divisor : {1, 2, 3, 7, 49, 196, 784, 1001, 3136, 12544, 65535,
                      999983, 1 << 20, count - 1}) {
    SCOPED_TRACE("divisor " + std::to_string(divisor));
    const int32_t initial[2] = {0, count};
    auto result = gl::Buffer::Create(sizeof(initial), initial);
    ASSERT_TRUE(result.ok()) << result.status().message();
    const int32_t block[4] = {divisor, 0, 0, 0};
    auto uniforms = gl::Buffer::Create(sizeof(block), block);
    ASSERT_TRUE(uniforms.ok()) << uniforms.status().message();
    ASSERT_TRUE(result->BindAsStorage(0, 0, sizeof(initial)).ok());
    ASSERT_TRUE(uniforms->BindAsUniforms(gl::kShaderUniformBinding, 0, sizeof(block)).ok());
    ASSERT_TRUE(program->Dispatch(count / 64, 1, 1).ok());
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
    int32_t got[2] = {-1, -1};
    ASSERT_TRUE(result->Download(0, sizeof(got), got).ok());
    EXPECT_EQ(got[0], 0) << "first wrong n: " << got[1];
  }
}

// GLSL ES 3.10's barrier() rule, as shader_tool checks it on every variant
// of the shaders that use barriers (after glslangValidator -E).
TEST(BarrierPlacement, AcceptsBarriersDirectlyInMainAndRejectsEveryOtherPlace) {
  const std::string helper = "float add(float a, float b) { return a + b; }\n";
  const std::string good[] = {
      "void main(){ int lane = 1; partial[lane] = 1.0; memoryBarrierShared(); barrier(); }",
      helper + "void main() {\n  if (lane < 32) partial[lane] = add(partial[lane], 1.0); "
               "memoryBarrierShared(); barrier();\n  for (int k = 0; k < 4; ++k) t += partial[k];\n"
               "  if (lane == 0) { out0[0] = t; }\n}\n",
      "void main(){ for(int i = 0;i < 4;++ i)s += 1.0; barrier(); do { s += 1.0; } while (s < 3.0); "
      "barrier(); }",
  };
  for (const std::string& text : good) {
    Status status = gl::CheckBarrierPlacement(text);
    EXPECT_TRUE(status.ok()) << status.message() << "\n" << text;
  }
  const std::pair<std::string, std::string> bad[] = {
      {"void main(){ for (int k = 0; k < 4; ++k) { s += 1.0; barrier(); } }", "control flow"},
      {"void main(){ for (int k = 0; k < 4; ++k) barrier(); }", "control flow"},
      {"void main(){ if (lane < 4) barrier(); }", "control flow"},
      {"void main(){ if (lane < 4) { x = 1; } else { barrier(); } }", "control flow"},
      {"void main(){ while (s < 3.0) { s += 1.0; barrier(); } }", "control flow"},
      {"void main(){ { barrier(); } }", "control flow"},
      {"void sync() { barrier(); }\nvoid main(){ sync(); }", "outside main"},
      {"void main(){ if (lane > 64) return; barrier(); }", "follows a return"},
  };
  for (const auto& [text, reason] : bad) {
    Status status = gl::CheckBarrierPlacement(text);
    ASSERT_FALSE(status.ok()) << text;
    EXPECT_NE(status.message().find(reason), std::string::npos) << status.message();
  }
}

}  // namespace
}  // namespace tflite_gles::testing
