/* tflite-gles: an OpenGL ES 3.1 compute-shader delegate for TensorFlow Lite.
 *
 * Usage from C/C++ with your own TFLite build:
 *
 *   TfLiteGlesDelegateOptions options = TfLiteGlesDelegateOptionsDefault();
 *   options.is_precision_loss_allowed = 1;               // fp16
 *   TfLiteDelegate* delegate = TfLiteGlesDelegateCreate(&options);
 *   interpreter->ModifyGraphWithDelegate(delegate);      // same thread and
 *   interpreter->Invoke();                               // EGLContext
 *   ...                                                  // as Invoke
 *   TfLiteGlesDelegateDelete(delegate);  // after the interpreter is gone
 *
 * From Python (ai-edge-litert) or benchmark_model, load the shared library as
 * an external delegate; options are string key/value pairs (see the
 * options paragraph of README.md, or the error message for a bad key).
 *
 * Threading: ModifyGraphWithDelegate and Invoke must run on the same thread
 * with the same EGLContext current. If the thread has no current EGLContext
 * when the delegate is applied, the delegate creates its own. */
#ifndef TFLITE_GLES_DELEGATE_H_
#define TFLITE_GLES_DELEGATE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TfLiteDelegate as declared by TensorFlow Lite's common.h. */
struct TfLiteDelegate;

#define TFLITE_GLES_ABI_VERSION 1

typedef enum {
  /* The delegate is built and run once (e.g. one image). */
  TFLITE_GLES_PREFERENCE_FAST_SINGLE_ANSWER = 0,
  /* Many invokes: spend more at init for faster steady state. */
  TFLITE_GLES_PREFERENCE_SUSTAINED_SPEED = 1,
} TfLiteGlesInferencePreference;

typedef enum {
  TFLITE_GLES_PRIORITY_AUTO = 0,
  TFLITE_GLES_PRIORITY_MAX_PRECISION = 1,
  TFLITE_GLES_PRIORITY_MIN_LATENCY = 2,
  TFLITE_GLES_PRIORITY_MIN_MEMORY_USAGE = 3,
} TfLiteGlesInferencePriority;

typedef enum {
  TFLITE_GLES_EGL_PLATFORM_AUTO = 0, /* device, then surfaceless, then default */
  TFLITE_GLES_EGL_PLATFORM_DEVICE = 1,
  TFLITE_GLES_EGL_PLATFORM_SURFACELESS = 2,
  TFLITE_GLES_EGL_PLATFORM_DEFAULT = 3,
} TfLiteGlesEglPlatform;

typedef enum {
  TFLITE_GLES_STORAGE_AUTO = 0,           /* chosen per device: SSBO reads on
                                             NVIDIA, texture buffers elsewhere */
  TFLITE_GLES_STORAGE_SSBO = 1,           /* reads and writes through SSBOs */
  TFLITE_GLES_STORAGE_TEXTURE_BUFFER = 2, /* reads through samplerBuffer */
  TFLITE_GLES_STORAGE_RGBA_TEXTURE = 3,   /* tensors in 2D RGBA textures:
                                             imageStore writes, texelFetch
                                             reads (docs/design.md) */
} TfLiteGlesStorage;

/* The limits the delegate plans its shaders and storage for
 * (docs/device_profiles.md). Each profile clamps the limits the GPU reports:
 * it never raises one. The environment variable TFLITE_GLES_DEVICE_PROFILE
 * (native|gles31-minimum|mali-g52) overrides the option. */
typedef enum {
  TFLITE_GLES_DEVICE_PROFILE_NATIVE = 0,        /* what the GPU reports */
  TFLITE_GLES_DEVICE_PROFILE_GLES31_MINIMUM = 1, /* the GLES 3.1 minimums */
  TFLITE_GLES_DEVICE_PROFILE_MALI_G52 = 2,      /* a mid-range mobile GPU */
} TfLiteGlesDeviceProfile;

/* experimental_flags bit: give every intermediate tensor its own GL buffer
 * instead of sharing one arena by lifetime (for comparisons and debugging). */
#define TFLITE_GLES_EXPERIMENTAL_NO_MEMORY_PLAN 1u

