#include "egl/program_binary_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "egl/gl_call.h"

namespace tflite_gles::gl {
namespace {

// Entry layout, integers little-endian:
//   "TFGPROG1"                                  8 bytes
//   identity bytes, source bytes, binary format, binary bytes   4 x u32
//   identity, source, binary
//   FNV-1a 64 of everything before it           u64
// The version digit in the magic changes with the layout.
constexpr char kMagic[8] = {'T', 'F', 'G', 'P', 'R', 'O', 'G', '1'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4 * 4;
constexpr size_t kChecksumBytes = 8;
// Larger files are not read: no program binary comes near this, and a
// damaged or hostile file must not become a huge allocation.
constexpr size_t kMaxEntryBytes = size_t{256} << 20;
constexpr const char* kSuffix = ".tfgprog";

uint64_t Fnv1a64(const uint8_t* data, size_t bytes, uint64_t hash = 1469598103934665603ull) {
  for (size_t i = 0; i < bytes; ++i) {
    hash ^= data[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

uint64_t Fnv1a64(const std::string& text, uint64_t hash = 1469598103934665603ull) {
  return Fnv1a64(reinterpret_cast<const uint8_t*>(text.data()), text.size(), hash);
}

void PutU32(std::vector<uint8_t>* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

uint64_t GetLittleEndian(const uint8_t* bytes, int count) {
  uint64_t value = 0;
  for (int i = count - 1; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

void Append(std::vector<uint8_t>* out, const void* data, size_t bytes) {
  const auto* begin = static_cast<const uint8_t*>(data);
  out->insert(out->end(), begin, begin + bytes);
}

std::string SafePrefix(const std::string& prefix) {
  std::string safe;
  for (char ch : prefix) {
    if (safe.size() == 64) break;
    const bool keep = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
    safe += keep ? ch : '_';
  }
  // A leading dot would hide the files; an empty prefix leaves "-<hash>".
  if (!safe.empty() && safe[0] == '.') safe[0] = '_';
  return safe;
}

std::string DriverString(GLenum name) {
  const GLubyte* text = glGetString(name);
  return text ? reinterpret_cast<const char*>(text) : "";
}

std::string Errno(int error) { return std::strerror(error); }

}  // namespace

// Reads a whole file; false with *why set when it cannot.
bool ReadFile(const std::string& path, std::vector<uint8_t>* bytes, bool* missing,
              std::string* why, size_t max_bytes) {
  *missing = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *missing = errno == ENOENT;
    *why = "cannot open " + path + ": " + Errno(errno);
    return false;
  }
  struct stat info {};
  bool ok = ::fstat(fd, &info) == 0;
  if (!ok) *why = "cannot stat " + path + ": " + Errno(errno);
  if (ok && (!S_ISREG(info.st_mode) || static_cast<size_t>(info.st_size) > max_bytes)) {
    *why = path + " is not a regular file of at most " +
           std::to_string(max_bytes) + " bytes";
    ok = false;
  }
  if (ok) {
    bytes->resize(static_cast<size_t>(info.st_size));
    size_t done = 0;
    while (done < bytes->size()) {
      const ssize_t got = ::read(fd, bytes->data() + done, bytes->size() - done);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        *why = "reading " + path + ": " + (got < 0 ? Errno(errno) : "file shrank while read");
        ok = false;
        break;
      }
      done += static_cast<size_t>(got);
    }
  }
  ::close(fd);
  return ok;
}

// Writes `bytes` to `path` through a temporary file renamed into place.
Status WriteFileAtomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  static std::atomic<unsigned> counter{0};
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid()) + "-" +
                                std::to_string(counter++);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::Error("cannot create " + temporary + ": " + Errno(errno));
  }
  std::string error;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t put = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      error = "writing " + temporary + ": " + (put < 0 ? Errno(errno) : "nothing written");
      break;
    }
    done += static_cast<size_t>(put);
  }
  if (::close(fd) != 0 && error.empty()) {
    error = "closing " + temporary + ": " + Errno(errno);
  }
  if (error.empty() && ::rename(temporary.c_str(), path.c_str()) != 0) {
    error = "renaming " + temporary + " to " + path + ": " + Errno(errno);
  }
  if (!error.empty()) {
    ::unlink(temporary.c_str());  // best effort: a leftover is never read
    return Status::Error(error);
  }
  return Status::Ok();
}

std::vector<uint8_t> EncodeProgramEntry(const std::string& identity,
                                        const std::string& source, GLenum format,
                                        const std::vector<uint8_t>& binary) {
  std::vector<uint8_t> out;
  out.reserve(kHeaderBytes + identity.size() + source.size() + binary.size() +
              kChecksumBytes);
  Append(&out, kMagic, sizeof(kMagic));
  PutU32(&out, static_cast<uint32_t>(identity.size()));
  PutU32(&out, static_cast<uint32_t>(source.size()));
  PutU32(&out, static_cast<uint32_t>(format));
  PutU32(&out, static_cast<uint32_t>(binary.size()));
  Append(&out, identity.data(), identity.size());
  Append(&out, source.data(), source.size());
  Append(&out, binary.data(), binary.size());
  const uint64_t checksum = Fnv1a64(out.data(), out.size());
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(checksum >> (8 * i)));
  return out;
}

