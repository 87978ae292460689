#include "delegate/runtime/model_data_cache.h"

#include <cstring>
#include <utility>

#include "delegate/graph/content_hash.h"
#include "egl/program_binary_cache.h"

namespace tflite_gles {
namespace {

// Entry layout, integers little-endian (the hosts that share a cache):
//   "TFGDATA1"                                   8 bytes
//   identity bytes, key bytes, blob count         3 x u32
//   blob sizes                                    count x u64
//   identity, key, blobs
//   ContentHash of everything before it           16 bytes
// The digit in the magic changes with the layout.
constexpr char kMagic[8] = {'T', 'F', 'G', 'D', 'A', 'T', 'A', '1'};
constexpr size_t kChecksumBytes = 16;
// Model weights beyond this are converted every time (the file is refused
// as too large to read, and a damaged size field cannot become a huge
// allocation).
constexpr size_t kMaxEntryBytes = size_t{1} << 31;

void PutLittleEndian(std::vector<uint8_t>* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

uint64_t GetLittleEndian(const uint8_t* bytes, int count) {
  uint64_t value = 0;
  for (int i = count - 1; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

// The checksum as 16 raw bytes (the Hex digits, packed).
std::vector<uint8_t> Checksum(const uint8_t* data, size_t bytes) {
  ContentHash hash;
  hash.Add(data, bytes);
  const std::string hex = hash.Hex();
  std::vector<uint8_t> raw;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    raw.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return raw;
}

}  // namespace

ModelDataCache::ModelDataCache(std::string directory, std::string prefix,
                               std::string identity)
    : directory_(std::move(directory)), prefix_(std::move(prefix)),
      identity_(std::move(identity)) {}

std::string ModelDataCache::EntryPath(const std::string& key) const {
  ContentHash hash;
  hash.Add(identity_);
  hash.Add(key);
  return directory_ + "/" + prefix_ + "-" + hash.Hex() + ".tfgdata";
}

ModelDataCache::LoadResult ModelDataCache::Load(const std::string& key,
                                                const std::vector<size_t>& sizes,
                                                std::vector<std::vector<uint8_t>>* blobs,
                                                std::string* why) const {
  const std::string path = EntryPath(key);
  std::vector<uint8_t> bytes;
  bool missing = false;
  if (!gl::ReadFile(path, &bytes, &missing, why, kMaxEntryBytes)) {
    return missing ? LoadResult::kMissing : LoadResult::kRejected;
  }
  auto reject = [&](const std::string& reason) {
    *why = path + ": " + reason;
    return LoadResult::kRejected;
  };
  const size_t header = sizeof(kMagic) + 3 * 4;
  if (bytes.size() < header + kChecksumBytes ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return reject("not a tflite-gles model-data entry of this layout (" +
                  std::to_string(bytes.size()) + " bytes)");
  }
  const uint64_t identity_bytes = GetLittleEndian(bytes.data() + 8, 4);
  const uint64_t key_bytes = GetLittleEndian(bytes.data() + 12, 4);
  const uint64_t count = GetLittleEndian(bytes.data() + 16, 4);
  if (count != sizes.size()) {
    return reject("holds " + std::to_string(count) + " constants where " +
                  std::to_string(sizes.size()) + " are expected");
  }
  uint64_t expected = header + 8 * count + identity_bytes + key_bytes + kChecksumBytes;
  for (size_t i = 0; i < count && expected <= bytes.size(); ++i) {
    const uint64_t size = GetLittleEndian(bytes.data() + header + 8 * i, 8);
    if (size != sizes[i]) {
      return reject("constant " + std::to_string(i) + " has " + std::to_string(size) +
                    " bytes where " + std::to_string(sizes[i]) + " are expected");
    }
    expected += size;
  }
  if (bytes.size() != expected) {
    return reject("truncated or padded: " + std::to_string(bytes.size()) +
                  " bytes where the header promises " + std::to_string(expected));
  }
  const size_t body = bytes.size() - kChecksumBytes;
  if (Checksum(bytes.data(), body) !=
      std::vector<uint8_t>(bytes.begin() + static_cast<long>(body), bytes.end())) {
    return reject("checksum mismatch (damaged file)");
  }
  const char* text = reinterpret_cast<const char*>(bytes.data() + header + 8 * count);
  if (std::string(text, identity_bytes) != identity_) {
    return reject("written for another model token, library build, driver or "
                  "precision (identity differs)");
  }
  if (std::string(text + identity_bytes, key_bytes) != key) {
    return reject("holds other constants (file name hash collision)");
  }
  size_t offset = header + 8 * count + identity_bytes + key_bytes;
  blobs->assign(count, {});
  for (size_t i = 0; i < count; ++i) {
    (*blobs)[i].assign(bytes.begin() + static_cast<long>(offset),
                       bytes.begin() + static_cast<long>(offset + sizes[i]));
    offset += sizes[i];
  }
  return LoadResult::kLoaded;
}

Status ModelDataCache::Store(const std::string& key,
                             const std::vector<std::vector<uint8_t>>& blobs) const {
  std::vector<uint8_t> out(kMagic, kMagic + sizeof(kMagic));
  PutLittleEndian(&out, identity_.size(), 4);
  PutLittleEndian(&out, key.size(), 4);
  PutLittleEndian(&out, blobs.size(), 4);
  size_t total = 0;
  for (const auto& blob : blobs) {
    PutLittleEndian(&out, blob.size(), 8);
    total += blob.size();
  }
  out.reserve(out.size() + identity_.size() + key.size() + total + kChecksumBytes);
  out.insert(out.end(), identity_.begin(), identity_.end());
  out.insert(out.end(), key.begin(), key.end());
  for (const auto& blob : blobs) out.insert(out.end(), blob.begin(), blob.end());
  const std::vector<uint8_t> checksum = Checksum(out.data(), out.size());
  out.insert(out.end(), checksum.begin(), checksum.end());
  return gl::WriteFileAtomically(EntryPath(key), out);
}

}  // namespace tflite_gles