typedef struct TfLiteGlesDelegateOptions {
  /* Non-zero: tensors and arithmetic may use fp16 (faster, ~1e-3 error). */
  int32_t is_precision_loss_allowed;
  /* A TfLiteGlesInferencePreference. */
  int32_t inference_preference;
  /* TfLiteGlesInferencePriority values, most important first. */
  int32_t inference_priority1;
  int32_t inference_priority2;
  int32_t inference_priority3;
  /* At most this many partitions are delegated (the largest first). */
  int32_t max_delegated_partitions;
  /* Where compiled programs are cached between runs (NULL: no cache), and a
   * token naming the model in that cache (both needed for the cache; see
   * TfLiteGlesProgramCacheStats). The directory must exist. Both are copied
   * at create. When the delegate creates its own EGL context, the driver's
   * own shader cache is kept in the subfolder driver_shader_cache/ too (see
   * TfLiteGlesProgramCacheStats). */
  const char* serialization_dir;
  const char* model_token;
  /* A TfLiteGlesEglPlatform; the environment variable
   * TFLITE_GLES_EGL_PLATFORM overrides it. */
  int32_t egl_platform;
  /* A TfLiteGlesStorage. */
  int32_t storage;
  /* Non-zero: per-dispatch GPU timing (slower; for bench/ and tools). */
  int32_t enable_profiling;
  /* Reserved for experiments; 0. TFLITE_GLES_EXPERIMENTAL_* bits. */
  uint64_t experimental_flags;
} TfLiteGlesDelegateOptions;

/* Options added after TfLiteGlesDelegateOptions shipped. That struct has no
 * size or version field, so a field appended to it would be read past the end
 * of the struct of a caller built against the old header; the additions live
 * here instead, behind `size`, so that this struct can grow: the library
 * reads only the fields that fit in `size` bytes and uses the defaults for
 * the rest. TfLiteGlesDelegateCreate keeps working as before (every new
 * option at its default). */
typedef struct TfLiteGlesDelegateOptionsV2 {
  /* sizeof(TfLiteGlesDelegateOptionsV2) of the caller's header; set by
   * TfLiteGlesDelegateOptionsV2Default. */
  size_t size;
  TfLiteGlesDelegateOptions base;
  /* Non-zero (default): quantized (uint8/int8) models run on the GPU in
   * their float view: constants dequantized once, quantized inputs and
   * outputs converted at every invoke. 0: quantized tensors stay on the CPU. */
  int32_t quantized_models_allowed;
  /* Non-zero (default): every quantized activation is rounded to its grid
   * and clamped to its range after the op that writes it, so results follow
   * the integer model. 0: only clamped to their range (the saturation of
   * TFLite's integer kernels, which models rely on). */
  int32_t quantization_simulator;
  /* TfLiteGlesDeviceProfile (default native). */
  int32_t device_profile;
  /* Which GPU of the EGL device platform runs the delegate: its index
   * ("1"), or its DRM render node or device file ("/dev/dri/renderD129",
   * stable across boots where the index is not). NULL or "" (default): the
   * first device that initializes. Implies the device platform; the INFO
   * line names the device used. Ignored when the application's EGLContext
   * is current (that context's GPU runs the delegate). Copied at creation. */
  const char* egl_device;
} TfLiteGlesDelegateOptionsV2;

/* experimental_flags bit: keep every elementwise op in its own dispatch
 * instead of fusing it into the convolution that feeds it (for comparisons
 * and debugging; delegate/passes/fusion.h). */
#define TFLITE_GLES_EXPERIMENTAL_NO_FUSION 2u

/* Figures about what the delegate did, for tools and tests. */
typedef struct TfLiteGlesDelegateStats {
  int32_t nodes_total;     /* nodes in the graph it was applied to */
  int32_t nodes_delegated; /* nodes that run on the GPU */
  int32_t partitions;      /* delegate kernels (GPU-CPU boundaries) */
  int32_t programs;        /* distinct compiled shader programs */
  int32_t dispatches;      /* compute dispatches per invoke, all partitions */
  int64_t gpu_bytes;       /* bytes of GPU buffers held now */
  int64_t invokes;         /* completed invokes */
  char renderer[128];      /* GL_RENDERER of the context in use */
  char gl_version[128];    /* GL_VERSION */
  char egl_display[512];   /* which EGL display/context is in use, and why
                              earlier choices were passed over */
} TfLiteGlesDelegateStats;