StatusOr<std::unique_ptr<ProgramBinaryCache>> ProgramBinaryCache::Open(
    const std::string& directory, const std::string& prefix,
    const std::string& identity) {
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0) {
    return Status::Error("program cache directory '" + directory +
                         "' cannot be used: " + Errno(errno));
  }
  if (!S_ISDIR(info.st_mode)) {
    return Status::Error("program cache directory '" + directory +
                         "' cannot be used: not a directory");
  }
  TFG_ASSIGN_OR_RETURN(std::vector<GLenum> formats, ProgramBinaryFormats());
  if (formats.empty()) {
    return Status::Error("the driver offers no program binary formats "
                         "(GL_NUM_PROGRAM_BINARY_FORMATS is 0), so programs "
                         "cannot be cached");
  }
  std::unique_ptr<ProgramBinaryCache> cache(new ProgramBinaryCache());
  cache->directory_ = directory;
  cache->prefix_ = SafePrefix(prefix);
  std::string full = identity;
  full += "\nGL_VENDOR=" + DriverString(GL_VENDOR);
  full += "\nGL_RENDERER=" + DriverString(GL_RENDERER);
  full += "\nGL_VERSION=" + DriverString(GL_VERSION);
  full += "\nGL_SHADING_LANGUAGE_VERSION=" + DriverString(GL_SHADING_LANGUAGE_VERSION);
  full += "\nGL_PROGRAM_BINARY_FORMATS=";
  for (GLenum format : formats) full += std::to_string(format) + " ";
  cache->identity_ = std::move(full);
  cache->formats_ = std::move(formats);
  return cache;
}

std::string ProgramBinaryCache::EntryPath(const std::string& source) const {
  const uint64_t hash = Fnv1a64(source, Fnv1a64(identity_ + '\0'));
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return directory_ + "/" + prefix_ + "-" + hex + kSuffix;
}

ProgramBinaryCache::LoadResult ProgramBinaryCache::Load(const std::string& source,
                                                        Program* program,
                                                        std::string* why) const {
  const std::string path = EntryPath(source);
  std::vector<uint8_t> bytes;
  bool missing = false;
  if (!ReadFile(path, &bytes, &missing, why, kMaxEntryBytes)) {
    return missing ? LoadResult::kMissing : LoadResult::kRejected;
  }
  auto reject = [&](const std::string& reason) {
    *why = path + ": " + reason;
    return LoadResult::kRejected;
  };
  if (bytes.size() < kHeaderBytes + kChecksumBytes ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return reject("not a tflite-gles program entry of this layout (" +
                  std::to_string(bytes.size()) + " bytes)");
  }
  const uint8_t* header = bytes.data() + sizeof(kMagic);
  const uint64_t identity_bytes = GetLittleEndian(header, 4);
  const uint64_t source_bytes = GetLittleEndian(header + 4, 4);
  const GLenum format = static_cast<GLenum>(GetLittleEndian(header + 8, 4));
  const uint64_t binary_bytes = GetLittleEndian(header + 12, 4);
  const uint64_t expected =
      kHeaderBytes + identity_bytes + source_bytes + binary_bytes + kChecksumBytes;
  if (bytes.size() != expected) {
    return reject("truncated or padded: " + std::to_string(bytes.size()) +
                  " bytes where the header promises " + std::to_string(expected));
  }
  const size_t body = bytes.size() - kChecksumBytes;
  if (Fnv1a64(bytes.data(), body) != GetLittleEndian(bytes.data() + body, 8)) {
    return reject("checksum mismatch (damaged file)");
  }
  const char* text = reinterpret_cast<const char*>(bytes.data() + kHeaderBytes);
  if (std::string(text, identity_bytes) != identity_) {
    return reject("written for another model token, library version, driver or "
                  "GPU (identity differs)");
  }
  if (std::string(text + identity_bytes, source_bytes) != source) {
    return reject("holds another shader source (file name hash collision)");
  }
  bool offered = false;
  for (GLenum f : formats_) offered = offered || f == format;
  if (!offered) return reject("binary format is not one the driver offers now");
  auto created = Program::CreateFromBinary(
      format, bytes.data() + kHeaderBytes + identity_bytes + source_bytes,
      static_cast<size_t>(binary_bytes));
  if (!created.ok()) return reject(created.status().message());
  *program = std::move(*created);
  return LoadResult::kLoaded;
}

Status ProgramBinaryCache::Store(const std::string& source,
                                 const Program& program) const {
  GLenum format = 0;
  std::vector<uint8_t> binary;
  TFG_RETURN_IF_ERROR(program.Binary(&format, &binary));
  return WriteFileAtomically(EntryPath(source),
                             EncodeProgramEntry(identity_, source, format, binary));
}

}  // namespace tflite_gles::gl
