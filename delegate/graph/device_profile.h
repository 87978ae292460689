// What a kernel may assume about the device (DeviceProfile): the limits it
// checks against and the per-device choices TuneForDevice makes
// (delegate/device/device_tuning.cc), each overridable for A/B runs through
// delegate/device/developer_overrides.h. Split from graph.h, which it outgrew.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "egl/egl_environment.h"

namespace tflite_gles {

// What a kernel may assume about the device when it checks and builds.
struct DeviceProfile {
  const egl::GpuInfo* gpu = nullptr;
  bool fp16 = false;                  // tensors stored as half floats
  bool texture_buffer_reads = true;   // reads through samplerBuffer views
  // Tensors (and constants) in 2D RGBA textures, written as images, read with texelFetch
  // (egl/tensor_texture.h; docs/design.md, "Tensor layout and storage"); staging and read-write
  // buffers stay buffers. Chosen in GlesDelegate::AcquireEnvironment; then no texture_buffer_reads.
  bool rgba_textures = false;
  // Their rows: 0 = rows of W (a tensor of <= 4 channels is its RGBA image;
  // shaders divide by the texture's width at every access); a power of two
  // = rows of that many texels in every texture (a mask and a shift). Set
  // by TuneForDevice (2048); TFLITE_GLES_X_TEXTURE_ROWS=0|2^k.
  int texture_row_width = 2048;
  // With SSBO reads: the BHWC staging of uploads still read through a
  // samplerBuffer view (see gl::StorageChoice::staging_texture_reads).
  bool staging_texture_reads = false;
  // The most buffers (outputs + inputs + read-write) one dispatch may bind:
  // fusions and concat stay within it (GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS
  // and GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS with SSBO reads, 4 on a GPU at
  // the GLES 3.1 minimum). Set by TuneForDevice.
  int max_dispatch_buffers = 1 << 20;
  // Preferred workgroup width along x (multiple of 8 for llvmpipe).
  uint32_t preferred_local_x = 64;
  // Elementwise ops fold into their producer's store (passes/fusion.h); false: none do.
  bool fuse_epilogues = true;
  // Elementwise dispatches take epilogues too (chains of elementwise ops), and concatenations
  // (fuse_concat_epilogues; passes/fusion.h). TFLITE_GLES_FUSE_ELEMENTWISE_CHAINS,
  // TFLITE_GLES_X_CONCAT_EPILOGUE.
  bool fuse_elementwise_chains = true;
  bool fuse_concat_epilogues = false;
  // Intermediates share one arena buffer by lifetime (passes/memory_planner.h).
  bool plan_memory = true;
  // Convolution tiles: 0 = llvmpipe's register tiles (few invocations, each
  // with much reuse); > 0 = shrink tiles until a dispatch has at least this
  // many invocations (GPUs with thousands of lanes). Set by TuneForDevice.
  long long min_invocations = 0;
  // Usage hint of upload staging (where a driver places it). TuneForDevice.
  unsigned upload_usage = 0x88E1;    // GL_STREAM_READ; downloads always use it
  // Upload staging persistently mapped (GL_EXT_buffer_storage), memcpy'd; alias: mapped
  // float staging is the TFLite tensor's memory (runtime_alias.cc), fp16 inputs too, and
  // alias_unfuses_upload unfuses an upload to alias it. X_ALIAS_IO/_HALF_INPUTS/_UNFUSE.
  bool mapped_upload_staging = false, alias_model_io = false;
  bool alias_half_inputs = true, alias_unfuses_upload = false;
  // An image input's conversion folded into the convolution that reads it
  // (passes/upload_fusion.h; TFLITE_GLES_FUSE_UPLOAD), an output's into its
  // producer (passes/readback_fusion.h; TFLITE_GLES_X_FUSE_READBACK).
  bool fuse_upload_into_conv = false, fuse_readback = false;
  // Direct transfers (TFLITE_GLES_X_DIRECT_TRANSFERS): the CPU reads and
  // writes a tensor's own PHWC4 buffer (floats or halves) and no layout
  // conversion dispatch runs. Outputs: where PHWC4 order is BHWC order (one
  // slice of exactly 4 channels; one pixel per batch with whole slices or
  // one batch). Inputs: up to direct_max_bytes (TFLITE_GLES_X_DIRECT_MAX_KB;
  // consumers then read host memory on a discrete GPU), relaid out on the
  // CPU where the layouts differ.
  bool direct_transfers = true;
  size_t direct_max_bytes = 64 * 1024;
  // With fp16 storage, inputs are staged as halves, converted on the CPU
  // (half the bytes for the CPU to write and the GPU to read; needs the
  // staging read through a samplerBuffer view). TFLITE_GLES_X_HALF_UPLOAD.
  bool half_upload_staging = true;
  // Mapped upload staging written with non-temporal stores
  // (delegate/runtime/host_copy.h; x86-64 only). Set by TuneForDevice;
  // TFLITE_GLES_X_STREAMING_UPLOAD=0/1.
  bool streaming_upload = false;
  // The copy of a mapped readback into TFLite's tensor with non-temporal
  // stores (no read for ownership, but the tensor then not in the CPU's
  // caches for the caller's read); off until measured (docs/perf/log.md,
  // "deep, session 12"). TFLITE_GLES_X_STREAMING_READBACK.
  bool streaming_readback = false;
  // The most threads a megabyte copy between TFLite's tensors and mapped
  // staging uses (host_copy.h, CopyWorkers; 1: the calling thread alone).
  // Set by TuneForDevice; TFLITE_GLES_X_COPY_THREADS.
  int host_copy_threads = 1;
  // The smallest part such a copy is split into (CopyWorkers::kMinPartBytes
  // by default, every device); TFLITE_GLES_X_COPY_MIN_PART_KB.
  size_t host_copy_min_part_bytes = 1024 * 1024;
  // Staged transfers of >= the bytes in up to N row bands (uploads, readbacks) pipelined
  // with their conversions (runtime_bands.cc; 0: whole); after banded uploads a flush
  // after these many dispatches; band_early_wake, fused_readback_bands (a fused readback's
  // kernel in bands, else whole; TFLITE_GLES_X_FUSED_READBACK_BANDS): runtime_bands.cc.
  int transfer_bands = 0, readback_bands = 0;
  std::vector<int> band_flush_points;
  bool band_early_wake = false, fused_readback_bands = false;
  size_t transfer_band_min_bytes = size_t{1} << 20;
  // The pieces a model-data entry is read, checksummed and uploaded in
  // (delegate/runtime/model_data_cache.h; 0: each constant whole). 256 KB
  // stays in llvmpipe's host's L2 between the read, the hash and the copy
  // (log.md, "cold2"). TuneForDevice; TFLITE_GLES_X_MODEL_DATA_CHUNK_KB.
  size_t model_data_chunk_bytes = size_t{256} << 10;
  // How an invoke waits for its outputs (TFLITE_GLES_X_READBACK): kMap lets
  // glMapBufferRange wait; kFence/kFenceSpin wait on a glFenceSync first
  // (sleeping / polling); kMapped(Spin) wait on it and copy from persistent mappings.
  enum class Readback { kMap, kFence, kFenceSpin, kMapped, kMappedSpin };
  Readback readback = Readback::kMap;
  bool mapped_readback() const {
    return readback == Readback::kMapped || readback == Readback::kMappedSpin;
  }
  // glFlush after these many dispatches of an invoke (0: right after the
  // uploads; empty: never): NVIDIA's driver holds issued commands back until
  // ~60 us after the first pending one (the GPU idled for an invoke's first
  // ~90 us). TuneForDevice; TFLITE_GLES_X_EARLY_FLUSH=N[,M...] ("-1": none).
  std::vector<int> early_flush_points;
  // Instance-norm statistics (MEAN, SQUARED_DIFFERENCE, MEAN, ADD, RSQRT)
  // as one dispatch (delegate/passes/norm_fusion.h). TFLITE_GLES_FUSE_NORM_STATS.
  bool fuse_norm_stats = true;
  // ... with a conditional instance norm's affine half (scale and shift from gamma and beta) in
  // the same dispatch, where it may bind six buffers (norm_fusion.h). _FUSE_NORM_AFFINE.
  bool fuse_norm_affine = true;
  // General convolutions with long sums split across a workgroup's z (conv2d.comp K_SPLIT;
  // TFLITE_GLES_X_CONV_KSPLIT); from this many output pixels (0: none) its weights staged in
  // shared memory (KS_WSMEM; TFLITE_GLES_X_CONV_KSPLIT_WSMEM=N).
  bool conv_k_split = false;
  long long conv_k_split_wsmem_rows = 0;
  // General stride-1 convolutions on large maps of <= conv_smem_slices input slices (4-8) stage
  // each slice's tile and weights in shared memory (conv2d.comp SMEM_TILE) in place of K_SPLIT
  // or the gather; TFLITE_GLES_X_CONV_SMEM_TILE=0/1, _SMEM_SLICES. Its block LX/LY/PX/SL, all
  // 0: kernels::ChooseSmemTile's (TFLITE_GLES_X_CONV_SMEM_BLOCK). prefetch: slice s + 1 loaded
  // in registers during slice s's taps (ST_PREFETCH; 0 none, 1 all, 2 ChooseSmemTile's rule;
  // TFLITE_GLES_X_CONV_SMEM_PREFETCH).
  // wonce: every input slice's weights staged once (ST_WONCE; 1 every layer, 2
  // kernels::ChooseSmemTile's rule; TFLITE_GLES_X_CONV_SMEM_WONCE);
  // db: two tiles, one barrier per slice (ST_DB, with wonce; TFLITE_GLES_X_CONV_SMEM_DB).
  // lit: layers of <= 2 output slices take 1 pixel x all slices per invocation with their
  // weights as constants in the program (ST_LIT; 1 fp32 storage only, 2 fp16 too;
  // TFLITE_GLES_X_CONV_SMEM_LIT); lit_groups: up to that many slice groups of 2 (ST_LIT_G,
  // _LIT_GROUPS); pair: with lit, two input slices staged per barrier (ST_PAIR, _PAIR);
  // lit_spec: lit programs with their shapes compiled in (_LIT_SPEC); hoist: with lit, the
  // tile's sources computed once, not per slice (ST_HOIST, _HOIST); lit_prefetch: one-group
  // lit tiles take ST_PREFETCH too (_LIT_PREFETCH).
  bool conv_smem_tile = false, conv_smem_db = false, conv_smem_pair = false;
  bool conv_smem_lit_spec = false, conv_smem_hoist = false, conv_smem_lit_prefetch = false;
  int conv_smem_slices = 4, conv_smem_prefetch = 0, conv_smem_lit = 0, conv_smem_wonce = 0;
  int conv_smem_lit_groups = 1;
  std::array<int, 4> conv_smem_block = {0, 0, 0, 0};
  // A 3x3 stride-1 convolution over a nearest upsample by 2 with padding 1 (GATHER_UPSAMPLE 2)
  // as four 2x2 convolutions over the source (shaders/conv2d_up2.comp,
  // delegate/passes/upsample_conv.h; TFLITE_GLES_X_CONV_UP2=0/1/2: off, every such layer,
  // the measured rule: with literals only one-group layers, without them TS 1 past 4 input
  // slices). Block LX/LY/TS/Z (TFLITE_GLES_X_CONV_UP2_BLOCK): source pixels along x and y,
  // output slices per invocation, Z 0: a parity per local z, 1: all four per invocation
  // (QUAD), 2: a parity per workgroup (PAR_WG). Weights of at most conv_up2_literal_vec4s
  // vec4s become literals (TFLITE_GLES_X_CONV_UP2_LITERAL; 0: none).
  int conv_up2 = 0;
  std::array<int, 4> conv_up2_block = {8, 4, 2, 0};
  long long conv_up2_literal_vec4s = 0;
  // Weights that are not literals staged per input slice in shared memory (WSMEM) instead of
  // read per product (TFLITE_GLES_X_CONV_UP2_WSMEM).
  bool conv_up2_wsmem = false;
  // Dilated 3x3 depthwise layers at stride 1 reuse each loaded input across a block of outputs
  // a dilation apart (depthwise_conv2d.comp), not a gather per tap; _X_DILATED_DW_REUSE=0/1.
  bool dilated_depthwise_reuse = false;
  // "ROWS,SLICES" ('/' for ','): conv2d.comp's register tile for 1x1 convolutions on maps of
  // >= 128 pixels instead of ChooseGemmTile's (sweeps; TFLITE_GLES_X_POINTWISE_TILE). Empty: its.
  std::string conv_tile_override;
  // conv2d.comp's 1x1 / FC loop takes two depth steps per iteration
  // (K_UNROLL=2). Set by TuneForDevice; TFLITE_GLES_X_CONV_UNROLL=0/1.
  bool conv_k_unroll = false;
  // conv2d.comp's 1x1 GEMMs with pixels on x run in workgroups of 8 pixel
  // tiles x up to 16 slice groups (kernels::GemmGroupLocalSize) instead of
  // 64 pixel tiles of one group: llvmpipe runs a workgroup's rows of 8
  // invocations one after another on one core, so the groups of a row
  // read its input while it is still in that core's caches, where 64
  // tiles of one group stream the whole input from L3 once per group.
  // Set by TuneForDevice (llvmpipe); TFLITE_GLES_X_GEMM_GROUP_BLOCK=0/1.
  bool gemm_group_block = false;
  // conv2d.comp writes each depth step's slices and the stores' rows out
  // (ROWS_UNROLLED) instead of loops that Mesa's NIR leaves rolled from
  // ~24 accumulators on (the tile then lives in scratch memory, 3-6x
  // slower), and 1x1 and general layers (several input slices) on maps of
  // >= 128 pixels take 6 or 8 pixels x 4 slices instead of 4 x 4 (docs/perf/
  // log.md "llvm4, session 13", "llvm5, session 14"). Set by
  // TuneForDevice (llvmpipe); TFLITE_GLES_X_CONV_UNROLLED_TILE=0/1.
  bool conv_unrolled_tile = false;
  // A MIRROR_PAD that only a general convolution reads is done in that
  // convolution's gather (delegate/passes/mirror_pad_fusion.h);
  // TFLITE_GLES_X_FUSE_MIRROR_PAD=0/1.
  bool fuse_mirror_pad = true;
  // A RESIZE to its input's own size that is exactly a copy (bilinear, or
  // nearest without align_corners + half_pixel_centers) is a view of its
  // input, no dispatch (kernels/resize.cc; DeepLab's 33 -> 33);
  // TFLITE_GLES_X_RESIZE_VIEW=0/1.
  bool identity_resize_view = true;
  // Split-K GEMMs of one shared input whose outputs only instance norms'
  // statistics read run as one dispatch (delegate/passes/gemm_batching.h);
  // TFLITE_GLES_X_BATCH_GEMMS=0/1.
  bool batch_gemms = true;
  // Instance-norm statistics split over many workgroups per slice
  // (shaders/norm_stats.comp SPLIT). Set by TuneForDevice;
  // TFLITE_GLES_X_NORM_SPLIT=0/1.
  bool norm_split = false;
  // An instance norm's apply step (x * scale + shift, ReLU) that only a
  // general convolution reads is done in that convolution's gather
  // (delegate/passes/norm_prologue.h). Set by TuneForDevice;
  // TFLITE_GLES_X_NORM_PROLOGUE=0/1.
  bool fuse_norm_prologue = false;
  // A nearest upsampling by 2 or 4 that only a general convolution reads is
  // done in that convolution's gather (delegate/passes/upsample_fusion.h).
  // Set by TuneForDevice; TFLITE_GLES_X_FUSE_UPSAMPLE=0/1.
  bool fuse_upsample = false;
  // An elementwise producer's epilogue may read two tensor operands
  // (shaders/elementwise.comp EPILOGUE_IN2; delegate/passes/fusion.h): style
  // transfer's norm apply (its shift) then the residual ADD. Set by
  // TuneForDevice; TFLITE_GLES_X_EPILOGUE_IN2=0/1.
  bool epilogue_second_operand = false;
  // K_SPLIT's tile: rows x output slices per invocation, parts of the sum
  // (the workgroup's z), invocations along x, and the step between an
  // invocation's rows (1: consecutive pixels; local_x: neighbouring
  // invocations take neighbouring pixels, so a warp's loads and stores are
  // contiguous). A tile over the device's workgroup or shared-memory limits
  // falls back to 4 x 2, 4 parts, 32 wide, step 1 (within the GLES 3.1
  // minimums). Set by TuneForDevice; TFLITE_GLES_X_CONV_TILE=R/S/K/L/STEP.
  // `fill`: shrunk per layer on many-core GPUs (kernels::FillSplitTile); not when forced.
  struct ConvSplitTile {
    int rows = 4, slices = 2, parts = 4, local_x = 32, row_step = 1;
    bool fill = true;
  };
  ConvSplitTile conv_split_tile;
  // Large windows over few channels (style's 9x9) from a shared-memory window
  // (conv2d_window.comp, passes/window_conv.h); block: pixels per invocation in x,
  // invocations in x and y. TuneForDevice; TFLITE_GLES_X_WINDOW_CONV=0/1, PX/LOCAL_X/LOCAL_Y.
  bool window_conv = false;
  std::array<int, 3> window_conv_block = {2, 16, 8};
  // conv2d_window.comp ROW_REUSE: window rows slid in registers over the taps
  // and weights in shared memory, where they fit (NVIDIA; TFLITE_GLES_X_WINDOW_REUSE).
  bool window_conv_row_reuse = false;
  // 3x3+ windows over <= 8 input / 4 output slices too (TFLITE_GLES_X_WINDOW_SMALL).
  bool window_conv_small = false;
  // ... only for layers whose weights become literals (WEIGHTS_LITERAL) and of at least this
  // many MFLOP (0: off; TFLITE_GLES_X_WINDOW_SMALL_LIT).
  long long window_conv_small_literal_mflop = 0;
  // fp16: conv2d_window.comp's accumulators mediump too (TFLITE_GLES_X_WINDOW_ACC16).
  bool window_conv_acc_mediump = false;
  // conv2d_window.comp: one input slice's window at a time (SLICE_STEPS), 3-lane
  // weights packed (PACK3), fp16's window and weights as packed halves (HALF_SMEM),
  // blocks per workgroup (BLOCK_STEPS); TFLITE_GLES_X_WINDOW_*.
  bool window_conv_slice_steps = false, window_conv_pack3 = false, window_conv_half_smem = false;
  int window_conv_block_steps = 1;
  // conv2d_window.comp (ROW_REUSE): small constant weights written into the
  // program as literals, the taps' rows written out (WEIGHTS_LITERAL).
  bool window_conv_literal_weights = false;
  // ... for weight tensors of at most this many vec4s (style's 9x9 layers: 648), so that the
  // literals stay a small part of the program.
  long long window_conv_literal_vec4s = 1024;
  // Pixels per invocation of such layers with one output slice (0: the block's).
  int window_conv_literal_px = 0;
  // conv2d_window.comp's and gemm.comp's (tiled) products fused one by one into their
  // accumulators (FMA_CHAIN) instead of summed per step and then added, where products
  // and accumulators have one precision (TFLITE_GLES_X_FMA_CHAIN).
  bool fma_chain = false;
  // With fp16 storage, conv2d.comp's and gemm.comp's (tiled) products in
  // mediump (1) and their accumulators too (2); 0: highp. Set by
  // TuneForDevice; TFLITE_GLES_X_FP16_MATH=0/1/2.
  int fp16_math = 0;
  // Prints the CPU time of upload + submit and of wait + readback, averaged
  // over 200 invokes (TFLITE_GLES_X_PHASES=1; for bench runs).
  bool report_phases = false;
  // Adds the GPU's side to those phases: a timestamp after every dispatch
  // (TFLITE_GLES_X_TIMELINE=1; delegate/runtime/invoke_timeline.h).
  bool report_timeline = false;
  // A folder that gets each dispatch's assembled source, grid and uniform
  // values (TFLITE_GLES_X_DUMP_SHADERS; bench/gap_probe.py reruns them).
  std::string dump_shaders;
  // Profiling (enable_profiling) and the time line time each dispatch with
  // GL_EXT_disjoint_timer_query instead of a glFinish around it. Set by
  // TuneForDevice (off on llvmpipe, whose queries answer 1 ns);
  // TFLITE_GLES_X_TIMER_QUERIES=0/1. profile_repeat (TFLITE_GLES_X_PROFILE_REPEAT, a
  // measurement mode): each step dispatched that many times inside its query, time / N.
  bool gpu_timer_queries = false;
  int profile_repeat = 1;
  // An output texture bound in place is written by the epilogue of the
  // kernel that produces the output (transpose_conv.comp TEXTURE_OUTPUT)
  // instead of by a texture_io.comp dispatch after it (runtime_texture_io.cc).
  // On by default; TFLITE_GLES_X_TEXTURE_EPILOGUE=0 for A/B runs.
  bool texture_output_epilogue = true;
  // Readback conversions write one BHWC float per invocation (contiguous
  // stores across a warp) instead of one PHWC4 vec4. Set by TuneForDevice.
  bool per_float_readback = false;
  // Outputs whose PHWC4 order is not BHWC order are read back directly too
  // and relaid out on the CPU (no readback conversion dispatch): where the
  // GPU's memory is the CPU's and its stores cost more than a CPU loop's
  // (llvmpipe). Set by TuneForDevice; TFLITE_GLES_X_CPU_READBACK_RELAYOUT.
  bool cpu_readback_relayout = false;
  // With cpu_readback_relayout: a partition output that a RESIZE_BILINEAR
  // writes is read back as the resize's input and interpolated by the CPU
  // while it is relaid out (runtime/readback_resize.h): the resize's
  // dispatch goes, and its stores, one lane at a time on llvmpipe, with it
  // (DeepLab's final 33x33 -> 257x257). Set by TuneForDevice (llvmpipe);
  // TFLITE_GLES_X_CPU_READBACK_RESIZE=0/1.
  bool cpu_readback_resize = false;
  // The CPU resize at readback as row blends (readback_resize_rows.h): each
  // output row one streaming blend of two source rows interpolated along x,
  // where the per-pixel loop ran at half a copy's speed (real GPUs); fp16's halves
  // converted per thread from the mapping (half_readback_rows). Set by TuneForDevice;
  // TFLITE_GLES_X_ROW_READBACK_RESIZE=0/1, TFLITE_GLES_X_HALF_READBACK_ROWS=0/1.
  bool row_readback_resize = false, half_readback_rows = false;
  // A 1x1 convolution over CONCATENATION(X, RESIZE(P)) with P one pixel
  // (DeepLab's ASPP: the image-pooling branch broadcast over the map) reads
  // X alone; P's share of every output is the same at every pixel, so a
  // one-row GEMM computes it with the bias first and the convolution reads
  // that as its bias (kernels/conv.cc). The concat and the resize are then
  // unread and dropped (passes/dead_dispatches.h). Set by TuneForDevice
  // (llvmpipe); TFLITE_GLES_X_BROADCAST_CONCAT_BIAS=0/1.
  bool broadcast_concat_bias = false;
  // Long reductions (spatial means) share each output among a workgroup
  // instead of one invocation walking the whole window. Set by TuneForDevice.
  bool workgroup_reductions = false;
  // 1x1 CONV_2D and FULLY_CONNECTED run shaders/gemm.comp (the depth split
  // across a workgroup, partial sums combined in shared memory) instead of
  // conv2d.comp's whole-depth register tiles. Set by TuneForDevice.
  bool shared_memory_gemm = false;
  // gemm.comp dispatches of fewer output rows than this are compiled with their shapes as
  // constants (one program per shape) instead of uniforms; 0: none. Set by TuneForDevice;
  // TFLITE_GLES_SPECIALIZE_GEMM_ROWS=N.
  long long specialize_gemm_below_rows = 0;
  // A 3x3 depthwise convolution whose output only a gemm.comp GEMM reads
  // runs inside that GEMM's workgroups (delegate/passes/dw_fusion.h). Set by
  // TuneForDevice; only where shared_memory_gemm is.
  bool fuse_depthwise_into_gemm = false;
  // Those fused GEMMs on maps of at most ~60x60 compute several rows per
  // invocation (2 up to 20x20, 4 beyond; kernels/gemm.cc,
  // RegisterTiledDepthwiseGemm). Set by TuneForDevice;
  // TFLITE_GLES_X_DW_REGISTER_TILES=0/1.
  bool dw_gemm_register_tiles = false;
  // Such fused GEMMs on small maps also split their depth across
  // workgroups (shaders/gemm_dw_splitk.comp, delegate/passes/dw_splitk.h). Set by
  // TuneForDevice; TFLITE_GLES_X_DW_SPLITK=0/1; TFLITE_GLES_X_DW_SPLITK_TILE
  // = "ROWS,SLICES,KPARTS,CHUNK_STEPS" forces its tile (sweeps).
  bool split_depthwise_gemm_k = false;
  std::string dw_splitk_tile_override;
  // A whole-map mean whose output only a split-K GEMM reads runs inside that GEMM
  // (delegate/passes/dw_fusion.h, FuseMeanIntoGemm). Set by TuneForDevice; TFLITE_GLES_FUSE_MEAN.
  bool fuse_mean_into_gemm = false;
  // A SOFTMAX whose input only a split-K GEMM writes and nothing else reads
  // runs in that GEMM's last workgroup to finish (delegate/passes/dw_fusion.h,
  // FuseSoftmaxIntoGemm). Set by TuneForDevice; TFLITE_GLES_FUSE_SOFTMAX=0/1.
  bool fuse_softmax_into_gemm = false;
  // An elementwise step whose output only a tiled GEMM reads (a squeeze-
  // and-excitation block's x * scale) runs in that GEMM's loads, and a
  // one-row split-K GEMM whose output only another one reads runs in that
  // one's workgroups (delegate/passes/prologue_fusion.h). Set by TuneForDevice;
  // TFLITE_GLES_X_FUSE_EW_PROLOGUE=0/1, TFLITE_GLES_X_FUSE_FC_CHAIN=0/1.
  bool fuse_elementwise_into_gemm = false;
  bool fuse_gemm_chains = false;
  // Those chains also take the whole-map mean before them (FC1_MEAN). Off: on the H100 a fused
  // 16x16x96 block took 37 us against ~18 for its mean and chain apart (docs/perf/log.md,
  // "seg, session 11"); TFLITE_GLES_X_FUSE_CHAIN_MEAN=0/1.
  bool fuse_mean_into_gemm_chains = false;
  // Two tiled 1x1 GEMMs in a row as one dispatch (delegate/passes/gemm_chain.h), set by
  // TuneForDevice; TFLITE_GLES_X_FUSE_GEMM_PAIRS=0/1, ..._GEMM_PAIR_TILE (sweeps).
  bool fuse_gemm_pairs = false;  // then (pool_fusion.h) the unpoolings, poolings into concat, A:
  bool fuse_unpool = false, fuse_pool_concat = false, fuse_pool_prologue = false;
  bool fuse_upsample_operand = false;  // a nearest upsampling read as an operand, likewise
  bool fuse_second_projection = false;  // a 1x1 GEMM of a pair's x as its y2; ..._PROJECTION
  int gemm_pair_max_steps = 8;    // the first's input slices at most; ..._X_GEMM_PAIR_STEPS
  int fuse_chain_heads = 0;  // 1: their 3x3 heads, 2: single GEMMs' too; ..._X_FUSE_CHAIN_HEADS
  long long gemm_pair_rows32_max = 0;  // pairs of <= this many rows: <= 32 a workgroup; ..._ROWS32
  std::string gemm_pair_tile_override, gemm_pair_head_tile;  // ..._X_GEMM_PAIR_HEAD_TILE
  // GEMM pairs and singles (gemm_chain.comp) compile their shapes in: constant loop bounds
  // and divisors; TFLITE_GLES_X_SPECIALIZE_CHAINS=0/1.
  bool specialize_gemm_chains = false;
  // A bilinear RESIZE that only a tiled GEMM reads runs in its loads
  // (prologue_fusion.h); TFLITE_GLES_X_FUSE_RESIZE_PROLOGUE=0/1.
  bool fuse_resize_into_gemm = false;
  // For sweeps: gemm.comp's tile as "TM,TN,TR,TS,KP" or "splitk,SLICES,KP"
  // (kernels/gemm.h); empty: chosen per layer shape.
  std::string gemm_tile_override;
  // Every dispatch compiles its shapes in (Dispatch::specialize): one
  // program per layer shape. Set by TuneForDevice (false: shapes are
  // uniforms); TFLITE_GLES_SPECIALIZE_SHAPES=0/1 overrides it, for A/B runs.
  bool specialize_shapes = false;
};

}  // namespace tflite_gles