TfLiteGlesDelegateOptions TfLiteGlesDelegateOptionsDefault(void);

/* Returns NULL (and prints why) when the options are invalid. No GL work
 * happens here; the EGL context is acquired by ModifyGraphWithDelegate. */
struct TfLiteDelegate* TfLiteGlesDelegateCreate(
    const TfLiteGlesDelegateOptions* options);

TfLiteGlesDelegateOptionsV2 TfLiteGlesDelegateOptionsV2Default(void);

/* TfLiteGlesDelegateCreate with the V2 options (NULL: defaults). */
struct TfLiteDelegate* TfLiteGlesDelegateCreateV2(
    const TfLiteGlesDelegateOptionsV2* options);

void TfLiteGlesDelegateDelete(struct TfLiteDelegate* delegate);

/* Fills `stats`; returns 0 on success, -1 if `delegate` is not ours. */
int TfLiteGlesDelegateGetStats(const struct TfLiteDelegate* delegate,
                               TfLiteGlesDelegateStats* stats);

/* One compute dispatch of a profiled invoke. */
typedef struct TfLiteGlesDispatchProfile {
  char label[128];     /* the node it runs and its index in the graph,
                          e.g. "ADD v1 @3" or "CONV_2D v1 @7 + ADD v1 @8"
                          when fused, or a layout conversion; truncated to
                          fit */
  char shader[64];     /* shader file in shaders/, without ".comp" */
  double milliseconds; /* time of this dispatch */
  int64_t flops;       /* arithmetic it does (0 for data movement) */
  int32_t partition;   /* which delegated partition, in creation order */
  int32_t gpu_timer;   /* 1: GPU timer query (GL_EXT_disjoint_timer_query);
                          0: CPU wall time between glFinish calls */
} TfLiteGlesDispatchProfile;

/* Per-dispatch times of the last invoke of each partition, in execution
 * order; needs the option enable_profiling (otherwise there are none).
 * Copies at most `capacity` entries into `entries` (which may be NULL when
 * `capacity` is 0) and returns how many the profile holds, so a first call
 * with capacity 0 sizes the array. Returns -1 if `delegate` is not ours or
 * `capacity` is negative. */
int TfLiteGlesDelegateGetProfile(const struct TfLiteDelegate* delegate,
                                 TfLiteGlesDispatchProfile* entries,
                                 int capacity);

/* GPU memory of all partitions, summed (bytes). Intermediate tensors share
 * one arena per partition by lifetime (see delegate/passes/memory_planner.h). */
typedef struct TfLiteGlesMemoryStats {
  int64_t arena_tensors;           /* tensors placed in the arenas */
  int64_t arena_bytes;             /* the arenas as allocated */
  int64_t tensors_sum_bytes;       /* those tensors with one buffer each */
  int64_t lower_bound_bytes;       /* most tensor bytes live at one dispatch:
                                      no plan can use less */
  int64_t other_bytes;             /* constants, staging buffers, the rest */
} TfLiteGlesMemoryStats;

/* Fills `stats`; returns 0 on success, -1 if `delegate` is not ours. */
int TfLiteGlesDelegateGetMemoryStats(const struct TfLiteDelegate* delegate,
                                     TfLiteGlesMemoryStats* stats);

