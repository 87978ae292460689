#include "delegate/device/developer_overrides.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <GLES3/gl31.h>

#include "tflite_gles/delegate.h"

namespace tflite_gles {
namespace {

// A 0/1 switch; other values are ignored with a warning.
std::optional<bool> Switch(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  if (std::strcmp(text, "0") == 0 || std::strcmp(text, "1") == 0) return text[0] == '1';
  std::fprintf(stderr, "WARNING: tflite-gles: %s='%s' is not 0 or 1; ignored\n", name,
               text);
  return std::nullopt;
}

// An integer >= 0 (sweeps and A/B runs); other values are ignored with a
// warning.
std::optional<long long> NonNegative(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  char* end = nullptr;
  const long long parsed = std::strtoll(text, &end, 10);
  if (end != text && *end == '\0' && parsed >= 0) return parsed;
  std::fprintf(stderr, "WARNING: tflite-gles: %s='%s' is not an integer >= 0; ignored\n",
               name, text);
  return std::nullopt;
}

// Text passed on as is (checked where it is used, e.g. kernels/gemm.h).
std::string Text(const char* name) {
  const char* text = std::getenv(name);
  return text == nullptr ? std::string() : std::string(text);
}

// A GL buffer usage: stream_draw, stream_read, stream_copy, dynamic_draw,
// dynamic_read, static_draw.
std::optional<unsigned> Usage(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  static const struct { const char* name; unsigned usage; } kUsages[] = {
      {"stream_draw", GL_STREAM_DRAW},   {"stream_read", GL_STREAM_READ},
      {"stream_copy", GL_STREAM_COPY},   {"dynamic_draw", GL_DYNAMIC_DRAW},
      {"dynamic_read", GL_DYNAMIC_READ}, {"static_draw", GL_STATIC_DRAW}};
  for (const auto& entry : kUsages) {
    if (std::strcmp(entry.name, text) == 0) return entry.usage;
  }
  std::fprintf(stderr, "WARNING: tflite-gles: %s='%s' is not a buffer usage; ignored\n",
               name, text);
  return std::nullopt;
}

// map|fence|spin|mapped|mapped_spin (DeviceProfile::Readback).
std::optional<DeviceProfile::Readback> Readback(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  static const struct { const char* name; DeviceProfile::Readback mode; } kModes[] = {
      {"map", DeviceProfile::Readback::kMap},
      {"fence", DeviceProfile::Readback::kFence},
      {"spin", DeviceProfile::Readback::kFenceSpin},
      {"mapped", DeviceProfile::Readback::kMapped},
      {"mapped_spin", DeviceProfile::Readback::kMappedSpin}};
  for (const auto& entry : kModes) {
    if (std::strcmp(entry.name, text) == 0) return entry.mode;
  }
  std::fprintf(stderr,
               "WARNING: tflite-gles: %s='%s' is not map, fence, spin, mapped or "
               "mapped_spin; ignored\n", name, text);
  return std::nullopt;
}

// ssbo|texture_buffer|rgba_texture (TfLiteGlesStorage).
std::optional<int> Storage(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  static const struct { const char* name; int storage; } kStorages[] = {
      {"ssbo", TFLITE_GLES_STORAGE_SSBO},
      {"texture_buffer", TFLITE_GLES_STORAGE_TEXTURE_BUFFER},
      {"rgba_texture", TFLITE_GLES_STORAGE_RGBA_TEXTURE}};
  for (const auto& entry : kStorages) {
    if (std::strcmp(entry.name, text) == 0) return entry.storage;
  }
  std::fprintf(stderr,
               "WARNING: tflite-gles: %s='%s' is not ssbo, texture_buffer or "
               "rgba_texture; ignored\n", name, text);
  return std::nullopt;
}

// Dispatch counts separated by ',' or '/' ('/' passes through
// bench/options_ab.py); "-1" (never reached) for none. A bad entry ends the
// list with a warning, keeping the counts before it.
std::optional<std::vector<int>> CountList(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  std::vector<int> counts;
  for (const char* p = text; *p != '\0';) {
    char* end = nullptr;
    const long point = std::strtol(p, &end, 10);
    if (end == p) {
      std::fprintf(stderr,
                   "WARNING: tflite-gles: %s='%s' is not a list of dispatch counts; "
                   "ignored from '%s'\n", name, text, p);
      break;
    }
    counts.push_back(static_cast<int>(point));
    p = (*end == ',' || *end == '/') ? end + 1 : end;
  }
  return counts;
}

// Kilobytes >= 0 and below 2^30, as bytes.
std::optional<size_t> Kilobytes(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  char* end = nullptr;
  const long long kb = std::strtoll(text, &end, 10);
  if (end != text && *end == '\0' && kb >= 0 && kb < (1LL << 30)) {
    return static_cast<size_t>(kb) * 1024;
  }
  std::fprintf(stderr, "WARNING: tflite-gles: %s='%s' is not an integer >= 0; ignored\n",
               name, text);
  return std::nullopt;
}

}  // namespace

// The table. Every switch is documented in docs/developer_overrides.md; the
// comment here says what it is for.
DeveloperOverrides ReadDeveloperOverrides() {
  DeveloperOverrides o;
  // A/B runs of each fusion, and tests that check a fused graph against the
  // unfused one (or force a fusion on llvmpipe).
  o.fuse_norm_stats = Switch("TFLITE_GLES_FUSE_NORM_STATS");
  o.fuse_norm_affine = Switch("TFLITE_GLES_FUSE_NORM_AFFINE");
  o.fuse_elementwise_chains = Switch("TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS");
  o.fuse_upload = Switch("TFLITE_GLES_FUSE_UPLOAD");
  o.fuse_depthwise = Switch("TFLITE_GLES_FUSE_DEPTHWISE");
  o.fuse_mean = Switch("TFLITE_GLES_FUSE_MEAN");
  o.fuse_softmax = Switch("TFLITE_GLES_FUSE_SOFTMAX");
  // gemm.comp on or off (tests run it on llvmpipe), its tile forced (sweeps).
  o.shared_memory_gemm = Switch("TFLITE_GLES_SHARED_MEMORY_GEMM");
  o.gemm_tile = Text("TFLITE_GLES_GEMM_TILE");
  // conv2d.comp's tiling target (sweeps: bench/nvidia_sweep.sh).
  o.min_invocations = NonNegative("TFLITE_GLES_MIN_INVOCATIONS");
  o.conv_k_split = Switch("TFLITE_GLES_X_CONV_KSPLIT");
  o.conv_smem_tile = Switch("TFLITE_GLES_X_CONV_SMEM_TILE");
  o.conv_up2 = NonNegative("TFLITE_GLES_X_CONV_UP2");
  o.conv_up2_block = Text("TFLITE_GLES_X_CONV_UP2_BLOCK");
  o.conv_up2_literal = NonNegative("TFLITE_GLES_X_CONV_UP2_LITERAL");
  o.conv_up2_wsmem = Switch("TFLITE_GLES_X_CONV_UP2_WSMEM");
  o.conv_smem_prefetch = NonNegative("TFLITE_GLES_X_CONV_SMEM_PREFETCH");
  o.conv_k_split_wsmem = NonNegative("TFLITE_GLES_X_CONV_KSPLIT_WSMEM");
  o.conv_smem_slices = NonNegative("TFLITE_GLES_X_CONV_SMEM_SLICES");
  o.conv_smem_wonce = NonNegative("TFLITE_GLES_X_CONV_SMEM_WONCE");
  o.conv_smem_db = Switch("TFLITE_GLES_X_CONV_SMEM_DB");
  o.conv_smem_lit = NonNegative("TFLITE_GLES_X_CONV_SMEM_LIT");
  o.conv_smem_lit_groups = NonNegative("TFLITE_GLES_X_CONV_SMEM_LIT_GROUPS");
  o.conv_smem_pair = Switch("TFLITE_GLES_X_CONV_SMEM_PAIR");
  o.conv_smem_lit_spec = Switch("TFLITE_GLES_X_CONV_SMEM_LIT_SPEC");
  o.conv_smem_hoist = Switch("TFLITE_GLES_X_CONV_SMEM_HOIST");
  o.conv_smem_lit_prefetch = Switch("TFLITE_GLES_X_CONV_SMEM_LIT_PREFETCH");
  o.window_reuse = Switch("TFLITE_GLES_X_WINDOW_REUSE");
  o.window_small = Switch("TFLITE_GLES_X_WINDOW_SMALL");
  o.window_acc16 = Switch("TFLITE_GLES_X_WINDOW_ACC16");
  o.window_slice_steps = Switch("TFLITE_GLES_X_WINDOW_SLICE_STEPS");
  o.window_pack3 = Switch("TFLITE_GLES_X_WINDOW_PACK3");
  o.window_half_smem = Switch("TFLITE_GLES_X_WINDOW_HALF_SMEM");
  o.window_block_steps = NonNegative("TFLITE_GLES_X_WINDOW_BLOCK_STEPS");
  o.window_literal = Switch("TFLITE_GLES_X_WINDOW_LITERAL");
  o.window_literal_px = NonNegative("TFLITE_GLES_X_WINDOW_LITERAL_PX");
  o.window_literal_vec4s = NonNegative("TFLITE_GLES_X_WINDOW_LITERAL_VEC4S");
  o.window_small_lit = NonNegative("TFLITE_GLES_X_WINDOW_SMALL_LIT");
  o.fma_chain = Switch("TFLITE_GLES_X_FMA_CHAIN");
  o.dilated_dw_reuse = Switch("TFLITE_GLES_X_DILATED_DW_REUSE");
  o.pointwise_tile = Text("TFLITE_GLES_X_POINTWISE_TILE");
  o.conv_unroll = Switch("TFLITE_GLES_X_CONV_UNROLL");
  o.gemm_group_block = Switch("TFLITE_GLES_X_GEMM_GROUP_BLOCK");
  o.conv_unrolled_tile = Switch("TFLITE_GLES_X_CONV_UNROLLED_TILE");
  o.fuse_mirror_pad = Switch("TFLITE_GLES_X_FUSE_MIRROR_PAD");
  o.resize_view = Switch("TFLITE_GLES_X_RESIZE_VIEW");
  o.fuse_ew_prologue = Switch("TFLITE_GLES_X_FUSE_EW_PROLOGUE");
  o.fuse_fc_chain = Switch("TFLITE_GLES_X_FUSE_FC_CHAIN");
  o.fuse_chain_mean = Switch("TFLITE_GLES_X_FUSE_CHAIN_MEAN");
  o.fuse_resize_prologue = Switch("TFLITE_GLES_X_FUSE_RESIZE_PROLOGUE");
  o.batch_gemms = Switch("TFLITE_GLES_X_BATCH_GEMMS");
  o.norm_split = Switch("TFLITE_GLES_X_NORM_SPLIT");
  o.conv_tile = Text("TFLITE_GLES_X_CONV_TILE");
  o.window_conv = Text("TFLITE_GLES_X_WINDOW_CONV");
  o.norm_prologue = Switch("TFLITE_GLES_X_NORM_PROLOGUE");
  o.fuse_upsample = Switch("TFLITE_GLES_X_FUSE_UPSAMPLE");
  o.epilogue_in2 = Switch("TFLITE_GLES_X_EPILOGUE_IN2");
  o.fuse_gemm_pairs = Switch("TFLITE_GLES_X_FUSE_GEMM_PAIRS");
  o.gemm_pair_tile = Text("TFLITE_GLES_X_GEMM_PAIR_TILE");
  o.fp16_math = NonNegative("TFLITE_GLES_X_FP16_MATH");
  o.conv_smem_block = Text("TFLITE_GLES_X_CONV_SMEM_BLOCK");
  // Shapes compiled in vs uniforms (A/B runs, tests of both paths).
  o.specialize_shapes = Switch("TFLITE_GLES_SPECIALIZE_SHAPES");
  o.specialize_gemm_rows = NonNegative("TFLITE_GLES_SPECIALIZE_GEMM_ROWS");
  // Depthwise-fused GEMM variants (tests on llvmpipe, sweeps).
  o.dw_register_tiles = Switch("TFLITE_GLES_X_DW_REGISTER_TILES");
  o.dw_splitk = Switch("TFLITE_GLES_X_DW_SPLITK");
  o.dw_splitk_tile = Text("TFLITE_GLES_X_DW_SPLITK_TILE");
  o.fuse_chain_heads = NonNegative("TFLITE_GLES_X_FUSE_CHAIN_HEADS");
  o.gemm_pair_steps = NonNegative("TFLITE_GLES_X_GEMM_PAIR_STEPS");
  o.gemm_pair_rows32 = NonNegative("TFLITE_GLES_X_GEMM_PAIR_ROWS32");
  o.fuse_readback = Switch("TFLITE_GLES_X_FUSE_READBACK");
  o.concat_epilogue = Switch("TFLITE_GLES_X_CONCAT_EPILOGUE");
  o.fused_readback_bands = Switch("TFLITE_GLES_X_FUSED_READBACK_BANDS");
  o.fuse_unpool = Switch("TFLITE_GLES_X_FUSE_UNPOOL");
  o.fuse_pool_concat = Switch("TFLITE_GLES_X_FUSE_POOL_CONCAT");
  o.fuse_pool_prologue = Switch("TFLITE_GLES_X_FUSE_POOL_PROLOGUE");
  o.specialize_chains = Switch("TFLITE_GLES_X_SPECIALIZE_CHAINS");
  o.fuse_upsample_operand = Switch("TFLITE_GLES_X_FUSE_UPSAMPLE_OPERAND");
  o.fuse_second_projection = Switch("TFLITE_GLES_X_FUSE_SECOND_PROJECTION");
  if (const char* tile = std::getenv("TFLITE_GLES_X_GEMM_PAIR_HEAD_TILE")) {
    o.gemm_pair_head_tile = tile;
  }
  // The tensor storage forced (A/B runs of the three storages; the op and
  // model tests under RGBA textures, ctest op_tests_rgba_textures).
  o.storage = Storage("TFLITE_GLES_X_STORAGE");
  // Their rows: 0 (rows of W) or a power of two (A/B runs of the addressing).
  o.texture_rows = NonNegative("TFLITE_GLES_X_TEXTURE_ROWS");
  // Transfer paths: each one's alternative stays testable on llvmpipe and
  // measurable on the device machine (bench/options_ab.py).
  o.upload_usage = Usage("TFLITE_GLES_X_UPLOAD_USAGE");
  o.mapped_upload = Switch("TFLITE_GLES_X_MAPPED_UPLOAD");
  o.streaming_upload = Switch("TFLITE_GLES_X_STREAMING_UPLOAD");
  o.streaming_readback = Switch("TFLITE_GLES_X_STREAMING_READBACK");
  o.copy_threads = NonNegative("TFLITE_GLES_X_COPY_THREADS");
  o.half_upload = Switch("TFLITE_GLES_X_HALF_UPLOAD");
  o.direct_transfers = Switch("TFLITE_GLES_X_DIRECT_TRANSFERS");
  o.cpu_readback_relayout = Switch("TFLITE_GLES_X_CPU_READBACK_RELAYOUT");
  // A 1x1 convolution over a concat with a broadcast pixel: its bias (conv.cc).
  o.broadcast_concat_bias = Switch("TFLITE_GLES_X_BROADCAST_CONCAT_BIAS");
  // An output's bilinear resize done by the CPU at readback (readback_resize.h).
  o.cpu_readback_resize = Switch("TFLITE_GLES_X_CPU_READBACK_RESIZE");
  o.row_readback_resize = Switch("TFLITE_GLES_X_ROW_READBACK_RESIZE");
  o.copy_min_part = Kilobytes("TFLITE_GLES_X_COPY_MIN_PART_KB");
  o.direct_max_bytes = Kilobytes("TFLITE_GLES_X_DIRECT_MAX_KB");
  o.readback = Readback("TFLITE_GLES_X_READBACK");
  // When an invoke flushes early (NVIDIA's command batching).
  o.early_flush = CountList("TFLITE_GLES_X_EARLY_FLUSH");
  // Large transfers in row bands pipelined with their conversions
  // (runtime_bands.cc): A/B runs, and the banded path forced in llvmpipe's tests.
  o.transfer_bands = NonNegative("TFLITE_GLES_X_TRANSFER_BANDS");
  o.transfer_band_min = Kilobytes("TFLITE_GLES_X_TRANSFER_BAND_MIN_KB");
  o.readback_bands = NonNegative("TFLITE_GLES_X_READBACK_BANDS");
  o.band_flushes = CountList("TFLITE_GLES_X_BAND_FLUSHES");
  o.band_early_wake = Switch("TFLITE_GLES_X_BAND_EARLY_WAKE");
  // TFLite's float I/O tensors as our mapped staging, no copy (runtime_alias.cc).
  o.alias_io = Switch("TFLITE_GLES_X_ALIAS_IO");
  o.alias_half_inputs = Switch("TFLITE_GLES_X_ALIAS_HALF_INPUTS");
  o.alias_unfuse = Switch("TFLITE_GLES_X_ALIAS_UNFUSE");
  // fp16's CPU resize at readback reading the mapped halves per thread.
  o.half_readback_rows = Switch("TFLITE_GLES_X_HALF_READBACK_ROWS");
  // Per-invoke timing reports for bench runs (invoke_timeline.h).
  o.driver_cache = Switch("TFLITE_GLES_X_DRIVER_CACHE");
  o.program_binaries = Switch("TFLITE_GLES_X_PROGRAM_BINARIES");
  o.model_data_chunk = Kilobytes("TFLITE_GLES_X_MODEL_DATA_CHUNK_KB");
  o.report_phases = Switch("TFLITE_GLES_X_PHASES");
  o.report_timeline = Switch("TFLITE_GLES_X_TIMELINE");
  // Profiling through GPU timer queries where the device would not use them
  // (llvmpipe: its times are meaningless, but tests see the profile NVIDIA
  // gives, e.g. which steps a binding skipped).
  o.timer_queries = Switch("TFLITE_GLES_X_TIMER_QUERIES");
  o.profile_repeat = NonNegative("TFLITE_GLES_X_PROFILE_REPEAT");
  // An output texture written by the producing kernel's epilogue, or by a
  // dispatch of its own after it (A/B runs, bench/device_tex4.sh).
  o.texture_epilogue = Switch("TFLITE_GLES_X_TEXTURE_EPILOGUE");
  // Where a start goes (egl/init_phases.h), for the cold-start benches.
  o.report_init_phases = Switch("TFLITE_GLES_X_INIT_PHASES");
  // A text dump of the TFLite graph at Prepare (graph_dump.h), for debugging.
  o.dump_graph = Text("TFLITE_GLES_DUMP_GRAPH");
  // Every dispatch's assembled shader source, its grid and uniform values,
  // one file per step (runtime.cc), to rerun a kernel outside the delegate.
  o.dump_shaders = Text("TFLITE_GLES_X_DUMP_SHADERS");
  o.device_profile = Text("TFLITE_GLES_DEVICE_PROFILE");
  return o;
}

}  // namespace tflite_gles
