// Where a delegate's start goes: wall time per phase of the delegate
// application (ModifyGraphWithDelegate) and of the first invoke, summed over
// the process (the cold-start benches, bench/cold_start.py). Always counted
// (two clock reads per phase, at init only); printed as one line by the
// developer switch TFLITE_GLES_X_INIT_PHASES=1. Phases nest: the line says
// which phase each one is part of, so the sum of a level is its parent.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace tflite_gles::gl {

enum class InitPhase {
  kEglDisplay,      // eglGetDisplay / eglQueryDevices + eglInitialize (driver load)
  kEglContext,      // config, eglCreateContext, eglMakeCurrent
  kGpuInfo,         // glGetString / glGetInteger of every limit
  kOpenCache,       // opening serialization_dir (binary formats, folder checks)
  kSupportChecks,   // KernelRegistry::Find over the execution plan
  kPartition,       // ReplaceNodeSubsetsWithDelegateKernels (all of the below)
  kKernelBuilds,    //   the kernels' builders (dispatch lists, weight packing)
  kRuntimeCreate,   //   PartitionRuntime::Create: passes, steps, programs
  kShaderAssembly,  //     source text and uniform values of every step
  kProgramLoad,     //     glProgramBinary from the serialization cache
  kProgramCompile,  //     glCompileShader + glLinkProgram (+ cache write)
  kProgramQuery,    //     the program's resources against the device limits
  kAllocate,        //   buffers, textures, constants (the model-data entry)
  kModelData,       //     the model-data entry: key, read, upload or write
  kFirstInvoke,     // the first KernelInvoke (driver work at first dispatch)
  kCount
};

void AddInitPhase(InitPhase phase, std::chrono::steady_clock::duration elapsed);
// "egl_display=41.2 egl_context=3.1 ...", milliseconds, every phase.
std::string InitPhaseSummary();
// The summary as one INFO line on stderr, "(after `when`)".
void PrintInitPhases(const char* when);

class ScopedInitPhase {
 public:
  explicit ScopedInitPhase(InitPhase phase)
      : phase_(phase), start_(std::chrono::steady_clock::now()) {}
  ~ScopedInitPhase() { AddInitPhase(phase_, std::chrono::steady_clock::now() - start_); }
  ScopedInitPhase(const ScopedInitPhase&) = delete;
  ScopedInitPhase& operator=(const ScopedInitPhase&) = delete;

 private:
  InitPhase phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tflite_gles::gl
