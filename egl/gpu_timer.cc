#include "egl/gpu_timer.h"

#include <GLES2/gl2ext.h>

#include <string>

#include "egl/context_identity.h"
#include "egl/gl_call.h"

namespace tflite_gles::gl {
namespace {

// The extension's entry points; GLES libraries do not export them, so they
// come from eglGetProcAddress, once per process (the EGL spec makes the
// pointers context-independent).
struct TimerQueryApi {
  PFNGLGENQUERIESEXTPROC gen = nullptr;
  PFNGLDELETEQUERIESEXTPROC remove = nullptr;
  PFNGLBEGINQUERYEXTPROC begin = nullptr;
  PFNGLENDQUERYEXTPROC end = nullptr;
  PFNGLGETQUERYOBJECTUI64VEXTPROC result_u64 = nullptr;
  PFNGLQUERYCOUNTEREXTPROC counter = nullptr;
  bool complete() const {
    return gen && remove && begin && end && result_u64 && counter;
  }
};

const TimerQueryApi& Api() {
  static const TimerQueryApi api = [] {
    TimerQueryApi a;
    a.gen = reinterpret_cast<PFNGLGENQUERIESEXTPROC>(
        eglGetProcAddress("glGenQueriesEXT"));
    a.remove = reinterpret_cast<PFNGLDELETEQUERIESEXTPROC>(
        eglGetProcAddress("glDeleteQueriesEXT"));
    a.begin = reinterpret_cast<PFNGLBEGINQUERYEXTPROC>(
        eglGetProcAddress("glBeginQueryEXT"));
    a.end = reinterpret_cast<PFNGLENDQUERYEXTPROC>(
        eglGetProcAddress("glEndQueryEXT"));
    a.result_u64 = reinterpret_cast<PFNGLGETQUERYOBJECTUI64VEXTPROC>(
        eglGetProcAddress("glGetQueryObjectui64vEXT"));
    a.counter = reinterpret_cast<PFNGLQUERYCOUNTEREXTPROC>(
        eglGetProcAddress("glQueryCounterEXT"));
    return a;
  }();
  return api;
}

StatusOr<bool> HasTimerQueryExtension() {
  GLint count = 0;
  TFG_GL(glGetIntegerv(GL_NUM_EXTENSIONS, &count));
  for (GLint i = 0; i < count; ++i) {
    const GLubyte* name = nullptr;
    TFG_GL(name = glGetStringi(GL_EXTENSIONS, static_cast<GLuint>(i)));
    if (name != nullptr &&
        std::string(reinterpret_cast<const char*>(name)) ==
            "GL_EXT_disjoint_timer_query") {
      return true;
    }
  }
  return false;
}

}  // namespace

StatusOr<GpuTimer> GpuTimer::Create(int count) {
  if (count <= 0) return Status::Error("a GPU timer needs at least one query");
  // eglGetProcAddress may return non-null stubs for functions the context
  // does not offer, so the extension string decides, not the pointers.
  TFG_ASSIGN_OR_RETURN(bool has_extension, HasTimerQueryExtension());
  if (!has_extension) {
    return Status::Error("the GL context has no GL_EXT_disjoint_timer_query");
  }
  const TimerQueryApi& api = Api();
  if (!api.complete()) {
    return Status::Error(
        "eglGetProcAddress gave no entry point for part of "
        "GL_EXT_disjoint_timer_query");
  }
  GpuTimer timer;
  timer.context_ = eglGetCurrentContext();
  timer.queries_.assign(static_cast<size_t>(count), 0);
  TFG_GL(api.gen(count, timer.queries_.data()));
  // Reading GL_GPU_DISJOINT_EXT clears it, so the first measurement only
  // sees disjoint events that happen during it.
  GLint disjoint = 0;
  TFG_GL(glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint));
  return timer;
}

GpuTimer& GpuTimer::operator=(GpuTimer&& other) noexcept {
  if (this != &other) {
    Reset();
    queries_ = std::move(other.queries_);
    context_ = other.context_;
    other.queries_.clear();
  }
  return *this;
}

void GpuTimer::Reset() {
  if (!queries_.empty() && MayDeleteIn(context_) &&
      Api().remove != nullptr) {
    Api().remove(static_cast<GLsizei>(queries_.size()), queries_.data());
  }
  queries_.clear();
}

Status GpuTimer::CheckIndex(int index) const {
  if (index < 0 || index >= size()) {
    return Status::Error("timer query " + std::to_string(index) +
                         " is outside the pool of " + std::to_string(size()));
  }
  return Status::Ok();
}

Status GpuTimer::CheckDisjoint() const {
  GLint disjoint = 0;
  TFG_GL(glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint));
  if (disjoint) {
    return Status::Error(
        "the GPU reported a disjoint event (GL_GPU_DISJOINT_EXT) while "
        "timing; the timer results are discarded");
  }
  return Status::Ok();
}

Status GpuTimer::Begin(int index) const {
  TFG_RETURN_IF_ERROR(CheckIndex(index));
  TFG_GL(Api().begin(GL_TIME_ELAPSED_EXT, queries_[static_cast<size_t>(index)]));
  return Status::Ok();
}

Status GpuTimer::End() const {
  TFG_GL(Api().end(GL_TIME_ELAPSED_EXT));
  return Status::Ok();
}

StatusOr<std::vector<uint64_t>> GpuTimer::ReadResults(int count, const char* what) const {
  if (count < 0 || count > size()) {
    return Status::Error("asked for " + std::to_string(count) + " " + what +
                         " from a pool of " + std::to_string(size()));
  }
  std::vector<uint64_t> results(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    GLuint64 value = 0;
    // GL_QUERY_RESULT waits for the result; the last query finishes last, so
    // only the first wait can block for long.
    TFG_GL(Api().result_u64(queries_[static_cast<size_t>(i)], GL_QUERY_RESULT_EXT,
                            &value));
    results[static_cast<size_t>(i)] = value;
  }
  TFG_RETURN_IF_ERROR(CheckDisjoint());
  return results;
}

StatusOr<std::vector<double>> GpuTimer::ReadMilliseconds(int count) const {
  TFG_ASSIGN_OR_RETURN(std::vector<uint64_t> nanoseconds,
                       ReadResults(count, "timer results"));
  std::vector<double> milliseconds(nanoseconds.size());
  for (size_t i = 0; i < nanoseconds.size(); ++i) {
    milliseconds[i] = static_cast<double>(nanoseconds[i]) * 1e-6;
  }
  return milliseconds;
}

Status GpuTimer::Stamp(int index) const {
  TFG_RETURN_IF_ERROR(CheckIndex(index));
  TFG_GL(Api().counter(queries_[static_cast<size_t>(index)], GL_TIMESTAMP_EXT));
  return Status::Ok();
}

StatusOr<std::vector<uint64_t>> GpuTimer::ReadStamps(int count) const {
  return ReadResults(count, "timestamps");
}

StatusOr<int64_t> GpuTimer::GpuClockNanoseconds() {
  GLint64 now = 0;
  TFG_GL(glGetInteger64v(GL_TIMESTAMP_EXT, &now));
  return static_cast<int64_t>(now);
}

}  // namespace tflite_gles::gl
