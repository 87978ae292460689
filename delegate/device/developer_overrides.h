// Developer overrides: every environment variable the delegate reads, in one
// table (ReadDeveloperOverrides, developer_overrides.cc; the list with values
// and purposes is docs/developer_overrides.md). They exist for A/B runs,
// sweeps on the device machine and tests that force a path llvmpipe would not
// take; none is needed to use the delegate. A variable that is unset leaves
// the device's choice (TuneForDevice) alone; a bad value is ignored with a
// warning naming it. TFLITE_GLES_DEVICE_PROFILE, a user switch, is read here
// too (parsed by delegate/device/device_profiles.cc). Outside this table only
// egl/ reads the environment: the
// user switch TFLITE_GLES_EGL_PLATFORM (egl_environment.cc) and the test hook
// TFLITE_GLES_TEST_MAX_BUFFER_BYTES (gl_objects.cc), since egl/ knows nothing
// of the delegate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

// Each field: the variable that sets it; unset = std::nullopt (or empty).
// The DeviceProfile field it overrides says what the switch does.
struct DeveloperOverrides {
  // Fusions, 0/1 (DeviceProfile::fuse_*).
  std::optional<bool> fuse_norm_stats;           // TFLITE_GLES_FUSE_NORM_STATS
  std::optional<bool> fuse_norm_affine;          // TFLITE_GLES_FUSE_NORM_AFFINE
  std::optional<bool> fuse_elementwise_chains;   // TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS
  std::optional<bool> fuse_upload;               // TFLITE_GLES_FUSE_UPLOAD
  std::optional<bool> fuse_depthwise;            // TFLITE_GLES_FUSE_DEPTHWISE
  std::optional<bool> fuse_mean;                 // TFLITE_GLES_FUSE_MEAN
  std::optional<bool> fuse_softmax;              // TFLITE_GLES_FUSE_SOFTMAX
  // Kernel choice and tiling.
  std::optional<bool> shared_memory_gemm;        // TFLITE_GLES_SHARED_MEMORY_GEMM
  std::string gemm_tile;                         // TFLITE_GLES_GEMM_TILE
  std::optional<long long> min_invocations;      // TFLITE_GLES_MIN_INVOCATIONS
  std::optional<bool> conv_k_split;              // TFLITE_GLES_X_CONV_KSPLIT
  std::optional<bool> conv_smem_tile;            // TFLITE_GLES_X_CONV_SMEM_TILE
  std::optional<long long> conv_up2;             // TFLITE_GLES_X_CONV_UP2
  std::string conv_up2_block;                     // TFLITE_GLES_X_CONV_UP2_BLOCK
  std::optional<long long> conv_up2_literal;      // TFLITE_GLES_X_CONV_UP2_LITERAL
  std::optional<bool> conv_up2_wsmem;            // TFLITE_GLES_X_CONV_UP2_WSMEM
  std::optional<long long> conv_smem_prefetch;   // TFLITE_GLES_X_CONV_SMEM_PREFETCH
  std::optional<long long> conv_k_split_wsmem;   // TFLITE_GLES_X_CONV_KSPLIT_WSMEM
  std::optional<long long> conv_smem_slices;     // TFLITE_GLES_X_CONV_SMEM_SLICES
  std::optional<long long> conv_smem_wonce;      // TFLITE_GLES_X_CONV_SMEM_WONCE
  std::optional<bool> conv_smem_db;              // TFLITE_GLES_X_CONV_SMEM_DB
  std::optional<long long> conv_smem_lit;        // TFLITE_GLES_X_CONV_SMEM_LIT
  std::optional<long long> conv_smem_lit_groups; // TFLITE_GLES_X_CONV_SMEM_LIT_GROUPS
  std::optional<bool> conv_smem_pair;            // TFLITE_GLES_X_CONV_SMEM_PAIR
  std::optional<bool> conv_smem_lit_spec;        // TFLITE_GLES_X_CONV_SMEM_LIT_SPEC
  std::optional<bool> conv_smem_hoist;           // TFLITE_GLES_X_CONV_SMEM_HOIST
  std::optional<bool> conv_smem_lit_prefetch;    // TFLITE_GLES_X_CONV_SMEM_LIT_PREFETCH
  std::optional<bool> dilated_dw_reuse;          // TFLITE_GLES_X_DILATED_DW_REUSE
  std::string pointwise_tile;                    // TFLITE_GLES_X_POINTWISE_TILE
  std::optional<bool> conv_unroll;               // TFLITE_GLES_X_CONV_UNROLL
  std::optional<bool> gemm_group_block;          // TFLITE_GLES_X_GEMM_GROUP_BLOCK
  std::optional<bool> conv_unrolled_tile;       // TFLITE_GLES_X_CONV_UNROLLED_TILE
  std::optional<bool> fuse_ew_prologue;          // TFLITE_GLES_X_FUSE_EW_PROLOGUE
  std::optional<bool> fuse_fc_chain;             // TFLITE_GLES_X_FUSE_FC_CHAIN
  std::optional<bool> fuse_chain_mean;           // TFLITE_GLES_X_FUSE_CHAIN_MEAN
  std::optional<bool> fuse_resize_prologue;      // TFLITE_GLES_X_FUSE_RESIZE_PROLOGUE
  std::optional<bool> fuse_mirror_pad;           // TFLITE_GLES_X_FUSE_MIRROR_PAD
  std::optional<bool> resize_view;               // TFLITE_GLES_X_RESIZE_VIEW
  std::optional<bool> batch_gemms;               // TFLITE_GLES_X_BATCH_GEMMS
  std::optional<bool> norm_split;                // TFLITE_GLES_X_NORM_SPLIT
  std::string conv_tile;                         // TFLITE_GLES_X_CONV_TILE
  std::string window_conv;                       // TFLITE_GLES_X_WINDOW_CONV
  std::optional<bool> norm_prologue;             // TFLITE_GLES_X_NORM_PROLOGUE
  std::optional<bool> fuse_upsample;             // TFLITE_GLES_X_FUSE_UPSAMPLE
  std::optional<bool> epilogue_in2;              // TFLITE_GLES_X_EPILOGUE_IN2
  std::optional<bool> fuse_gemm_pairs;           // TFLITE_GLES_X_FUSE_GEMM_PAIRS
  std::string gemm_pair_tile;                    // TFLITE_GLES_X_GEMM_PAIR_TILE
  std::optional<long long> fp16_math;            // TFLITE_GLES_X_FP16_MATH
  std::string conv_smem_block;                   // TFLITE_GLES_X_CONV_SMEM_BLOCK
  std::optional<bool> specialize_shapes;         // TFLITE_GLES_SPECIALIZE_SHAPES
  std::optional<long long> specialize_gemm_rows; // TFLITE_GLES_SPECIALIZE_GEMM_ROWS
  std::optional<bool> dw_register_tiles;         // TFLITE_GLES_X_DW_REGISTER_TILES
  std::optional<bool> dw_splitk;                 // TFLITE_GLES_X_DW_SPLITK
  std::string dw_splitk_tile;                    // TFLITE_GLES_X_DW_SPLITK_TILE
  std::optional<long long> fuse_chain_heads;     // TFLITE_GLES_X_FUSE_CHAIN_HEADS
  std::optional<long long> gemm_pair_steps;      // TFLITE_GLES_X_GEMM_PAIR_STEPS
  std::optional<long long> gemm_pair_rows32;     // TFLITE_GLES_X_GEMM_PAIR_ROWS32
  std::optional<bool> fuse_readback;             // TFLITE_GLES_X_FUSE_READBACK
  std::optional<bool> concat_epilogue;           // TFLITE_GLES_X_CONCAT_EPILOGUE
  std::optional<bool> fused_readback_bands;      // TFLITE_GLES_X_FUSED_READBACK_BANDS
  std::optional<bool> fuse_unpool;               // TFLITE_GLES_X_FUSE_UNPOOL
  std::optional<bool> fuse_pool_concat;          // TFLITE_GLES_X_FUSE_POOL_CONCAT
  std::optional<bool> fuse_pool_prologue;        // TFLITE_GLES_X_FUSE_POOL_PROLOGUE
  std::optional<std::string> gemm_pair_head_tile;  // TFLITE_GLES_X_GEMM_PAIR_HEAD_TILE
  std::optional<bool> specialize_chains;         // TFLITE_GLES_X_SPECIALIZE_CHAINS
  std::optional<bool> fuse_upsample_operand;     // TFLITE_GLES_X_FUSE_UPSAMPLE_OPERAND
  std::optional<bool> fuse_second_projection;    // TFLITE_GLES_X_FUSE_SECOND_PROJECTION
  // The storage of tensors: TFLITE_GLES_STORAGE_* (ssbo, texture_buffer,
  // rgba_texture), replacing the option `storage` (A/B runs of the three
  // storages, the test suites under rgba_texture).
  std::optional<int> storage;                    // TFLITE_GLES_X_STORAGE
  std::optional<long long> texture_rows;         // TFLITE_GLES_X_TEXTURE_ROWS
  // Transfers and submission.
  std::optional<unsigned> upload_usage;          // TFLITE_GLES_X_UPLOAD_USAGE
  std::optional<bool> mapped_upload;             // TFLITE_GLES_X_MAPPED_UPLOAD
  std::optional<bool> streaming_upload;          // TFLITE_GLES_X_STREAMING_UPLOAD
  std::optional<bool> streaming_readback;        // TFLITE_GLES_X_STREAMING_READBACK
  std::optional<long long> copy_threads;         // TFLITE_GLES_X_COPY_THREADS
  std::optional<size_t> model_data_chunk;        // TFLITE_GLES_X_MODEL_DATA_CHUNK_KB (x 1024)
  std::optional<bool> half_upload;               // TFLITE_GLES_X_HALF_UPLOAD
  std::optional<bool> direct_transfers;          // TFLITE_GLES_X_DIRECT_TRANSFERS
  std::optional<bool> cpu_readback_relayout;     // TFLITE_GLES_X_CPU_READBACK_RELAYOUT
  std::optional<bool> broadcast_concat_bias;     // TFLITE_GLES_X_BROADCAST_CONCAT_BIAS
  std::optional<bool> cpu_readback_resize;       // TFLITE_GLES_X_CPU_READBACK_RESIZE
  std::optional<bool> row_readback_resize;       // TFLITE_GLES_X_ROW_READBACK_RESIZE
  std::optional<size_t> copy_min_part;           // TFLITE_GLES_X_COPY_MIN_PART_KB (x 1024)
  std::optional<size_t> direct_max_bytes;        // TFLITE_GLES_X_DIRECT_MAX_KB (x 1024)
  std::optional<DeviceProfile::Readback> readback;  // TFLITE_GLES_X_READBACK
  std::optional<std::vector<int>> early_flush;   // TFLITE_GLES_X_EARLY_FLUSH
  std::optional<long long> transfer_bands;       // TFLITE_GLES_X_TRANSFER_BANDS
  std::optional<size_t> transfer_band_min;       // TFLITE_GLES_X_TRANSFER_BAND_MIN_KB (x 1024)
  std::optional<long long> readback_bands;       // TFLITE_GLES_X_READBACK_BANDS
  std::optional<std::vector<int>> band_flushes;  // TFLITE_GLES_X_BAND_FLUSHES
  std::optional<bool> band_early_wake;           // TFLITE_GLES_X_BAND_EARLY_WAKE
  std::optional<bool> alias_io;                  // TFLITE_GLES_X_ALIAS_IO
  std::optional<bool> alias_half_inputs;         // TFLITE_GLES_X_ALIAS_HALF_INPUTS
  std::optional<bool> alias_unfuse;              // TFLITE_GLES_X_ALIAS_UNFUSE
  std::optional<bool> half_readback_rows;        // TFLITE_GLES_X_HALF_READBACK_ROWS
  // The serialization cache (delegate/runtime/program_cache.h).
  std::optional<bool> driver_cache;              // TFLITE_GLES_X_DRIVER_CACHE
  std::optional<bool> program_binaries;          // TFLITE_GLES_X_PROGRAM_BINARIES
  // Reports and dumps.
  std::optional<bool> report_phases;             // TFLITE_GLES_X_PHASES
  std::optional<bool> report_timeline;           // TFLITE_GLES_X_TIMELINE
  std::optional<bool> timer_queries;             // TFLITE_GLES_X_TIMER_QUERIES
  std::optional<long long> profile_repeat;       // TFLITE_GLES_X_PROFILE_REPEAT
  std::optional<bool> texture_epilogue;          // TFLITE_GLES_X_TEXTURE_EPILOGUE
  std::optional<bool> report_init_phases;        // TFLITE_GLES_X_INIT_PHASES
  std::string dump_graph;                        // TFLITE_GLES_DUMP_GRAPH (a path)
  std::optional<bool> window_reuse;              // TFLITE_GLES_X_WINDOW_REUSE
  std::optional<bool> window_small;              // TFLITE_GLES_X_WINDOW_SMALL
  std::optional<bool> window_acc16;              // TFLITE_GLES_X_WINDOW_ACC16
  std::optional<bool> window_slice_steps;        // TFLITE_GLES_X_WINDOW_SLICE_STEPS
  std::optional<bool> window_pack3;              // TFLITE_GLES_X_WINDOW_PACK3
  std::optional<bool> window_half_smem;          // TFLITE_GLES_X_WINDOW_HALF_SMEM
  std::optional<long long> window_block_steps;   // TFLITE_GLES_X_WINDOW_BLOCK_STEPS
  std::optional<bool> window_literal;            // TFLITE_GLES_X_WINDOW_LITERAL
  std::optional<long long> window_literal_px;    // TFLITE_GLES_X_WINDOW_LITERAL_PX
  std::optional<long long> window_literal_vec4s;  // TFLITE_GLES_X_WINDOW_LITERAL_VEC4S
  std::optional<long long> window_small_lit;     // TFLITE_GLES_X_WINDOW_SMALL_LIT
  std::optional<bool> fma_chain;                 // TFLITE_GLES_X_FMA_CHAIN
  std::string dump_shaders;                      // TFLITE_GLES_X_DUMP_SHADERS (a folder)
  // The user switch for the device profile (delegate/device/device_profiles.h;
  // README): read here with the rest, parsed where the profile is chosen.
  std::string device_profile;                    // TFLITE_GLES_DEVICE_PROFILE
};

// Reads the whole table from the environment. The delegate reads it once per
// Prepare (TFLite re-prepares after a resize); tests that build a
// DeviceProfile themselves read it through TuneForDevice(DeviceProfile*).
DeveloperOverrides ReadDeveloperOverrides();

}  // namespace tflite_gles
