#include "delegate/runtime/model_data_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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

// The checksum as 16 raw bytes.
std::vector<uint8_t> Checksum(const ContentHash& hash) {
  std::vector<uint8_t> raw(kChecksumBytes);
  hash.Raw(raw.data());
  return raw;
}

// Reads exactly `bytes`; false on an error or an early end of the file.
bool ReadFully(int fd, uint8_t* out, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    const ssize_t got = ::read(fd, out + done, bytes - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

// Closes the descriptor on every return path.
struct FileCloser {
  int fd;
  ~FileCloser() {
    if (fd >= 0) ::close(fd);
  }
};

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
                                                const Sink& sink, std::string* why,
                                                size_t chunk_bytes) const {
  const std::string path = EntryPath(key);
  auto reject = [&](const std::string& reason) {
    *why = path + ": " + reason;
    return LoadResult::kRejected;
  };
  const FileCloser file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    if (errno == ENOENT) return LoadResult::kMissing;
    return reject(std::string("cannot open: ") + std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(file.fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<uint64_t>(info.st_size) > kMaxEntryBytes) {
    return reject("not a regular file of at most " + std::to_string(kMaxEntryBytes) +
                  " bytes");
  }
  const uint64_t file_bytes = static_cast<uint64_t>(info.st_size);
  const std::string layout_error =
      "not a tflite-gles model-data entry of this layout (" + std::to_string(file_bytes) +
      " bytes)";
  const size_t header = sizeof(kMagic) + 3 * 4;
  std::vector<uint8_t> head(header);
  if (file_bytes < header + kChecksumBytes || !ReadFully(file.fd, head.data(), header) ||
      std::memcmp(head.data(), kMagic, sizeof(kMagic)) != 0) {
    return reject(layout_error);
  }
  const uint64_t identity_bytes = GetLittleEndian(head.data() + 8, 4);
  const uint64_t key_bytes = GetLittleEndian(head.data() + 12, 4);
  const uint64_t count = GetLittleEndian(head.data() + 16, 4);
  if (count != sizes.size()) {
    return reject("holds " + std::to_string(count) + " constants where " +
                  std::to_string(sizes.size()) + " are expected");
  }
  // The sizes, identity and key: everything before the blobs.
  uint64_t expected = header + 8 * count + identity_bytes + key_bytes + kChecksumBytes;
  if (expected > file_bytes) {
    return reject("truncated or padded: " + std::to_string(file_bytes) +
                  " bytes where the header promises at least " + std::to_string(expected));
  }
  head.resize(header + 8 * count + identity_bytes + key_bytes);
  if (!ReadFully(file.fd, head.data() + header, head.size() - header)) {
    return reject("file shrank while read");
  }
  for (size_t i = 0; i < count; ++i) {
    const uint64_t size = GetLittleEndian(head.data() + header + 8 * i, 8);
    if (size != sizes[i]) {
      return reject("constant " + std::to_string(i) + " has " + std::to_string(size) +
                    " bytes where " + std::to_string(sizes[i]) + " are expected");
    }
    expected += size;
  }
  if (file_bytes != expected) {
    return reject("truncated or padded: " + std::to_string(file_bytes) +
                  " bytes where the header promises " + std::to_string(expected));
  }
  ContentHash checksum;
  checksum.AddBytes(head.data(), head.size());
  const char* text = reinterpret_cast<const char*>(head.data() + header + 8 * count);
  // Judged after the checksum (a damaged file says so, whatever it hit);
  // a mismatch still reads the blobs for the checksum but sends them nowhere.
  std::string mismatch;
  if (std::string(text, identity_bytes) != identity_) {
    mismatch = "written for another model token, library build, driver or "
               "precision (identity differs)";
  } else if (std::string(text + identity_bytes, key_bytes) != key) {
    mismatch = "holds other constants (file name hash collision)";
  }
  if (chunk_bytes == 0) {
    for (size_t size : sizes) chunk_bytes = std::max(chunk_bytes, size);
  }
  std::vector<uint8_t> chunk(std::max<size_t>(chunk_bytes, 1));
  for (size_t i = 0; i < count; ++i) {
    for (size_t offset = 0; offset < sizes[i]; offset += chunk_bytes) {
      const size_t bytes = std::min(chunk_bytes, sizes[i] - offset);
      if (!ReadFully(file.fd, chunk.data(), bytes)) return reject("file shrank while read");
      checksum.AddBytes(chunk.data(), bytes);
      if (!mismatch.empty()) continue;
      Status sent = sink(i, offset, chunk.data(), bytes);
      if (!sent.ok()) return reject("uploading it: " + sent.message());
    }
  }
  std::vector<uint8_t> stored(kChecksumBytes);
  if (!ReadFully(file.fd, stored.data(), stored.size())) return reject("file shrank while read");
  if (Checksum(checksum) != stored) return reject("checksum mismatch (damaged file)");
  if (!mismatch.empty()) return reject(mismatch);
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
  ContentHash hash;
  hash.AddBytes(out.data(), out.size());
  const std::vector<uint8_t> checksum = Checksum(hash);
  out.insert(out.end(), checksum.begin(), checksum.end());
  return gl::WriteFileAtomically(EntryPath(key), out);
}

}  // namespace tflite_gles
