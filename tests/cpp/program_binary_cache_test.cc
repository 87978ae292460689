// gl::ProgramBinaryCache on the real driver: a stored program loads back and
// computes the same values; a missing entry, a damaged, truncated or
// foreign entry, a binary the driver refuses and a format it does not offer
// are each a rejection with a reason, never a program; directories that
// cannot be used fail with their path and the reason.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "egl/gl_call.h"
#include "egl/gl_objects.h"
#include "egl/program_binary_cache.h"
#include "gpu_test_util.h"

namespace tflite_gles::testing {
namespace {

using gl::ProgramBinaryCache;
using LoadResult = gl::ProgramBinaryCache::LoadResult;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// out[i] = i * SCALE + OFFSET: two defines make distinct sources.
std::string Source(int scale, int offset) {
  return "#version 310 es\n#define SCALE " + std::to_string(scale) +
         ".0\n#define OFFSET " + std::to_string(offset) +
         ".0\nlayout(local_size_x = 8) in;\n"
         "layout(std430, binding = 0) writeonly buffer Out { float v[]; } out_;\n"
         "void main() {\n"
         "  uint i = gl_GlobalInvocationID.x;\n"
         "  out_.v[i] = float(i) * SCALE + OFFSET;\n"
         "}\n";
}

// Runs `program` over 16 invocations and returns what it wrote.
std::vector<float> RunProgram(const gl::Program& program) {
  std::vector<float> values(16, -1.0f);
  auto buffer = gl::Buffer::Create(values.size() * sizeof(float), values.data());
  EXPECT_TRUE(buffer.ok()) << buffer.status().message();
  if (!buffer.ok()) return {};
  EXPECT_TRUE(buffer->BindAsStorage(0, 0, buffer->bytes()).ok());
  EXPECT_TRUE(program.Dispatch(2, 1, 1).ok());
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  EXPECT_TRUE(buffer->Download(0, buffer->bytes(), values.data()).ok());
  return values;
}

std::vector<float> Expected(int scale, int offset) {
  std::vector<float> values(16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i) * scale + offset;
  return values;
}

std::vector<char> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> FilesIn(const std::string& directory) {
  std::vector<std::string> names;
  if (DIR* dir = opendir(directory.c_str())) {
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
  }
  return names;
}

class ProgramBinaryCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(TestEnvironment().EnsureCurrent().ok());
    char pattern[] = "/tmp/tflite_gles_progcache_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
    auto formats = gl::ProgramBinaryFormats();
    ASSERT_TRUE(formats.ok()) << formats.status().message();
    formats_ = *formats;
  }
  void TearDown() override {
    for (const std::string& name : FilesIn(directory_)) {
      std::remove((directory_ + "/" + name).c_str());
    }
    rmdir(directory_.c_str());
  }

  // Opens the cache; false (with the refusal checked) on a driver that
  // offers no binary formats, where there is nothing else to test.
  std::unique_ptr<ProgramBinaryCache> Open(const std::string& identity = "model A") {
    auto cache = ProgramBinaryCache::Open(directory_, "model/A", identity);
    if (formats_.empty()) {
      EXPECT_FALSE(cache.ok());
      EXPECT_TRUE(Contains(cache.status().message(), "no program binary formats"))
          << cache.status().message();
      return nullptr;
    }
    EXPECT_TRUE(cache.ok()) << cache.status().message();
    return cache.ok() ? std::move(*cache) : nullptr;
  }

  // Compiles Source(scale, offset) and stores it; returns the entry's path.
  std::string Store(const ProgramBinaryCache& cache, int scale, int offset) {
    auto program = gl::Program::CreateCompute(Source(scale, offset), true);
    EXPECT_TRUE(program.ok()) << program.status().message();
    Status stored = cache.Store(Source(scale, offset), *program);
    EXPECT_TRUE(stored.ok()) << stored.message();
    return cache.EntryPath(Source(scale, offset));
  }

  std::string directory_;
  std::vector<GLenum> formats_;
};

TEST_F(ProgramBinaryCacheTest, StoredProgramLoadsInANewCacheAndComputesTheSame) {
  auto writer = Open();
  if (!writer) return;
  const std::string path = Store(*writer, 3, 7);
  Store(*writer, 5, 1);
  // The file name keeps only safe characters of the prefix.
  EXPECT_EQ(path.rfind(directory_ + "/model_A-", 0), 0u) << path;
  EXPECT_EQ(FilesIn(directory_).size(), 2u) << "no temporary file may remain";

  auto reader = Open();
  ASSERT_TRUE(reader);
  for (auto [scale, offset] : {std::pair{3, 7}, std::pair{5, 1}}) {
    gl::Program program;
    std::string why;
    ASSERT_EQ(reader->Load(Source(scale, offset), &program, &why), LoadResult::kLoaded)
        << why;
    EXPECT_EQ(RunProgram(program), Expected(scale, offset));
  }
}

TEST_F(ProgramBinaryCacheTest, MissingEntryIsMissingNotRejected) {
  auto cache = Open();
  if (!cache) return;
  gl::Program program;
  std::string why;
  EXPECT_EQ(cache->Load(Source(2, 2), &program, &why), LoadResult::kMissing);
  EXPECT_EQ(program.id(), 0u);
}

