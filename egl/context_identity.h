// Which EGLContext a GL object belongs to, and a teardown that deletes GL
// objects only there (docs/gpu_io.md, "Lifetime").
//
// GL names are per context (per share group): name 3 in one context and
// name 3 in another are unrelated objects. Every GL object here records the
// context that was current when it was made and deletes its name only while
// that context is current (MayDeleteIn). The handle alone is not a proof:
// once an application destroys its context, the driver may hand the same
// EGLContext value to the next context it creates (NVIDIA's driver did:
// a delegate left to a late garbage collection then deleted the names of
// the next test's programs under the new context, whose first Invoke failed
// with glUseProgram GL_INVALID_VALUE; session 9). So a context is also
// recognised by a witness, a small buffer of a random size and contents
// made in it: a context that reuses the handle has no such buffer.
//
// ScopedTeardown makes the owner's context current on this thread for a
// teardown (the caller's current context is restored afterwards); where it
// cannot (the context is current on another thread, or gone), deletes are
// suppressed on this thread while the scope lives: the names leak (with a
// warning when the context still exists) instead of hitting another
// context's objects.
#pragma once

#include <EGL/egl.h>
#include <GLES3/gl31.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "egl/status.h"

namespace tflite_gles::gl {

class ContextIdentity {
 public:
  // The calling thread's current context, with a witness made in it.
  static StatusOr<std::shared_ptr<ContextIdentity>> OfCurrent();
  // Tests: an identity that claims `context` (current now) while its
  // witness is `of`'s, i.e. what a reused handle looks like.
  static std::shared_ptr<ContextIdentity> ClaimingForTesting(const ContextIdentity& of,
                                                             EGLContext context);

  ContextIdentity(const ContextIdentity&) = delete;
  ContextIdentity& operator=(const ContextIdentity&) = delete;
  // Deletes the witness (under a ScopedTeardown of its own).
  ~ContextIdentity();

  EGLContext context() const { return context_; }
  GLuint witness() const { return witness_; }
  // The current context is this one: the same handle and the witness in it.
  bool IsCurrent() const;

 private:
  friend class ScopedTeardown;
  ContextIdentity() = default;

  EGLDisplay display_ = EGL_NO_DISPLAY;
  EGLContext context_ = EGL_NO_CONTEXT;
  EGLSurface draw_ = EGL_NO_SURFACE;
  EGLSurface read_ = EGL_NO_SURFACE;
  GLuint witness_ = 0;
  GLsizeiptr witness_bytes_ = 0;
  std::array<uint32_t, 4> cookie_{};
  bool owns_witness_ = true;
};

class ScopedTeardown {
 public:
  // `what` names the owner in the warning (e.g. "a tflite-gles delegate").
  // A null identity: nothing is switched or suppressed.
  ScopedTeardown(const ContextIdentity* identity, const char* what);
  ~ScopedTeardown();
  ScopedTeardown(const ScopedTeardown&) = delete;
  ScopedTeardown& operator=(const ScopedTeardown&) = delete;

  // The owner's context is current (it was, or was made so): deletes run.
  bool deletes() const { return deletes_; }

 private:
  bool deletes_ = true;
  bool switched_ = false;
  bool suppressed_ = false;
  EGLDisplay display_ = EGL_NO_DISPLAY;  // the identity's
  EGLDisplay previous_display_ = EGL_NO_DISPLAY;
  EGLContext previous_context_ = EGL_NO_CONTEXT;
  EGLSurface previous_draw_ = EGL_NO_SURFACE;
  EGLSurface previous_read_ = EGL_NO_SURFACE;
};

// What every GL object's Reset asks before deleting its name: `context` is
// current and no ScopedTeardown on this thread suppressed deletes.
bool MayDeleteIn(EGLContext context);

}  // namespace tflite_gles::gl
