// An on-disk cache of linked program binaries (glGetProgramBinary /
// glProgramBinary), so that a later process skips compiling and linking the
// same shaders: on NVIDIA that is ~0.5 s per program with an empty driver
// cache (docs/perf/log.md).
//
// One file per program, `<prefix>-<16 hex digits>.tfgprog`, the digits a
// hash of the identity and the full shader source. The hash only names the
// file: an entry is used only when the identity and the source stored in it
// equal the caller's byte for byte, its checksum matches, its binary format
// is one the driver offers now, and the driver links the binary
// (GL_LINK_STATUS). Anything else is a rejection with a reason, and the
// caller compiles from source and stores a fresh entry in its place.
//
// The identity is the caller's text (who asks: e.g. a model token and a
// library version) plus the driver's GL_VENDOR, GL_RENDERER, GL_VERSION,
// GL_SHADING_LANGUAGE_VERSION and binary formats, added here: a driver
// update or another GPU never loads a stale binary.
//
// Entries are written to a temporary file in the same directory and renamed
// into place, so concurrent processes and a crash mid-write leave either
// the old entry or the new one, never a torn file (the checksum catches
// what a power loss might leave). Knows nothing of TFLite.
#pragma once

#include <GLES3/gl31.h>

#include <memory>
#include <string>
#include <vector>

#include "egl/gl_objects.h"
#include "egl/status.h"

namespace tflite_gles::gl {

class ProgramBinaryCache {
 public:
  // Uses the existing directory `directory`. Fails with a message naming
  // the path and the reason when it is missing or not a directory, or when
  // the current context's driver offers no program binary formats. Call
  // with the GL context current. `prefix` starts every file name (characters
  // other than [A-Za-z0-9._-] become '_', cut to 64).
  static StatusOr<std::unique_ptr<ProgramBinaryCache>> Open(
      const std::string& directory, const std::string& prefix,
      const std::string& identity);

  enum class LoadResult {
    kLoaded,    // *program is the cached binary, linked
    kMissing,   // no entry for this source
    kRejected,  // an entry exists but cannot be used; *why says why
  };
  // Creates the program for `source` from its entry, if a usable one exists.
  LoadResult Load(const std::string& source, Program* program,
                  std::string* why) const;

  // Writes (or replaces) the entry for `source` from the linked `program`
  // (created with retrievable = true). Errors name the path and the reason.
  Status Store(const std::string& source, const Program& program) const;

  // The file that holds (or would hold) the entry for `source`.
  std::string EntryPath(const std::string& source) const;
  const std::string& directory() const { return directory_; }
  const std::string& prefix() const { return prefix_; }  // as sanitized
  const std::vector<GLenum>& formats() const { return formats_; }
  // The full identity an entry must carry: the caller's plus the driver's.
  const std::string& identity() const { return identity_; }

 private:
  ProgramBinaryCache() = default;

  std::string directory_;
  std::string prefix_;
  std::string identity_;
  std::vector<GLenum> formats_;
};

// The file helpers of the cache, shared with the delegate's model-data
// entries (delegate/runtime/model_data_cache.h). ReadFile: the whole file;
// false with *why set (and *missing when it does not exist) otherwise, or
// when it is not a regular file of at most `max_bytes`.
bool ReadFile(const std::string& path, std::vector<uint8_t>* bytes, bool* missing,
              std::string* why, size_t max_bytes);
// Writes `bytes` to `path` through a temporary file in the same directory
// renamed into place: readers see the old file or the new one, never a torn one.
Status WriteFileAtomically(const std::string& path, const std::vector<uint8_t>& bytes);

// Lays out an entry file's bytes (exposed for tests that forge entries).
std::vector<uint8_t> EncodeProgramEntry(const std::string& identity,
                                        const std::string& source, GLenum format,
                                        const std::vector<uint8_t>& binary);

}  // namespace tflite_gles::gl