TEST_F(ProgramBinaryCacheTest, DamagedTruncatedAndForeignEntriesAreRejected) {
  auto cache = Open();
  if (!cache) return;
  auto other = Open("model B");  // another token: other names, other identity
  ASSERT_TRUE(other);
  EXPECT_NE(cache->EntryPath(Source(1, 1)), other->EntryPath(Source(1, 1)));

  const std::string damaged = Store(*cache, 1, 1);
  std::vector<char> bytes = ReadBytes(damaged);
  bytes[bytes.size() / 2] ^= 0x40;
  WriteBytes(damaged, bytes);

  const std::string truncated = Store(*cache, 1, 2);
  bytes = ReadBytes(truncated);
  bytes.resize(bytes.size() / 2);
  WriteBytes(truncated, bytes);

  const std::string foreign = cache->EntryPath(Source(1, 3));
  WriteBytes(foreign, ReadBytes(Store(*other, 1, 3)));

  const std::string empty = cache->EntryPath(Source(1, 4));
  WriteBytes(empty, {});

  struct Case {
    int offset;
    const char* reason;
  };
  for (const Case& c : {Case{1, "checksum mismatch"}, Case{2, "truncated"},
                        Case{3, "identity differs"}, Case{4, "not a tflite-gles"}}) {
    gl::Program program;
    std::string why;
    EXPECT_EQ(cache->Load(Source(1, c.offset), &program, &why), LoadResult::kRejected)
        << c.reason;
    EXPECT_TRUE(Contains(why, c.reason)) << why;
    EXPECT_TRUE(Contains(why, directory_)) << "the path is named: " << why;
    EXPECT_EQ(program.id(), 0u);
  }
  // The other token's own entry is intact and loads for it.
  gl::Program program;
  std::string why;
  EXPECT_EQ(other->Load(Source(1, 3), &program, &why), LoadResult::kLoaded) << why;
}

TEST_F(ProgramBinaryCacheTest, BinaryTheDriverRefusesIsRejectedNotUsed) {
  auto cache = Open();
  if (!cache) return;
  // Checksum, identity and source all match; only the binary is garbage.
  std::vector<uint8_t> garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 131 + 7);
  const std::string source = Source(4, 4);
  std::vector<uint8_t> entry =
      gl::EncodeProgramEntry(cache->identity(), source, formats_[0], garbage);
  WriteBytes(cache->EntryPath(source), std::vector<char>(entry.begin(), entry.end()));
  gl::Program program;
  std::string why;
  EXPECT_EQ(cache->Load(source, &program, &why), LoadResult::kRejected);
  EXPECT_TRUE(Contains(why, "refused")) << why;
  EXPECT_EQ(program.id(), 0u);

  // A format the driver does not offer is not even handed to it.
  entry = gl::EncodeProgramEntry(cache->identity(), source, 0xDEAD, garbage);
  WriteBytes(cache->EntryPath(source), std::vector<char>(entry.begin(), entry.end()));
  EXPECT_EQ(cache->Load(source, &program, &why), LoadResult::kRejected);
  EXPECT_TRUE(Contains(why, "format")) << why;

  // The GL error state is clean afterwards: the next checked call works.
  EXPECT_TRUE(gl::CheckGlErrors("after rejections", __FILE__, __LINE__).ok());
}

TEST_F(ProgramBinaryCacheTest, UnusableDirectoriesFailWithPathAndReason) {
  auto missing = ProgramBinaryCache::Open(directory_ + "/absent", "m", "id");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status().message(), directory_ + "/absent"));
  EXPECT_TRUE(Contains(missing.status().message(), "No such file or directory"))
      << missing.status().message();

  const std::string file = directory_ + "/plain_file";
  WriteBytes(file, {'x'});
  auto not_directory = ProgramBinaryCache::Open(file, "m", "id");
  ASSERT_FALSE(not_directory.ok());
  EXPECT_TRUE(Contains(not_directory.status().message(), "not a directory"))
      << not_directory.status().message();
  std::remove(file.c_str());

  if (formats_.empty()) return;
  // Unwritable: /sys refuses new files even to root; a read-only folder
  // does for everyone else.
  const std::string locked = geteuid() == 0 ? "/sys" : directory_ + "/locked";
  if (locked != "/sys") {
    ASSERT_EQ(mkdir(locked.c_str(), 0500), 0);
  }
  auto cache = ProgramBinaryCache::Open(locked, "m", "id");
  ASSERT_TRUE(cache.ok()) << "an existing folder opens; loads may still work";
  auto program = gl::Program::CreateCompute(Source(6, 6), true);
  ASSERT_TRUE(program.ok());
  Status stored = (*cache)->Store(Source(6, 6), *program);
  ASSERT_FALSE(stored.ok());
  EXPECT_TRUE(Contains(stored.message(), locked)) << stored.message();
  EXPECT_TRUE(Contains(stored.message(), "denied") ||
              Contains(stored.message(), "Read-only"))
      << stored.message();
  if (locked != "/sys") {
    EXPECT_TRUE(FilesIn(locked).empty());
    rmdir(locked.c_str());
  }
}

}  // namespace
}  // namespace tflite_gles::testing