/* The serialization cache (options serialization_dir + model_token): each
 * linked program is saved there as the driver's binary and later delegates,
 * in any process, load it instead of compiling the shader again. Entries are
 * keyed on the model token, the library version, the driver (vendor,
 * renderer, GL/GLSL versions, binary formats) and the exact shader source;
 * one that does not match, is damaged or is refused by the driver is
 * compiled from source and rewritten. Counts are summed over the delegate's
 * life.
 *
 * The model data is kept too: the packed weights of convolutions and
 * FULLY_CONNECTED, in the layout and precision they are uploaded in, one
 * file <token>-<hash>.tfgdata per partition; a later start uploads them
 * without reading and repacking the model's tensors. Each constant is keyed
 * on its packing recipe and a 128-bit content hash of the TFLite tensor it
 * reads (type, shape, bytes, quantization), the entry on those keys, the
 * storage precision, the program identity above and this library's build,
 * so a changed model file is never served stale data (its entry is simply
 * not found). A damaged, truncated or foreign entry is converted again and
 * rewritten, with a warning; the INFO line at init counts constants loaded
 * and converted.
 *
 * A program binary is not always machine code: on Mesa it is the linked
 * program as NIR, and llvmpipe compiles it to machine code at its first
 * dispatch, keeping that code only in Mesa's own disk cache. So when the
 * delegate initializes an EGL display of its own (no EGLContext current at
 * ModifyGraphWithDelegate), it points the driver's disk cache into
 * serialization_dir/driver_shader_cache/: MESA_SHADER_CACHE_DIR and
 * __GL_SHADER_DISK_CACHE_PATH are set for the duration of that display's
 * initialization and context creation, then removed. Each is set only when
 * the user has set neither it nor the driver's switch that disables the
 * cache (MESA_SHADER_CACHE_DISABLE, MESA_GLSL_CACHE_DIR/_DISABLE,
 * __GL_SHADER_DISK_CACHE); the INFO line at init says what was done.
 * Consequences: everything a second start needs is in one folder (on
 * llvmpipe a filled folder cuts delegate application + first invoke to
 * about 10 % of a cold start, docs/perf/cold_start.md); the driver keeps
 * its own format, limits and integrity checks there; the process
 * environment is written during that window (do not call setenv/getenv
 * from other threads while a delegate is applied); a display that is
 * already initialized in the process (by an earlier delegate or by the
 * application) keeps the cache it was initialized with. When the
 * application owns the context, the delegate changes nothing: to get the
 * same effect, set MESA_SHADER_CACHE_DIR / __GL_SHADER_DISK_CACHE_PATH to a
 * folder of your own before your EGL display is initialized. Deleting
 * serialization_dir's contents clears both caches. */
typedef struct TfLiteGlesProgramCacheStats {
  int32_t enabled;           /* 1: both options set, the directory exists and
                                the driver offers program binary formats */
  int32_t binary_formats;    /* GL_NUM_PROGRAM_BINARY_FORMATS of the driver
                                (read only when both options are set) */
  int32_t programs_loaded;   /* programs created from cache entries */
  int32_t programs_compiled; /* programs compiled from source (all of them
                                when the cache is off) */
  int32_t entries_written;   /* entries written, new or replacing bad ones */
  int32_t entries_rejected;  /* entries found but not used: damaged,
                                truncated, another token, refused */
  char note[512];            /* why the cache is off, or its last problem;
                                "" if none */
} TfLiteGlesProgramCacheStats;

/* Fills `stats`; returns 0 on success, -1 if `delegate` is not ours. */
int TfLiteGlesDelegateGetProgramCacheStats(const struct TfLiteDelegate* delegate,
                                           TfLiteGlesProgramCacheStats* stats);

/* The last error the delegate reported ("" if none). Valid until the next
 * call into the delegate. */
const char* TfLiteGlesDelegateLastError(const struct TfLiteDelegate* delegate);

/* Process-wide counts of what tflite-gles holds now, for leak checks in
 * tests and long-running applications: after every delegate is deleted (and
 * its interpreters destroyed), all three are zero. */
typedef struct TfLiteGlesLiveObjects {
  int64_t delegates;          /* created and not yet deleted */
  int64_t owned_egl_contexts; /* EGLContexts the delegates created */
  int64_t gpu_buffers;        /* GL buffer objects (tensors, constants) */
} TfLiteGlesLiveObjects;

void TfLiteGlesGetLiveObjects(TfLiteGlesLiveObjects* counts);

