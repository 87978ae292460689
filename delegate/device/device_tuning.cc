#include "delegate/device/device_tuning.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "delegate/device/apply_override.h"
#include "tflite_gles/delegate.h"

namespace tflite_gles {
namespace {

// TFLITE_GLES_X_CONV_TILE=R/S/K/L/STEP (',' works too): five integers in
// [1, 1024], STEP 1 or L; anything else is ignored with a warning. Whether
// the tile fits the device is checked where it is used (conv_common.cc).
void ApplyConvTile(const std::string& text, DeviceProfile::ConvSplitTile* tile) {
  int v[5];
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d%*[/,]%d%*[/,]%d%*[/,]%d%*[/,]%d%c", &v[0], &v[1], &v[2],
                  &v[3], &v[4], &tail) == 5 &&
      std::all_of(v, v + 5, [](int x) { return x >= 1 && x <= 1024; }) &&
      (v[4] == 1 || v[4] == v[3])) {
    *tile = {v[0], v[1], v[2], v[3], v[4], false};  // as forced: not refilled
    return;
  }
  std::fprintf(stderr,
               "WARNING: tflite-gles: TFLITE_GLES_X_CONV_TILE='%s' is not "
               "ROWS/SLICES/PARTS/LOCAL_X/STEP (STEP 1 or LOCAL_X); ignored\n",
               text.c_str());
}

// "0", "1" or "PX/LOCAL_X/LOCAL_Y" (on, with that block).
void ApplyWindowConv(const std::string& text, DeviceProfile* device) {
  int v[3];
  char tail = 0;
  if (text == "0" || text == "1") {
    device->window_conv = text == "1";
    return;
  }
  if (std::sscanf(text.c_str(), "%d%*[/,]%d%*[/,]%d%c", &v[0], &v[1], &v[2], &tail) == 3 &&
      v[0] >= 1 && v[0] <= 8 && v[1] >= 1 && v[1] <= 256 && v[2] >= 1 && v[2] <= 256) {
    device->window_conv = true;
    device->window_conv_block = {v[0], v[1], v[2]};
    return;
  }
  std::fprintf(stderr,
               "WARNING: tflite-gles: TFLITE_GLES_X_WINDOW_CONV='%s' is not 0, 1 or "
               "PX/LOCAL_X/LOCAL_Y; ignored\n",
               text.c_str());
}

}  // namespace

bool PreferTextureBufferReads(const egl::GpuInfo& gpu) {
  // llvmpipe: SSBO loads cost 15-20x more than texelFetch (research note;
  // MobileNet v1 31.8 vs 67.9 ms). NVIDIA (H200, driver 580): a dispatch
  // that binds texture buffers costs ~3.3 us more than one reading SSBOs
  // (7.2 vs 3.9 us per extra dispatch, bench/dispatch_floor.py) and
  // MobileNet v1 ran 0.544 ms with texture-buffer reads vs 0.474 ms with
  // SSBO reads (docs/perf/log.md). Other GPUs keep texture buffers, as
  // mobile GPUs favour the texture path, until someone measures them.
  return !gpu.IsNvidia() && TextureBuffersHoldTensors(gpu);
}

void ChooseStorage(DeviceProfile* device, int storage) {
  const egl::GpuInfo& gpu = *device->gpu;
  // RGBA textures (egl/tensor_texture.h) need nothing beyond GLES 3.1:
  // rgba32f and rgba16f images are core.
  device->rgba_textures = storage == TFLITE_GLES_STORAGE_RGBA_TEXTURE ||
                          (storage == TFLITE_GLES_STORAGE_AUTO && PreferRgbaTextures(gpu));
  const bool texture_reads_wanted =
      !device->rgba_textures &&
      (storage == TFLITE_GLES_STORAGE_TEXTURE_BUFFER ||
       (storage == TFLITE_GLES_STORAGE_AUTO && PreferTextureBufferReads(gpu)));
  device->texture_buffer_reads = gpu.has_texture_buffer && texture_reads_wanted;
  device->staging_texture_reads =
      !device->texture_buffer_reads && TextureBuffersHoldTensors(gpu);
}

bool PreferRgbaTextures(const egl::GpuInfo& gpu) {
  // Not measured faster anywhere yet (docs/perf/log.md, "rgba"): every GPU
  // keeps its buffer storage until a measurement says otherwise.
  (void)gpu;
  return false;
}

bool TextureBuffersHoldTensors(const egl::GpuInfo& gpu) {
  // The read path is chosen per device, not per tensor: where a texture
  // buffer holds 65536 texels (the EXT_texture_buffer / GLES 3.2 minimum,
  // what Mali and Adreno report), a 112x112x32 activation (100352 texels)
  // or a 224x224x3 input staging (150528 floats) would not fit, so such GPUs
  // read through SSBOs (up to 2^27 bytes even at the minimum). 2^24 texels
  // hold a 1024x1024x64 tensor.
  return gpu.has_texture_buffer && gpu.max_texture_buffer_texels >= (1 << 24);
}

