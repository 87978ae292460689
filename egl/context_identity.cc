#include "egl/context_identity.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "egl/gl_call.h"

namespace tflite_gles::gl {
namespace {

// ScopedTeardowns alive on this thread that could not make their owner's
// context current: while any is, no GL object deletes its name.
thread_local int g_suppressed_teardowns = 0;

// The witness bound to GL_COPY_READ_BUFFER for `use`, the application's
// binding restored afterwards (also after a failure).
template <typename Use>
Status WithWitnessBound(GLuint witness, Use use) {
  GLint previous = 0;
  TFG_GL(glGetIntegerv(GL_COPY_READ_BUFFER_BINDING, &previous));
  TFG_GL(glBindBuffer(GL_COPY_READ_BUFFER, witness));
  Status used = use();
  TFG_GL(glBindBuffer(GL_COPY_READ_BUFFER, static_cast<GLuint>(previous)));
  return used;
}

// OK when the buffer named `witness` in the current context has `bytes`
// bytes that start with `cookie`.
Status CheckWitness(GLuint witness, GLsizeiptr bytes, const std::array<uint32_t, 4>& cookie) {
  if (glIsBuffer(witness) != GL_TRUE) return Status::Error("no buffer of that name");
  return WithWitnessBound(witness, [&]() -> Status {
    GLint64 size = 0;
    GLint mapped = GL_FALSE;
    TFG_GL(glGetBufferParameteri64v(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, &size));
    TFG_GL(glGetBufferParameteriv(GL_COPY_READ_BUFFER, GL_BUFFER_MAPPED, &mapped));
    // Another context's buffer of that name: its size differs (almost
    // surely), and one that is mapped is not ours to map.
    if (size != bytes || mapped != GL_FALSE) return Status::Error("another buffer");
    const GLsizeiptr cookie_bytes = sizeof(uint32_t) * cookie.size();
    const void* data = nullptr;
    TFG_GL(data = glMapBufferRange(GL_COPY_READ_BUFFER, 0, cookie_bytes, GL_MAP_READ_BIT));
    const bool same = data != nullptr && std::memcmp(data, cookie.data(), cookie_bytes) == 0;
    GLboolean unmapped = GL_FALSE;
    TFG_GL(unmapped = glUnmapBuffer(GL_COPY_READ_BUFFER));
    (void)unmapped;  // a read-only map: nothing to lose if it was corrupted
    return same ? Status::Ok() : Status::Error("another buffer");
  });
}

}  // namespace

StatusOr<std::shared_ptr<ContextIdentity>> ContextIdentity::OfCurrent() {
  std::shared_ptr<ContextIdentity> identity(new ContextIdentity());
  identity->context_ = eglGetCurrentContext();
  if (identity->context_ == EGL_NO_CONTEXT) {
    return Status::Error("no EGLContext is current to identify");
  }
  identity->display_ = eglGetCurrentDisplay();
  identity->draw_ = eglGetCurrentSurface(EGL_DRAW);
  identity->read_ = eglGetCurrentSurface(EGL_READ);
  std::random_device device;
  std::seed_seq seed{device(), device(),
                     static_cast<unsigned>(
                         std::chrono::steady_clock::now().time_since_epoch().count())};
  std::mt19937 random(seed);
  for (uint32_t& word : identity->cookie_) word = random();
  // 16 to ~4 KB: the size alone tells almost every other buffer apart.
  identity->witness_bytes_ = static_cast<GLsizeiptr>(16 + random() % 4080);
  std::vector<unsigned char> contents(static_cast<size_t>(identity->witness_bytes_), 0);
  std::memcpy(contents.data(), identity->cookie_.data(), sizeof(identity->cookie_));
  TFG_GL(glGenBuffers(1, &identity->witness_));
  TFG_RETURN_IF_ERROR(WithWitnessBound(identity->witness_, [&]() -> Status {
    TFG_GL(glBufferData(GL_COPY_READ_BUFFER, identity->witness_bytes_, contents.data(),
                        GL_STATIC_READ));
    return Status::Ok();
  }).WithContext("making the context's witness buffer"));
  return identity;
}

std::shared_ptr<ContextIdentity> ContextIdentity::ClaimingForTesting(const ContextIdentity& of,
                                                                     EGLContext context) {
  std::shared_ptr<ContextIdentity> identity(new ContextIdentity());
  identity->display_ = eglGetCurrentDisplay();
  identity->context_ = context;
  identity->draw_ = eglGetCurrentSurface(EGL_DRAW);
  identity->read_ = eglGetCurrentSurface(EGL_READ);
  identity->witness_ = of.witness_;
  identity->witness_bytes_ = of.witness_bytes_;
  identity->cookie_ = of.cookie_;
  identity->owns_witness_ = false;
  return identity;
}

ContextIdentity::~ContextIdentity() {
  if (!owns_witness_ || witness_ == 0) return;
  ScopedTeardown teardown(this, nullptr);
  if (teardown.deletes()) glDeleteBuffers(1, &witness_);
}

bool ContextIdentity::IsCurrent() const {
  if (eglGetCurrentContext() != context_) return false;
  return CheckWitness(witness_, witness_bytes_, cookie_).ok();
}

ScopedTeardown::ScopedTeardown(const ContextIdentity* identity, const char* what) {
  if (identity == nullptr) return;
  display_ = identity->display_;
  previous_display_ = eglGetCurrentDisplay();
  previous_context_ = eglGetCurrentContext();
  previous_draw_ = eglGetCurrentSurface(EGL_DRAW);
  previous_read_ = eglGetCurrentSurface(EGL_READ);
  if (previous_context_ != identity->context_) {
    // The application's surfaces of then may be gone: surfaceless next
    // (EGL_KHR_surfaceless_context, which GLES 3 contexts have almost
    // everywhere).
    if (eglMakeCurrent(display_, identity->draw_, identity->read_, identity->context_) ==
            EGL_TRUE ||
        (identity->draw_ != EGL_NO_SURFACE &&
         eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, identity->context_) ==
             EGL_TRUE)) {
      switched_ = true;
    } else {
      const EGLint error = eglGetError();
      deletes_ = false;
      // The context destroyed (or its display terminated with it, a
      // context of our own): its objects went with it, nothing to say.
      const bool gone = error == EGL_BAD_CONTEXT || error == EGL_NOT_INITIALIZED ||
                        error == EGL_BAD_DISPLAY;
      if (what != nullptr && !gone) {
        std::fprintf(stderr,
                     "WARNING: tflite-gles: %s is deleted while its EGLContext cannot be "
                     "made current on this thread (%s; current on another thread?): its "
                     "GL objects are left to that context and go when it is destroyed\n",
                     what, EglErrorName(error));
      }
    }
  }
  // The same handle, but not the context the objects were made in: the
  // application destroyed that one and the driver reused its handle. Its
  // objects went with it; the names now belong to someone else.
  if (deletes_ && !identity->IsCurrent()) deletes_ = false;
  if (!deletes_) {
    suppressed_ = true;
    ++g_suppressed_teardowns;
  }
}

ScopedTeardown::~ScopedTeardown() {
  if (suppressed_) --g_suppressed_teardowns;
  if (!switched_) return;
  // No context before: none after (a context of our own destroyed in the
  // teardown was released already, and its display may be terminated).
  const EGLDisplay current_display = eglGetCurrentDisplay();
  EGLBoolean restored = EGL_TRUE;
  if (previous_context_ != EGL_NO_CONTEXT) {
    restored =
        eglMakeCurrent(previous_display_, previous_draw_, previous_read_, previous_context_);
  } else if (current_display != EGL_NO_DISPLAY) {
    restored = eglMakeCurrent(current_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  }
  if (restored != EGL_TRUE) {
    std::fprintf(stderr,
                 "WARNING: tflite-gles: the EGLContext current before a delegate's "
                 "teardown could not be made current again (%s)\n",
                 EglErrorName(eglGetError()));
  }
}

bool MayDeleteIn(EGLContext context) {
  return g_suppressed_teardowns == 0 && eglGetCurrentContext() == context;
}

}  // namespace tflite_gles::gl
