// The compiled programs of one delegate's EGL context, keyed by their full
// source (equal shaders across nodes and partitions compile once), and the
// on-disk serialization cache behind the options serialization_dir +
// model_token: programs linked once are saved as driver binaries and loaded
// by later processes instead of being compiled again.
//
// What an entry is keyed on (the policy; the file format and the checks are
// gl::ProgramBinaryCache, egl/program_binary_cache.h): the model token, this
// library's version and cache layout, the driver (vendor, renderer, GL and
// GLSL versions, binary formats) and the exact shader source, which carries
// every define, the storage choice and the tile sizes. Entries are files
// `<token>-<hash>.tfgprog` in serialization_dir; deleting them (or the
// directory's contents) clears the cache.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "egl/gl_objects.h"
#include "egl/program_binary_cache.h"
#include "egl/program_limits.h"
#include "delegate/runtime/model_data_cache.h"
#include "egl/status.h"

namespace tflite_gles {

// Where the programs of a delegate came from, summed over its life.
// The subfolder of serialization_dir where the driver's own on-disk shader
// cache is kept when the delegate owns its EGL display
// (egl/driver_shader_cache.h): Mesa's llvmpipe keeps machine code only there.
inline constexpr char kDriverShaderCacheFolder[] = "driver_shader_cache";

struct ProgramCacheCounts {
  int loaded = 0;    // created from a serialization cache entry
  int compiled = 0;  // compiled and linked from source
  int written = 0;   // entries written (new, or replacing a rejected one)
  int rejected = 0;  // entries found but not usable (see the warnings)
};

class ProgramCache {
 public:
  // Opens the serialization cache when the options serialization_dir and
  // model_token both name one (runtime/ takes the two strings, not the
  // delegate's Options, so that it does not include the glue above it). Never fails: a
  // directory that cannot be used, or a driver without program binaries,
  // prints a warning naming the path and the reason, and programs are then
  // compiled every time. Call with the delegate's GL context current.
  void OpenSerializationCache(const std::string& serialization_dir,
                              const std::string& model_token);

  StatusOr<const gl::Program*> Get(const std::string& source);
  // What `program` (one of Get's) uses, read from the driver once per program:
  // the dispatches that share a program share the answer.
  StatusOr<gl::ProgramResources> Resources(const gl::Program& program);
  int size() const { return static_cast<int>(programs_.size()); }

  bool serialization_enabled() const { return disk_ != nullptr; }
  // The model-data entries beside the programs; null when the cache is off.
  ModelDataCache* model_data() { return data_.get(); }
  const ProgramCacheCounts& counts() const { return counts_; }
  int binary_formats() const { return binary_formats_; }
  // Why the serialization cache is off, or the last problem it had ("").
  const std::string& note() const { return note_; }

 private:
  StatusOr<gl::Program> Create(const std::string& source);

  std::map<std::string, std::unique_ptr<gl::Program>> programs_;
  std::map<GLuint, gl::ProgramResources> resources_;
  std::unique_ptr<gl::ProgramBinaryCache> disk_;
  std::unique_ptr<ModelDataCache> data_;
  bool writes_failed_ = false;  // warned once; later writes are not tried
  int binary_formats_ = 0;
  ProgramCacheCounts counts_;
  std::string note_;
};

}  // namespace tflite_gles