bool Fp16StoragePays(const egl::GpuInfo& gpu) {
  // llvmpipe has no fp16 arithmetic: half storage costs a conversion at
  // every fetch and store, and every model ran about 2x slower with it
  // (MobileNet v1 59.6 vs 33.0 ms, deeplabv3 393 vs 139 ms; docs/perf/log.md).
  // NVIDIA H200: 0.479 vs 0.490 ms on MobileNet v1; mobile GPUs have fp16
  // ALUs and half the memory traffic to gain.
  return !gpu.IsLlvmpipe();
}

void TuneForDevice(DeviceProfile* device) {
  TuneForDevice(device, ReadDeveloperOverrides());
}

void TuneForDevice(DeviceProfile* device, const DeveloperOverrides& o) {
  // llvmpipe runs one invocation per SIMD lane on 2-16 CPU threads: few
  // invocations with big register tiles win (docs/perf/log.md, convolution
  // kernels). A real GPU needs tens of thousands of invocations in flight:
  // on an H100 MobileNet v1's 14x14x512 pointwise layers made 1568
  // invocations with llvmpipe's 4x4 tiles and ran at 0.55 TFLOP/s
  // (docs/perf/log.md, graph-level optimizations, has the sweep that chose
  // the first number, 32768). On the H200, with 1x1 layers on gemm.comp and
  // conv2d.comp left with general convolutions, 65536 was faster or equal on
  // every model (MobileNet v1 fp32 -2 %: its first convolution, which reads
  // the input over PCIe, keeps more reads in flight with one output per
  // invocation; style transfer -5 %; docs/perf/log.md, "Lead, session 6").
  // Measured on NVIDIA only: other GPUs (mobile ones with fewer, wider
  // cores included) take the same until someone measures them.
  device->min_invocations = device->gpu->IsLlvmpipe() ? 0 : 65536;
  // Readback staging sits in host memory on discrete GPUs, where a warp's
  // stores should form one contiguous run (deeplabv3's 5.5 MB output: 2.55 ms
  // with 4 strided float stores per invocation on an H200); llvmpipe is
  // faster with the vec4 form (4.1 vs 7.1 ms for the same output).
  device->per_float_readback = !device->gpu->IsLlvmpipe();
  // llvmpipe stores a vec4 to a buffer one lane at a time (a scalar loop
  // over the SIMD lanes per component), so its readback conversion of
  // DeepLab's 257x257x21 output cost ~13 % of the invoke; the CPU's loop over
  // the same mapped memory needs no dispatch (docs/perf/log.md, "llvm2").
  // Discrete GPUs keep the conversion: their tensors live in device memory.
  device->cpu_readback_relayout = device->gpu->IsLlvmpipe();
  // DeepLab's ASPP projection reads 512 channels of which 256 are one
  // pixel's broadcast: on llvmpipe that 1x1 layer was ~19 % of the invoke
  // (docs/perf/log.md, "llvm2"). Real GPUs keep their dispatches until
  // someone measures it there (it saves a concat and half that GEMM).
  device->broadcast_concat_bias = device->gpu->IsLlvmpipe();
  // DeepLab's last op, a bilinear 33x33 -> 257x257 resize, stored 5.5 MB
  // one lane at a time on llvmpipe; the CPU interpolates while it relays
  // the output out anyway (docs/perf/log.md, "llvm3").
  // On real GPUs too, written as row blends (readback_resize_rows.h): the
  // GPU's resize and its 5.5 MB readback conversion go, and the CPU writes
  // the tensor once instead of copying it. H100, one process, 300
  // interleaved invokes: DeepLab median 0.978x fp32, 0.987x fp16 of the GPU
  // resize (docs/perf/log.md, "out, session 13": small, in the clock's
  // noise; the row blends run at the copy's ~30 GB/s, the host's store
  // rate). llvmpipe keeps its per-pixel loop (llvm3's measurement). Where
  // outputs are aliased the GPU's resize wins now: cpu_readback_resize is set
  // beside alias_model_io, below.
  device->row_readback_resize = !device->gpu->IsLlvmpipe();
  // With fp16 storage the resize's source is halves: each thread converts the
  // rows it needs from the mapping, where one thread copied and converted the
  // whole source first (H100, DeepLab fp16, one process: the time after the
  // GPU 271 -> 259 us, fp32's 248; docs/perf/log.md, "half6, session 17").
  // Every device: it only runs with the row blends.
  device->half_readback_rows = true;
  // A window of thousands of positions walked by one invocation is a serial
  // chain of fetches on a GPU (style transfer's instance-norm means: 50-80 us
  // each on an H200); llvmpipe runs a workgroup's invocations on one thread
  // anyway and keeps its row-sum passes.
  device->workgroup_reductions = !device->gpu->IsLlvmpipe();
  // Inputs go into staging memory the GPU reads directly wherever the driver
  // can map a buffer persistently: a memcpy with no driver call (MobileNet's
  // input on the H200: 23 instead of 33 us of CPU; the invoke as a whole
  // was within noise, docs/perf/log.md, "Lead, session 3"). On llvmpipe
  // both are a memcpy; mapping there keeps the path under CI.
  device->mapped_upload_staging = device->gpu->HasExtension("GL_EXT_buffer_storage");
  // ... written with non-temporal stores where the GPU reads them over a
  // bus (delegate/runtime/host_copy.h): the CPU's copy took 26 instead of 22 us but
  // the GPU no longer snoops dirty lines out of the CPU's caches. H200,
  // same process: MobileNet v1 fp32 0.3265 -> 0.3085 ms, fp16 0.2700 ->
  // 0.2636, selfie -2 %, face/palm detection -1 % (docs/perf/log.md, "Lead,
  // session 6"). llvmpipe's shaders read the bytes from the CPU's caches.
  // Measured on NVIDIA only: an integrated GPU that shares the CPU's last-
  // level cache may read memcpy'd bytes faster; TFLITE_GLES_X_STREAMING_UPLOAD
  // =0 tells, until someone measures one.
  device->streaming_upload = !device->gpu->IsLlvmpipe();
  // Megabyte transfers on up to 4 threads where the GPU is not the CPU
  // (delegate/runtime/host_copy.h): DeepLab's 5.5 MB output took ~0.49 ms
  // of one core's memcpy after an H100 had finished (docs/perf/log.md,
  // "perf, session 9"). llvmpipe's own threads use every core already.
  if (!device->gpu->IsLlvmpipe()) {
    const unsigned cores = std::thread::hardware_concurrency();
    device->host_copy_threads = static_cast<int>(std::min(4u, std::max(1u, cores / 2)));
    // Parts of >= 400 KB: style transfer's 1.77 MB input and output on 4
    // threads instead of one. H100, one process, 200 interleaved invokes:
    // invoke 1.179 -> 1.099 ms fp32, 1.043 -> 0.983 fp16, the copy after the
    // GPU 168 -> 109 us (docs/perf/log.md, "style3, session 14"). Below 800
    // KB nothing splits (MobileNet's, DeepLab's and selfie's inputs stay one
    // part; hair's 3.1 MB goes from 3 parts to 4);
    // TFLITE_GLES_X_COPY_MIN_PART_KB for A/B runs.
    device->host_copy_min_part_bytes = 400 * 1024;
    // Staged transfers of >= 1 MB in up to 4 row bands, each band's
    // conversion dispatched (uploads) or fenced (readbacks) on its own, so
    // that the CPU's copy of one band overlaps the GPU's conversion of
    // another: the hair stand-in's 3 MB input and 2 MB output, style
    // transfer's 1.77 MB output (docs/perf/log.md, "io4, session 15").
    // llvmpipe runs a dispatch inside the call: nothing to overlap there.
    // H200, hair stand-in, one process: invoke 1.568 -> 1.446 ms fp32, 1.448
    // -> 1.344 fp16; 2 bands 1.521 fp32 (each readback band's fence costs
    // the GPU ~8 us, and the copy waits for the first band).
    device->transfer_bands = 4;
    device->readback_bands = 4;
    // Then the GPU, past the last band ~40 us after the CPU's copy instead of
    // ~130, waited ~30 us for its next batch (the first convolution's span
    // 26 -> 53 us; H200, hair fp32): a flush after each of the next 6
    // dispatches feeds it until the driver's own batches take over (-32 us).
    // Each batch boundary costs the GPU ~4 us, so fewer flushes (1, 2, 4, 8)
    // may do better: not measured yet (TFLITE_GLES_X_BAND_FLUSHES=1/2/4/8).
    device->band_flush_points = {1, 2, 3, 4, 5, 6};
    // band_early_wake (the readback's copy threads woken at a fence before
    // its first band) stays off until measured: TFLITE_GLES_X_BAND_EARLY_WAKE=1.
  }
  // NVIDIA's driver holds issued commands back until ~60 us after the first
  // pending one, so the GPU sat idle for the first ~90 us of a MobileNet
  // invoke while the CPU issued dispatches (TFLITE_GLES_X_TIMELINE). One
  // flush after the 2nd dispatch starts it early; more flushes cost the GPU
  // a stall at each batch boundary (H200, MobileNet fp16: none 0.359 ms,
  // one after 2 dispatches 0.333, after the 2nd/8th/32nd 0.341; docs/perf/
  // log.md, "Lead, session 3"). llvmpipe runs each dispatch inside the
  // call; a flush there does nothing.
  // A model-data entry into NVIDIA's buffers one call per constant, not
  // one per 256 KB: the driver's per-call cost, not the host's caches, is
  // predicted to dominate there (docs/perf/log.md, "cold3").
  device->model_data_chunk_bytes = device->gpu->IsLlvmpipe() ? size_t{256} << 10 : 0;
  if (o.model_data_chunk) device->model_data_chunk_bytes = *o.model_data_chunk;
  device->early_flush_points.clear();
  if (!device->gpu->IsLlvmpipe()) device->early_flush_points = {2};
  // The first convolution reads an image input straight from its upload
  // staging buffer (delegate/passes/upload_fusion.h): one dependent dispatch less
  // (~6 us on the H200) for a few more reads of host memory. On llvmpipe the
  // fused convolution took 0.58-0.81x the conversion + convolution (DeepLab,
  // MobileNet, selfie, palm, face; docs/perf/log.md, "llvm5, session 14").
  device->fuse_upload_into_conv = true;
  // Outputs likewise: readback buffers persistently mapped, a fence waited
  // for, then a memcpy, instead of glMapBufferRange + glUnmapBuffer on every
  // invoke. H200 (docs/perf/log.md, "Transfers (xfer)"): MobileNet v1 fp16
  // 0.421 -> 0.405 ms, fp32 0.471 -> 0.462 ms; selfie, face detection,
  // deeplabv3 (5.5 MB of output) and style transfer 1-2 % faster. Polling the
  // fence instead of sleeping in the driver gained nothing measurable.
  if (device->gpu->HasExtension("GL_EXT_buffer_storage")) {
    device->readback = DeviceProfile::Readback::kMapped;
  }
  // GEMMs (1x1 convolutions, FULLY_CONNECTED) with the depth split across a
  // workgroup (shaders/gemm.comp): MobileNet-sized GEMMs are too small to
  // fill a GPU with one invocation per output tile, and a 1024-deep logits
  // layer ran 251 invocations for 67 us on the H200 (12 us split; docs/perf/
  // log.md, "NVIDIA GEMM"). llvmpipe has a few SIMD lanes, not thousands:
  // there splitting only adds work and a barrier, so it keeps conv2d.comp.
  device->shared_memory_gemm = !device->gpu->IsLlvmpipe();
  // Shapes as uniforms (one program per tile shape, not per layer shape)
  // everywhere: on llvmpipe every program costs 60-100 ms of LLVM JIT at
  // its first dispatch and the kernels ran within 2-4% of their specialized
  // speed (MobileNet v1 cold init 1.7 -> 0.7 s); on the H200 the conv2d/
  // depthwise kernels ran at the same speed either way (1.50 ms for
  // MobileNet's conv layers) and each program saved is one driver compile.
  // docs/perf/log.md, "Cold init (coldinit)".
  device->specialize_shapes = false;
  // RGBA textures' rows: 2048 texels (the GLES 3.1 minimum of
  // GL_MAX_TEXTURE_SIZE, so every device holds them), found with a mask and
  // a shift. Rows of W (the camera-image layout) make every access divide by
  // the texture's width: MobileNet v1 0.25 on llvmpipe spent 56.9 ms in its
  // dispatches with rows of W, 33.6 ms with rows of 2048 (texture buffers
  // 17.0 / 16.3 ms; docs/perf/log.md, "rgba"). NVIDIA: not measured yet
  // (bench/device_rgba.sh has both).
  device->texture_row_width = 2048;
  if (o.texture_rows) device->texture_row_width = static_cast<int>(*o.texture_rows);
  Apply(o.specialize_shapes, &device->specialize_shapes);
  // General convolutions' sums split across a workgroup where thousands of
  // lanes want more invocations than a 96x96 map has output tiles
  // (shaders/conv2d.comp K_SPLIT; docs/perf/log.md, "perf, session 9").
  // llvmpipe runs a workgroup on one core: splitting only adds a barrier.
  device->conv_k_split = !device->gpu->IsLlvmpipe();
  // Instance-norm statistics over many workgroups per slice (norm_stats.comp
  // SPLIT): llvmpipe has a few cores, which one per slice already fills.
  device->norm_split = !device->gpu->IsLlvmpipe();
  // Its tile: neighbouring invocations take neighbouring pixels (row step =
  // the workgroup's width), so a warp's input loads and output stores are
  // contiguous runs rather than vec4s four pixels apart (docs/perf/log.md,
  // "conv, session 10").
  // 2 rows x 2 slices: on the H100 the 4 x 2 tile's fewer, longer
  // invocations left the GPU waiting on loads; 2 x 2 ran style transfer's
  // four largest layers 1.1-1.3x faster (the same with step 1; 2x1, 1x2,
  // 4x4, 8x2, 8 parts, 64 wide were no better; docs/perf/log.md, "conv,
  // session 10"). Measured on NVIDIA only: other GPUs take the same until
  // someone measures them (bench/device_conv_sweep.sh sweeps it). Layers
  // with too few invocations refill it (kernels::FillSplitTile).
  if (!device->gpu->IsLlvmpipe()) device->conv_split_tile = {2, 2, 4, 32, 32};
  // With fp16 storage, the convolutions' products in mediump (accumulators
  // stay highp): NVIDIA's GLES runs mediump vec4 FMAs as packed halves at
  // 4x its highp rate (bench/fp16_probe.py); style transfer fp16 1.653 ->
  // 1.583 ms on an H100, its largest output difference from fp32 0.0016 ->
  // 0.0017 (mediump accumulators too: 1.565 ms, 0.0037; docs/perf/log.md,
  // "conv, session 10"). Measured on NVIDIA only; llvmpipe computes mediump
  // in fp32 and keeps fp32 storage anyway. Accumulators in mediump too (2)
  // since session 13: on an H100 DeepLab's largest GEMM 25.0 -> 22.1 µs,
  // style's @240 30.2 -> 27.2, @3 53.2 -> 50.7, profiled walls -4 %; the
  // error against LiteRT CPU stays within test_models' fp16 criteria with a
  // wide margin (style relative L2 0.0006 -> 0.0015 of a 0.01 bound,
  // DeepLab's masks 99.93 -> 99.94 % of a 99.5 % bound; docs/perf/log.md,
  // "gap2, session 13").
  device->fp16_math = device->gpu->IsNvidia() ? 2 : 0;
  if (o.fp16_math) device->fp16_math = static_cast<int>(std::min(2LL, *o.fp16_math));
  if (!o.conv_tile.empty()) ApplyConvTile(o.conv_tile, &device->conv_split_tile);
  // Large windows over few channels from a shared-memory window
  // (shaders/conv2d_window.comp): on the H100 style transfer's 9x9 layers
  // were its two largest dispatches in conv2d.comp's gather (docs/perf/
  // log.md, "style2, session 11"). llvmpipe keeps the gather until measured.
  device->window_conv = !device->gpu->IsLlvmpipe();
  // The default block, 2/16/8, in both precisions: fp32 had 2/16/16 (style's
  // 8 -> 3 layer 58 -> 51 µs, docs/perf/log.md "gap, session 12") until
  // SLICE_STEPS and the written-out taps made 2/16/8 the fastest ("peak4,
  // session 15").
  if (!o.window_conv.empty()) ApplyWindowConv(o.window_conv, device);
  // Instance norms applied in the next convolution's gather: a dependent
  // dispatch and a full write + read of the map fewer per norm, for a
  // multiply-add and a max per gathered vec4 (docs/perf/log.md, "style2,
  // session 11"). llvmpipe pays per gathered vec4: off until measured.
  device->fuse_norm_prologue = !device->gpu->IsLlvmpipe();
  Apply(o.norm_prologue, &device->fuse_norm_prologue);
  // Nearest upsamplings by 2 or 4 read in the next convolution's gather: a
  // dependent dispatch and an F^2-times larger copy fewer, for a division
  // by a constant per tap coordinate. llvmpipe: off until measured.
  device->fuse_upsample = !device->gpu->IsLlvmpipe();
  Apply(o.fuse_upsample, &device->fuse_upsample);
  // A second epilogue operand for elementwise producers: style's residual
  // ADDs fold into the norm apply before them (5 dependent dispatches).
  // llvmpipe: off until measured (test_fusion.py's chains keep one operand).
  device->epilogue_second_operand = !device->gpu->IsLlvmpipe();
  Apply(o.epilogue_in2, &device->epilogue_second_operand);
  // A CONCATENATION takes them too (hair's initial PRELU; docs/perf/log.md, "chain5").
  device->fuse_concat_epilogues = !device->gpu->IsLlvmpipe();
  Apply(o.concat_epilogue, &device->fuse_concat_epilogues);
  Apply(o.min_invocations, &device->min_invocations);
  TuneConvolutionKernels(device, o);
  Apply(o.fuse_mirror_pad, &device->fuse_mirror_pad);
  Apply(o.resize_view, &device->identity_resize_view);
  Apply(o.batch_gemms, &device->batch_gemms);
  Apply(o.norm_split, &device->norm_split);
  Apply(o.report_phases, &device->report_phases);
  Apply(o.report_timeline, &device->report_timeline);
  device->dump_shaders = o.dump_shaders;
  // Mesa llvmpipe offers GL_EXT_disjoint_timer_query but answers 1 ns for
  // every compute dispatch (it runs them inside glDispatchCompute, on the
  // CPU, outside what its queries measure): it profiles with glFinish around
  // each dispatch, which is exact there.
  device->gpu_timer_queries = device->gpu->has_timer_query && !device->gpu->IsLlvmpipe();
  Apply(o.timer_queries, &device->gpu_timer_queries);
  if (o.profile_repeat) {
    device->profile_repeat = static_cast<int>(std::clamp(*o.profile_repeat, 1LL, 1000LL));
  }
  Apply(o.texture_epilogue, &device->texture_output_epilogue);
  if (device->gpu_timer_queries && !device->gpu->has_timer_query) {
    std::fprintf(stderr,
                 "WARNING: tflite-gles: TFLITE_GLES_X_TIMER_QUERIES=1 needs "
                 "GL_EXT_disjoint_timer_query, which this driver lacks; ignored\n");
    device->gpu_timer_queries = false;
  }
  Apply(o.fuse_norm_stats, &device->fuse_norm_stats);
  Apply(o.fuse_norm_affine, &device->fuse_norm_affine);
  Apply(o.fuse_elementwise_chains, &device->fuse_elementwise_chains);
  Apply(o.upload_usage, &device->upload_usage);
  Apply(o.mapped_upload, &device->mapped_upload_staging);
  Apply(o.fuse_upload, &device->fuse_upload_into_conv);
  // And a plain output's readback conversion into its producer (NVIDIA, where measured).
  device->fuse_readback = device->gpu->IsNvidia();
  Apply(o.fuse_readback, &device->fuse_readback);
  // Whole: on the H200 its kernel in 4 bands ended the invoke no earlier (log.md, "chain5").
  Apply(o.fused_readback_bands, &device->fused_readback_bands);
  Apply(o.early_flush, &device->early_flush_points);
  if (device->mapped_upload_staging &&
      !device->gpu->HasExtension("GL_EXT_buffer_storage")) {
    std::fprintf(stderr,
                 "WARNING: tflite-gles: TFLITE_GLES_X_MAPPED_UPLOAD=1 needs "
                 "GL_EXT_buffer_storage, which this driver lacks; ignored\n");
    device->mapped_upload_staging = false;
  }
  Apply(o.direct_transfers, &device->direct_transfers);
  Apply(o.cpu_readback_relayout, &device->cpu_readback_relayout);
  Apply(o.broadcast_concat_bias, &device->broadcast_concat_bias);
  Apply(o.row_readback_resize, &device->row_readback_resize);
  Apply(o.half_readback_rows, &device->half_readback_rows);
  if (o.copy_min_part && *o.copy_min_part > 0) device->host_copy_min_part_bytes = *o.copy_min_part;
  Apply(o.half_upload, &device->half_upload_staging);
  Apply(o.streaming_upload, &device->streaming_upload);
  Apply(o.streaming_readback, &device->streaming_readback);
  if (o.copy_threads) {
    device->host_copy_threads = static_cast<int>(std::min<long long>(*o.copy_threads, 64));
  }
  Apply(o.readback, &device->readback);
  if (o.transfer_bands) {
    device->transfer_bands = static_cast<int>(std::min<long long>(*o.transfer_bands, 64));
    device->readback_bands = device->transfer_bands;
  }
  if (o.readback_bands) {
    device->readback_bands = static_cast<int>(std::min<long long>(*o.readback_bands, 64));
  }
  if (o.transfer_band_min && *o.transfer_band_min > 0) {
    device->transfer_band_min_bytes = *o.transfer_band_min;
  }
  Apply(o.band_flushes, &device->band_flush_points);
  Apply(o.band_early_wake, &device->band_early_wake);
  Apply(o.direct_max_bytes, &device->direct_max_bytes);
  if (device->mapped_readback() && !device->gpu->HasExtension("GL_EXT_buffer_storage")) {
    std::fprintf(stderr,
                 "WARNING: tflite-gles: TFLITE_GLES_X_READBACK=mapped* needs "
                 "GL_EXT_buffer_storage, which this driver lacks; ignored\n");
    device->readback = DeviceProfile::Readback::kMap;
  }
  // TFLite's float input and output tensors live in our mapped staging
  // (runtime_alias.cc): set_tensor writes where the GPU reads, get_tensor
  // reads where it wrote, and the invoke copies nothing (the hair stand-in's
  // 3 MB in, 2 MB out: ~0.3 ms of its invoke on the H200). docs/perf/log.md,
  // "zc5, session 16". Not on llvmpipe: MobileNet v1 0.25's 35 us input copy
  // is 0.4 % of its invoke, and six same-process A/B runs there had the
  // aliased invoke 0.11 ms slower in the median (within their spread).
  device->alias_model_io = !device->gpu->IsLlvmpipe();
  Apply(o.alias_io, &device->alias_model_io);
  // With aliased outputs an output's bilinear resize runs on the GPU after all (not
  // cpu_readback_resize): its readback conversion writes TFLite's tensor itself, and
  // get_tensor then reads memory that no copy thread left dirty in its caches. H100, one
  // process, DeepLab's set + invoke + get: fp32 1.939 -> 1.616 ms, fp16 1.899 -> 1.524
  // (docs/perf/log.md, "half6, session 17"; session 13 had the two equal, copied).
  device->cpu_readback_resize = !device->alias_model_io;
  Apply(o.cpu_readback_resize, &device->cpu_readback_resize);
  // fp16: an aliased input is staged as TFLite's floats, twice the bytes
  // the conversion reads over the bus of the halves the CPU would convert.
  Apply(o.alias_half_inputs, &device->alias_half_inputs);
  // An image input of >= 512 KB keeps its own upload conversion, not fused
  // into the first convolution, so that it is aliased (runtime_alias.cc).
  // H100, one process, set + invoke + get: DeepLab 1.82 -> 1.71 ms fp32,
  // 1.64 -> 1.58 fp16; selfie fp32 0.81 -> 0.78; MobileNet v1 0.463 -> 0.448
  // fp32, 0.428 -> 0.418 fp16; smaller inputs (palm, face detection) within
  // +-7 us, so they stay fused (docs/perf/log.md, "zc5, session 16").
  device->alias_unfuses_upload = device->alias_model_io;
  Apply(o.alias_unfuse, &device->alias_unfuses_upload);
  Apply(o.shared_memory_gemm, &device->shared_memory_gemm);
  // Each 3x3 depthwise layer feeding a GEMM computed in the GEMM's
  // workgroups (delegate/passes/dw_fusion.h): one dependent dispatch less per pair
  // on the GPUs that run gemm.comp (docs/perf/log.md, "Depthwise into GEMM
  // (dwpw)"). TFLITE_GLES_FUSE_DEPTHWISE=0/1 overrides it (A/B runs, and
  // tests on llvmpipe together with TFLITE_GLES_SHARED_MEMORY_GEMM=1).
  device->fuse_depthwise_into_gemm = device->shared_memory_gemm;
  Apply(o.fuse_depthwise, &device->fuse_depthwise_into_gemm);
  // Two rows per invocation in them on small maps (kernels/gemm.cc,
  // RegisterTiledDepthwiseGemm; docs/perf/log.md, "Register tiles in the
  // fused GEMMs").
  device->dw_gemm_register_tiles = device->fuse_depthwise_into_gemm;
  Apply(o.dw_register_tiles, &device->dw_gemm_register_tiles);
  // Their depth split across workgroups on 14x14 and 7x7 maps
  // (delegate/passes/dw_splitk.h; docs/perf/log.md, "Split-K across workgroups
  // (skw)"): off until measured faster.
  device->split_depthwise_gemm_k = false;
  Apply(o.dw_splitk, &device->split_depthwise_gemm_k);
  if (!o.dw_splitk_tile.empty()) device->dw_splitk_tile_override = o.dw_splitk_tile;
  // GEMMs on maps below ~55x55 pixels compiled with their shapes as
  // constants (constant divisors and loop bounds): H200, same process,
  // against uniforms: palm detection -7 %, face detection -4 %, selfie -2 %,
  // MobileNet v1 fp16 -2 %, fp32 -1 %; MobileNet's 56x56 pairs
  // (3136 rows) ran 3-5 us slower each in fp32 that way, so larger maps keep
  // uniforms (docs/perf/log.md, "Lead, session 6"). The price: a program per
  // GEMM shape instead of per tile (MobileNet 7 -> 10, compiled once and
  // cached by the driver and the serialization cache).
  device->specialize_gemm_below_rows = device->shared_memory_gemm ? 3072 : 0;
  Apply(o.specialize_gemm_rows, &device->specialize_gemm_below_rows);
  // Likewise a classifier's global average pool into its logits GEMM
  // (MobileNet: the 8 us mean dispatch; docs/perf/log.md, "Lead, session 3").
  device->fuse_mean_into_gemm = device->shared_memory_gemm;
  Apply(o.fuse_mean, &device->fuse_mean_into_gemm);
  // And the softmax after the logits GEMM, into that GEMM's last workgroup
  // (docs/perf/log.md, "Softmax into the logits GEMM (smx)").
  device->fuse_softmax_into_gemm = device->shared_memory_gemm;
  Apply(o.fuse_softmax, &device->fuse_softmax_into_gemm);
  // Squeeze-and-excitation blocks: the scale step into the projection GEMM,
  // the two fully connected layers into one dispatch (docs/perf/log.md,
  // "seg, session 11").
  device->fuse_elementwise_into_gemm = device->shared_memory_gemm;
  Apply(o.fuse_ew_prologue, &device->fuse_elementwise_into_gemm);
  device->fuse_gemm_chains = device->shared_memory_gemm;
  Apply(o.fuse_fc_chain, &device->fuse_gemm_chains);
  // Two tiled 1x1 GEMMs in a row (ENet's expansion, then the next block's
  // projection) as one dispatch (docs/perf/log.md, "hair3, session 14").
  device->fuse_gemm_pairs = device->shared_memory_gemm && !device->gpu->IsLlvmpipe();
  Apply(o.fuse_gemm_pairs, &device->fuse_gemm_pairs);
  if (!o.gemm_pair_tile.empty()) device->gemm_pair_tile_override = o.gemm_pair_tile;
  // And the 3x3 convolution before such a pair (delegate/passes/gemm_chain_head.h):
  // NVIDIA only, where it was measured (docs/perf/log.md, "chain3, session 15").
  // Before single GEMMs too (2: hair's last 3x3 of a map and down2's, docs/perf/log.md, "chain5").
  // Not 3 (transposed convolutions too): on the H100 the hair stand-in's invoke took +7 to +8 us
  // with them, the up blocks' pairs 32.5 / 25.1 us against 26.8 / ~20 for pair and transposed
  // convolution apart (docs/perf/log.md, "hair7, session 18").
  device->fuse_chain_heads = device->fuse_gemm_pairs && device->gpu->IsNvidia() ? 2 : 0;
  Apply(o.fuse_chain_heads, &device->fuse_chain_heads);
  // A first GEMM of up to 16 input slices there (hair's down2 main 1x1 and the
  // projection after it; DeepLab's 128-step one stays apart).
  device->gemm_pair_max_steps = device->gpu->IsNvidia() ? 16 : 8;
  Apply(o.gemm_pair_steps, &device->gemm_pair_max_steps);
  // Pairs that take a 3x3 head on maps up to 128x128 may get a tile of their own (e.g. "8/128";
  // "": ChainRows'). Off: on the H100 8/128 took the hair stand-in's 7 heads at 128x128 from
  // 170.9 to 165.2 us and left its invoke as it was (docs/perf/log.md, "hair6, session 17").
  device->gemm_pair_head_tile = "";
  if (o.gemm_pair_head_tile) device->gemm_pair_head_tile = *o.gemm_pair_head_tile;
  // Their workgroups at most 32 rows on maps up to 128x128, where 64 made 256 (chain3's r32).
  device->gemm_pair_rows32_max = device->gpu->IsNvidia() ? 128 * 128 : 0;
  Apply(o.gemm_pair_rows32, &device->gemm_pair_rows32_max);
  // Their shapes compiled in (constant loop bounds and divisors, the stages' loops unrolled):
  // H100, the hair stand-in's chains -35 us fp16 / -41 fp32 of GPU time, its invoke -31 / -45
  // (docs/perf/log.md, "hair7, session 18"); a program per chain shape. NVIDIA only, as measured.
  device->specialize_gemm_chains = device->gpu->IsNvidia();
  Apply(o.specialize_chains, &device->specialize_gemm_chains);
  // A 1x1 GEMM of a pair's x beside its second (ENet's up block: the side branch's projection)
  // as the pair's y2 (gemm_chain.h): wherever pairs form (hair7, session 18).
  device->fuse_second_projection = true;
  Apply(o.fuse_second_projection, &device->fuse_second_projection);
  device->fuse_mean_into_gemm_chains = false;
  Apply(o.fuse_chain_mean, &device->fuse_mean_into_gemm_chains);
  // MaxUnpooling2D gathered in the GEMM pair that reads it (passes/pool_fusion.h):
  // wherever such a pair forms, which is on real GPUs (docs/perf/log.md, "hair6, session 17").
  device->fuse_unpool = true;
  Apply(o.fuse_unpool, &device->fuse_unpool);
  // And a nearest upsampling read the same way (the builtin twin's decoder; hair7, session 18).
  device->fuse_upsample_operand = true;
  Apply(o.fuse_upsample_operand, &device->fuse_upsample_operand);
  // And the initial block's argmax pooling in the concat beside it (pool_fusion.h):
  // real GPUs, as the concat's PRELU (fuse_concat_epilogues); llvmpipe not measured.
  device->fuse_pool_concat = !device->gpu->IsLlvmpipe();
  Apply(o.fuse_pool_concat, &device->fuse_pool_concat);
  // The down blocks' poolings in their GEMM pair's A loads, their unpoolings then finding
  // the argmax in the pooled input (pool_fusion.h): off, H100 GPU sum -13 / -11 us but the
  // invoke +0 to +5 us (each pooling ran beside its block's strided convolution anyway).
  device->fuse_pool_prologue = false;
  Apply(o.fuse_pool_prologue, &device->fuse_pool_prologue);
  device->fuse_resize_into_gemm = device->shared_memory_gemm;
  Apply(o.fuse_resize_prologue, &device->fuse_resize_into_gemm);
  // Checked where it is parsed (kernels/gemm.h): a bad value makes the
  // GEMM kernels decline with the parse error, so the sweep notices.
  if (!o.gemm_tile.empty()) device->gemm_tile_override = o.gemm_tile;
  FitDeviceLimits(device);
}

