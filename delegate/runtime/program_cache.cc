#include "delegate/runtime/program_cache.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdio>

#include "egl/init_phases.h"

namespace tflite_gles {
namespace {

#ifndef TFLITE_GLES_VERSION
#define TFLITE_GLES_VERSION "unknown"
#endif

// Bumped when what a cached program means changes without its source text
// changing (e.g. how programs are linked), so old entries are never loaded.
constexpr int kCacheKeyRevision = 1;

// The caller's part of an entry's identity; the driver's part is added by
// gl::ProgramBinaryCache. The token is kept whole (the file name only has a
// shortened, sanitized copy), so one model's entries never load for another.
std::string Identity(const std::string& model_token) {
  return std::string("tflite-gles ") + TFLITE_GLES_VERSION +
         " key revision " + std::to_string(kCacheKeyRevision) +
         "\nmodel_token=" + model_token;
}

// This library's build: its file's size and modification time. Model data
// is packed by kernel code that can change without the version changing
// (a developer's rebuild); programs need no such guard, their key is the
// full source.
std::string LibraryBuild() {
  Dl_info info{};
  struct stat file {};
  if (dladdr(reinterpret_cast<void*>(&LibraryBuild), &info) == 0 ||
      info.dli_fname == nullptr || ::stat(info.dli_fname, &file) != 0) {
    return "unknown";
  }
  return std::to_string(file.st_size) + " bytes, modified " +
         std::to_string(file.st_mtim.tv_sec) + "." + std::to_string(file.st_mtim.tv_nsec);
}

}  // namespace

void ProgramCache::OpenSerializationCache(const std::string& serialization_dir,
                                          const std::string& model_token) {
  if (serialization_dir.empty() || model_token.empty()) return;
  auto formats = gl::ProgramBinaryFormats();
  binary_formats_ = formats.ok() ? static_cast<int>(formats->size()) : 0;
  auto disk = gl::ProgramBinaryCache::Open(serialization_dir, model_token,
                                           Identity(model_token));
  if (!disk.ok()) {
    note_ = disk.status().message();
    std::fprintf(stderr,
                 "WARNING: tflite-gles: serialization cache off: %s; every "
                 "program is compiled from source\n",
                 note_.c_str());
    return;
  }
  disk_ = std::move(*disk);
  data_ = std::make_unique<ModelDataCache>(
      disk_->directory(), disk_->prefix(),
      disk_->identity() + "\nmodel data, library build " + LibraryBuild());
}

StatusOr<gl::Program> ProgramCache::Create(const std::string& source) {
  if (disk_ == nullptr) {
    ++counts_.compiled;
    gl::ScopedInitPhase timed(gl::InitPhase::kProgramCompile);
    return gl::Program::CreateCompute(source);
  }
  gl::Program program;
  std::string why;
  gl::ProgramBinaryCache::LoadResult loaded;
  {
    gl::ScopedInitPhase timed(gl::InitPhase::kProgramLoad);
    loaded = disk_->Load(source, &program, &why);
  }
  switch (loaded) {
    case gl::ProgramBinaryCache::LoadResult::kLoaded:
      ++counts_.loaded;
      return program;
    case gl::ProgramBinaryCache::LoadResult::kRejected:
      // Compiled below and written over the bad entry.
      ++counts_.rejected;
      note_ = why;
      std::fprintf(stderr,
                   "WARNING: tflite-gles: serialization cache entry rejected, "
                   "compiling from source: %s\n",
                   why.c_str());
      break;
    case gl::ProgramBinaryCache::LoadResult::kMissing:
      break;
  }
  gl::ScopedInitPhase timed(gl::InitPhase::kProgramCompile);
  TFG_ASSIGN_OR_RETURN(program,
                       gl::Program::CreateCompute(source, /*retrievable=*/true));
  ++counts_.compiled;
  if (!writes_failed_) {
    Status stored = disk_->Store(source, program);
    if (stored.ok()) {
      ++counts_.written;
    } else {
      // The program itself is fine; only later processes lose.
      writes_failed_ = true;
      note_ = stored.message();
      std::fprintf(stderr,
                   "WARNING: tflite-gles: cannot write to the serialization "
                   "cache in '%s', programs will not be cached: %s\n",
                   disk_->directory().c_str(), note_.c_str());
    }
  }
  return program;
}

StatusOr<const gl::Program*> ProgramCache::Get(const std::string& source) {
  auto it = programs_.find(source);
  if (it != programs_.end()) return it->second.get();
  TFG_ASSIGN_OR_RETURN(gl::Program program, Create(source));
  auto owned = std::make_unique<gl::Program>(std::move(program));
  const gl::Program* raw = owned.get();
  programs_[source] = std::move(owned);
  return raw;
}

StatusOr<gl::ProgramResources> ProgramCache::Resources(const gl::Program& program) {
  auto it = resources_.find(program.id());
  if (it != resources_.end()) return it->second;
  gl::ScopedInitPhase timed(gl::InitPhase::kProgramQuery);
  TFG_ASSIGN_OR_RETURN(gl::ProgramResources used, gl::QueryProgramResources(program.id()));
  resources_[program.id()] = used;
  return used;
}

}  // namespace tflite_gles