/* GPU-resident inputs and outputs (docs/gpu_io.md). After
 * ModifyGraphWithDelegate, on the thread where the delegate's EGLContext is
 * current (the application's context, current when the delegate was
 * applied), a GL buffer object of that context (or of one sharing objects
 * with it) can be bound to a partition input or output:
 *  - a bound input is read by the partition's first dispatches from the
 *    buffer; the TFLite tensor's bytes are not read;
 *  - a bound output is written into the buffer by the last dispatches; the
 *    TFLite tensor is not written but marked stale with a buffer handle of
 *    this delegate, so the interpreter copies it back after Invoke (its
 *    default) or when EnsureTensorDataIsReadable asks, unless the output was
 *    bound with TFLITE_GLES_BIND_NO_HOST_COPY.
 * Contents are float32 (quantized and int32/bool tensors too: their float
 * view, real = scale * (q - zero_point)). A binding survives invokes; it
 * ends with TfLiteGlesDelegateUnbindBuffer, or (with a warning) when the
 * partition is rebuilt: the delegate re-applied, the input resized. */
typedef enum {
  /* TFLite's logical order: B*H*W*C floats. */
  TFLITE_GLES_BUFFER_LAYOUT_BHWC_FLOAT32 = 0,
  /* The delegate's own: B x ceil(C/4) x H x W vec4 of floats (16 bytes),
   * channels 4s..4s+3 of pixel (h, w) in slice s; padded lanes of the last
   * slice are ignored on input and written as zero on output. Saves the
   * layout conversion (see docs/gpu_io.md for what it saves where). */
  TFLITE_GLES_BUFFER_LAYOUT_PHWC4_FLOAT32 = 1,
} TfLiteGlesBufferLayout;

/* TfLiteGlesDelegateBindBuffer flag, outputs only: no buffer handle, the
 * TFLite tensor is never written nor copied back by the interpreter (its
 * bytes keep what they held). For runtimes that cannot allow buffer-handle
 * outputs (Python's Interpreter copies every output back otherwise). */
#define TFLITE_GLES_BIND_NO_HOST_COPY 1u

/* Binds `gl_buffer` (a GL buffer object name) in `layout` (a
 * TfLiteGlesBufferLayout) to the tensor `tensor_index`, replacing an earlier
 * binding of it. The buffer must hold exactly
 * TfLiteGlesDelegateBufferBytes(delegate, tensor_index, layout) bytes.
 * Returns 0 (kTfLiteOk) or 1 (kTfLiteError, with the reason in
 * TfLiteGlesDelegateLastError): not our delegate, not applied yet, called
 * where the delegate's context is not current, unknown tensor index, a
 * tensor that is no GPU partition input or output, not a buffer of this
 * context, wrong size, unknown layout or flag. */
int TfLiteGlesDelegateBindBuffer(struct TfLiteDelegate* delegate, int tensor_index,
                                 uint32_t gl_buffer, int32_t layout, uint32_t flags);

/* Ends the binding of `tensor_index` (a stale output is copied back into
 * its TFLite tensor first). Returns 0, or 1 if it was not bound (see
 * TfLiteGlesDelegateLastError). */
int TfLiteGlesDelegateUnbindBuffer(struct TfLiteDelegate* delegate, int tensor_index);

/* Bytes a buffer bound to `tensor_index` in `layout` must hold, or -1 (see
 * TfLiteGlesDelegateLastError). */
int64_t TfLiteGlesDelegateBufferBytes(struct TfLiteDelegate* delegate, int tensor_index,
                                      int32_t layout);

/* Textures (docs/gpu_io.md, "Textures"): an application's GL_TEXTURE_2D
 * stands in for an image input or output of a GPU partition, so the pixels
 * never visit the CPU (a camera frame in, a mask out). It is a GPU binding
 * like a buffer's (above: same thread and context rules, same lifetime,
 * same TFLITE_GLES_BIND_NO_HOST_COPY flag for outputs, ended by
 * TfLiteGlesDelegateUnbindBuffer or TfLiteGlesDelegateUnbindTexture); the
 * texture is a name of the delegate's context (or of one sharing objects
 * with it: then make the writes visible across contexts, e.g. glFinish).
 *
 * The texture's size is the tensor's (width = W, height = H, batch 1, 1 to
 * 4 channels); the delegate never resizes. Texel (x, y) is pixel (w = x,
 * h = y): row 0, as glTexImage2D takes it from memory, is the first row.
 * Inputs: GL_RGBA8 (or unsized GL_RGBA of bytes), GL_RGBA16F or GL_RGBA32F,
 * read with texelFetch (no filtering; the delegate's own sampler object
 * makes a texture without mipmaps complete). Outputs: GL_RGBA8, GL_RGBA16F
 * or GL_RGBA32F allocated with glTexStorage2D (GLES 3.1 image units take
 * only immutable textures). The texture is checked at bind and again at
 * every Invoke (deleted, or reallocated to another size or format: Invoke
 * fails with the reason). A bound output is written into the texture; its
 * TFLite tensor is copied back by the interpreter's buffer-handle rules
 * unless TFLITE_GLES_BIND_NO_HOST_COPY is given (then never). */
