// The model-data half of the serialization cache without a GPU: the content
// hash that keys and checks its entries (streamed pieces hash like the
// whole, fields stay apart, every bit counts) and ModelDataCache's streamed
// load (blobs come back whole in pieces; a damaged blob is rejected after
// it was streamed, so callers overwrite; a missing, foreign or misshapen
// entry never reaches the sink).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "delegate/graph/content_hash.h"
#include "delegate/runtime/model_data_cache.h"

namespace tflite_gles::testing {
namespace {

std::vector<uint8_t> Bytes(size_t count, uint32_t seed) {
  std::vector<uint8_t> bytes(count);
  for (size_t i = 0; i < count; ++i) {
    seed = seed * 1664525u + 1013904223u;
    bytes[i] = static_cast<uint8_t>(seed >> 24);
  }
  return bytes;
}

std::string HashOf(const std::vector<uint8_t>& bytes, size_t count) {
  ContentHash hash;
  hash.AddBytes(bytes.data(), count);
  return hash.Hex();
}

TEST(ContentHash, PiecesOfAnySizeHashLikeTheWhole) {
  const std::vector<uint8_t> bytes = Bytes(100003, 1);
  ContentHash pieces;
  size_t offset = 0;
  for (size_t step = 1; offset < bytes.size(); step = step * 7 % 101 + 1) {
    const size_t count = std::min(step, bytes.size() - offset);
    pieces.AddBytes(bytes.data() + offset, count);
    offset += count;
  }
  EXPECT_EQ(pieces.Hex(), HashOf(bytes, bytes.size()));
  EXPECT_EQ(pieces.Hex().size(), 32u);
}

TEST(ContentHash, FieldsKeepTheirBoundaries) {
  ContentHash ab_c, a_bc;
  ab_c.Add(std::string("ab"));
  ab_c.Add(std::string("c"));
  a_bc.Add(std::string("a"));
  a_bc.Add(std::string("bc"));
  EXPECT_NE(ab_c.Hex(), a_bc.Hex());
}

TEST(ContentHash, EveryBitAndEveryLengthChangesIt) {
  std::vector<uint8_t> bytes = Bytes(97, 2);  // three stripes and a tail
  std::set<std::string> seen;
  for (size_t count = 0; count <= bytes.size(); ++count) seen.insert(HashOf(bytes, count));
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      bytes[i] ^= static_cast<uint8_t>(1 << bit);
      seen.insert(HashOf(bytes, bytes.size()));
      bytes[i] ^= static_cast<uint8_t>(1 << bit);
    }
  }
  EXPECT_EQ(seen.size(), bytes.size() + 1 + 8 * bytes.size());
  // Trailing zero bytes are content too.
  std::vector<uint8_t> zeros(64, 0);
  EXPECT_NE(HashOf(zeros, 63), HashOf(zeros, 64));
}

class ModelDataCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/tflite_gles_model_data_XXXXXX";
    ASSERT_NE(mkdtemp(path), nullptr);
    dir_ = path;
  }
  void TearDown() override {
    ModelDataCache cache(dir_, "m", "identity");
    for (const char* key : {"key", "other"}) ::unlink(cache.EntryPath(key).c_str());
    ::rmdir(dir_.c_str());
  }

  // Loads `key` into blobs of `sizes`, counting the sink's calls.
  ModelDataCache::LoadResult Load(const ModelDataCache& cache, const std::string& key,
                                  const std::vector<size_t>& sizes, std::string* why) {
    blobs_.assign(sizes.size(), {});
    for (size_t i = 0; i < sizes.size(); ++i) blobs_[i].assign(sizes[i], 0xEE);
    calls_ = 0;
    largest_piece_ = 0;
    auto sink = [this](size_t blob, size_t offset, const uint8_t* data, size_t bytes) {
      ++calls_;
      largest_piece_ = std::max(largest_piece_, bytes);
      std::copy(data, data + bytes, blobs_[blob].begin() + static_cast<long>(offset));
      return Status::Ok();
    };
    return cache.Load(key, sizes, sink, why);
  }

  std::string dir_;
  std::vector<std::vector<uint8_t>> blobs_;
  int calls_ = 0;
  size_t largest_piece_ = 0;
};

TEST_F(ModelDataCacheTest, BlobsComeBackWholeInPiecesOfAQuarterMegabyte) {
  const ModelDataCache cache(dir_, "m", "identity");
  const std::vector<std::vector<uint8_t>> stored = {Bytes(3, 3), Bytes(600001, 4),
                                                    Bytes(16, 5)};
  ASSERT_TRUE(cache.Store("key", stored).ok());
  std::string why;
  ASSERT_EQ(Load(cache, "key", {3, 600001, 16}, &why), ModelDataCache::LoadResult::kLoaded)
      << why;
  EXPECT_EQ(blobs_, stored);
  EXPECT_EQ(calls_, 5);  // 1 + 3 pieces of at most 256 KB + 1
  EXPECT_LE(largest_piece_, size_t{256} << 10);
}

TEST_F(ModelDataCacheTest, ADamagedBlobIsRejectedAfterItWasStreamed) {
  const ModelDataCache cache(dir_, "m", "identity");
  ASSERT_TRUE(cache.Store("key", {Bytes(1000, 6), Bytes(2000, 7)}).ok());
  const std::string path = cache.EntryPath("key");
  std::vector<char> file;
  {
    std::ifstream in(path, std::ios::binary);
    file.assign(std::istreambuf_iterator<char>(in), {});
  }
  file[file.size() - 16 - 1000] ^= 0x10;  // inside the second blob
  std::ofstream(path, std::ios::binary).write(file.data(), static_cast<long>(file.size()));
  std::string why;
  EXPECT_EQ(Load(cache, "key", {1000, 2000}, &why), ModelDataCache::LoadResult::kRejected);
  EXPECT_NE(why.find("checksum mismatch"), std::string::npos) << why;
  EXPECT_GT(calls_, 0);  // streamed before the checksum was known
}

TEST_F(ModelDataCacheTest, MissingForeignAndMisshapenEntriesNeverReachTheSink) {
  const ModelDataCache cache(dir_, "m", "identity");
  std::string why;
  EXPECT_EQ(Load(cache, "key", {4}, &why), ModelDataCache::LoadResult::kMissing);
  EXPECT_EQ(calls_, 0);

  ASSERT_TRUE(cache.Store("key", {Bytes(40, 8)}).ok());
  EXPECT_EQ(Load(cache, "key", {44}, &why), ModelDataCache::LoadResult::kRejected);
  EXPECT_NE(why.find("expected"), std::string::npos) << why;
  EXPECT_EQ(calls_, 0);
  EXPECT_EQ(Load(cache, "key", {40, 4}, &why), ModelDataCache::LoadResult::kRejected);
  EXPECT_EQ(calls_, 0);

  // An entry of another identity under this one's file name.
  const ModelDataCache other(dir_, "m", "another identity");
  ASSERT_TRUE(other.Store("other", {Bytes(40, 9)}).ok());
  ASSERT_EQ(::rename(other.EntryPath("other").c_str(), cache.EntryPath("key").c_str()), 0);
  EXPECT_EQ(Load(cache, "key", {40}, &why), ModelDataCache::LoadResult::kRejected);
  EXPECT_NE(why.find("identity differs"), std::string::npos) << why;
  EXPECT_EQ(calls_, 0);
}

}  // namespace
}  // namespace tflite_gles::testing