void FitDeviceLimits(DeviceProfile* device) {
  const egl::GpuInfo& gpu = *device->gpu;
  // SSBO binding indices run over outputs, then inputs (with SSBO reads),
  // then read-write buffers (BindAndDispatch): with SSBO reads every buffer
  // of a dispatch is one, and its index must stay below the binding points.
  const int ssbo_limit = std::min(gpu.max_ssbo_bindings, gpu.max_ssbo_binding_points);
  // RGBA textures: inputs are texture units, outputs image units (a
  // program check holds them to GL_MAX_COMPUTE_IMAGE_UNIFORMS).
  const bool sampled = device->texture_buffer_reads || device->rgba_textures;
  device->max_dispatch_buffers = sampled ? gpu.max_texture_units + 1 : ssbo_limit;
  // The CPU cannot map a texture: with RGBA textures every input and output
  // crosses through its staging buffer and a layout conversion.
  if (device->rgba_textures) device->direct_transfers = false;
  // Fixed rows must be a power of two the device's textures hold.
  const int rows = device->texture_row_width;
  if (rows != 0 && ((rows & (rows - 1)) != 0 || rows > gpu.max_texture_size)) {
    std::fprintf(stderr,
                 "WARNING: tflite-gles: texture rows of %d are not a power of two up to "
                 "GL_MAX_TEXTURE_SIZE %d; rows of W instead\n", rows, gpu.max_texture_size);
    device->texture_row_width = 0;
  }
  // The fusions into gemm.comp bind 6-7 buffers (out, in, weights, bias,
  // epilogue operand, depthwise weights and bias), the fused softmax 2 more
  // read-write ones after them, the split-K GEMM up to 9: at the GLES 3.1
  // minimum (4) they stay separate dispatches.
  if (!sampled && ssbo_limit < 7) {
    device->fuse_depthwise_into_gemm = false;
    device->dw_gemm_register_tiles = false;
  }
  if (ssbo_limit < 7) device->fuse_softmax_into_gemm = false;
  if (ssbo_limit < 9) device->split_depthwise_gemm_k = false;
}

}  // namespace tflite_gles