typedef struct TfLiteGlesTextureBinding {
  /* sizeof(TfLiteGlesTextureBinding); set by TfLiteGlesTextureBindingDefault
   * (the library reads only the fields that fit in it). */
  size_t size;
  /* Input: tensor channel c = texel[channels[c]] * scale[c] + offset[c],
   * where texelFetch gives RGBA8 as byte / 255 ([0, 1]) and float formats
   * as stored. So bytes to [-1, 1]: scale 2, offset -1; to [0, 1]: scale 1,
   * offset 0; (byte - mean) / std: scale 255 / std, offset -mean / std.
   * Output: texel lane c = tensor channel c * scale[c] + offset[c] for the
   * tensor's C channels; the other lanes are G = B = 0, A = 1 (as GL
   * expands an R or RG texture); GL_RGBA8 stores clamp to [0, 1].
   * Defaults: scale 1, offset 0. */
  float scale[4];
  float offset[4];
  /* Input only: the texture component (0 = R, 1 = G, 2 = B, 3 = A) each
   * tensor channel takes; default {0, 1, 2, 3} (RGB of RGBA for a
   * 3-channel tensor, all four for 4). */
  int32_t channels[4];
} TfLiteGlesTextureBinding;

TfLiteGlesTextureBinding TfLiteGlesTextureBindingDefault(void);

/* Each returns 0 (kTfLiteOk) or 1 (kTfLiteError, nothing changed; the
 * reason in TfLiteGlesDelegateLastError): besides the buffer binding's
 * reasons, a texture that is not a live 2D texture of the context, of
 * another size or an unsupported format, a mutable output texture, a
 * tensor that is not batch 1 with 1 to 4 channels, a channel outside 0..3,
 * an input bound as output or the reverse. `binding` NULL: the defaults.
 * `flags`: TFLITE_GLES_BIND_NO_HOST_COPY (outputs) or 0. */
int TfLiteGlesDelegateBindInputTexture(struct TfLiteDelegate* delegate, int tensor_index,
                                       uint32_t texture,
                                       const TfLiteGlesTextureBinding* binding);
int TfLiteGlesDelegateBindOutputTexture(struct TfLiteDelegate* delegate, int tensor_index,
                                        uint32_t texture,
                                        const TfLiteGlesTextureBinding* binding,
                                        uint32_t flags);
/* TfLiteGlesDelegateUnbindBuffer under the name that reads right here. */
int TfLiteGlesDelegateUnbindTexture(struct TfLiteDelegate* delegate, int tensor_index);

/* The index of `tensor` (a TfLiteTensor* from TfLiteInterpreterGetInputTensor
 * or ...GetOutputTensor of the interpreter the delegate was applied to: the
 * C API has no index getter) in that graph, or -1 if it is none of its
 * tensors or the delegate has no GPU partition. */
int TfLiteGlesDelegateTensorIndex(const struct TfLiteDelegate* delegate, const void* tensor);

/* External-delegate entry points (TFLite's external_delegate interface):
 * keys/values are option strings; on error, report_error receives a message
 * naming the valid keys and NULL is returned. */
struct TfLiteDelegate* tflite_plugin_create_delegate(
    char** options_keys, char** options_values, size_t num_options,
    void (*report_error)(const char*));
void tflite_plugin_destroy_delegate(struct TfLiteDelegate* delegate);

#ifdef __cplusplus
}
#endif

#endif /* TFLITE_GLES_DELEGATE_H_ */
