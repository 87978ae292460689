#version 310 es
// The statistics of an instance normalization in one dispatch
// (delegate/passes/norm_fusion.h): per batch and channel slice of a PHWC4 map x,
//   mean = the mean of x over H x W,
//   rstd = inversesqrt(the mean of (x - mean)^2 over H x W + EPS),
// which TFLite graphs spell MEAN, SQUARED_DIFFERENCE, MEAN, ADD, RSQRT: five
// dependent dispatches (seven on llvmpipe) for two small vectors. The
// variance is the mean of squared differences from the mean, as those ops
// compute it (not E[x^2] - mean^2, which cancels for large means).
//
// One workgroup per (batch, slice): its invocations take every LOCAL_X-th
// pixel, partial sums meet in shared memory in two steps (32 adders, then
// one), as mean.comp's COOPERATIVE path does (barrier() only at the top
// level of main: GLSL ES 3.10); then the same for the squared differences.
// Sums are highp floats whatever the storage.
//
// Bindings: 0 = mean (B x 1 x 1 x C), 1 = rstd (the same shape), 2 = x.
// Padded channel lanes of both outputs are stored as zero.
//
// AFFINE (the affine half of a conditional instance norm, norm_fusion.h):
// gamma and beta (B x 1 x 1 x C) are read too, and instead of rstd the
// dispatch writes scale = rstd * gamma and shift = beta - mean * scale,
// in the graph's own order of operations. Bindings: 0 = mean, 1 = scale,
// 2 = shift, 3 = x, 4 = gamma, 5 = beta (six: the caller checks the
// device allows that many). GAMMA_BASE / BETA_BASE: where gamma's and
// beta's vec4s start in their buffers (0, or a slice of the tensor that
// several GEMMs computed in one dispatch, delegate/passes/gemm_batching.h).
//
// SPLIT (delegate/passes/norm_fusion.cc; DeviceProfile::norm_split): one
// workgroup per slice leaves most of a large GPU idle (style transfer's
// 384x384x8 map: 2 workgroups summing 147456 pixels each), so each
// (batch, slice) is cut into CHUNKS runs of CHUNK_PIXELS pixels, one
// workgroup each. A workgroup computes its run's mean and sum of squared
// differences from that mean (M2), as above, and stores both (highp floats)
// in `partials` (read-write binding 0); the last of a slice's workgroups to
// arrive (atomic counter `arrivals[group]`, read-write binding 1, zeroed
// again after use) combines them: mean = sum(n_i m_i) / n, M2 = sum(M2_i +
// n_i (m_i - mean)^2), the pairwise rule (Chan et al.), which keeps the
// two-pass accuracy (no E[x^2] - mean^2). No workgroup waits for another.
//
// @axis - AFFINE
// @axis - SPLIT
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 EPS=1e-5 SPLIT_STEPS=4
// @uniform PIXELS=16 SLICES=1 CHANNELS=4 GROUPS=1 GAMMA_BASE=0 BETA_BASE=0
// @uniform CHUNKS=2 CHUNK_PIXELS=8
// @const READ_WRITE_BINDING_0=6 READ_WRITE_BINDING_1=7

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

#if LOCAL_X != 64 && LOCAL_X != 256 && LOCAL_X != 1024
#error norm_stats needs LOCAL_X of 64, 256 or 1024
#endif

TENSOR_OUT(mean_out, 0, MeanOut);
#if defined(AFFINE)
TENSOR_OUT(scale_out, 1, ScaleOut);
TENSOR_OUT(shift_out, 2, ShiftOut);
TENSOR_IN(in0, 3, In0);
TENSOR_IN(gamma_in, 4, GammaIn);
TENSOR_IN(beta_in, 5, BetaIn);
#else
TENSOR_OUT(rstd_out, 1, RstdOut);
TENSOR_IN(in0, 2, In0);
#endif

#if defined(SPLIT)
// coherent: the last workgroup's loads must see the others' stores.
layout(std430, binding = READ_WRITE_BINDING_0) coherent buffer Partials { vec4 partials[]; };
layout(std430, binding = READ_WRITE_BINDING_1) coherent buffer Arrivals { uint arrivals[]; };
shared uint last_chunk;
#endif

const int kPerAdder = LOCAL_X / 32;  // partials each of the 32 adders sums
shared vec4 partial[LOCAL_X];
shared vec4 partial32[32];
shared vec4 reduced;

// REDUCE(v): the sum of every lane's v, in `reduced` for every lane after
// it (read it before the next REDUCE): 32 adders, then one. A macro, as
// barrier() may stand only at the top level of main in GLSL ES 3.10.
#define REDUCE(v)                                                                \
  partial[lane] = (v);                                                           \
  memoryBarrierShared();                                                         \
  barrier();                                                                     \
  if (lane < 32) {                                                               \
    vec4 part_ = vec4(0.0);                                                      \
    for (int k = 0; k < kPerAdder; ++k) part_ += partial[lane * kPerAdder + k]; \
    partial32[lane] = part_;                                                     \
  }                                                                              \
  memoryBarrierShared();                                                         \
  barrier();                                                                     \
  if (lane == 0) {                                                               \
    vec4 total_ = vec4(0.0);                                                     \
    for (int k = 0; k < 32; ++k) total_ += partial32[k];                         \
    reduced = total_;                                                            \
  }                                                                              \
  memoryBarrierShared();                                                         \
  barrier()

void main() {
  // (batch * SLICES + slice): also the index of both outputs' vec4.
  int group = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  int lane = int(gl_LocalInvocationID.x);
#if defined(SPLIT)
  int workgroup = group;
  group = workgroup / CHUNKS;
  int chunk = workgroup - group * CHUNKS;
  int first = chunk * CHUNK_PIXELS;
  int pixels = group < GROUPS ? max(min(CHUNK_PIXELS, PIXELS - first), 0) : 0;
  int base = group * PIXELS + first;
  float scale = 1.0 / float(max(pixels, 1));
#else
  // Workgroups past the last group (a grid split over y) sum nothing and
  // store nothing; they do not return early, as barrier() forbids.
  int pixels = group < GROUPS ? PIXELS : 0;
  int base = group * PIXELS;  // PHWC4: plane (b, s) is PIXELS vec4s long
  float scale = 1.0 / float(PIXELS);
#endif

  vec4 sum = vec4(0.0);
#if defined(SPLIT)
  // A run is SPLIT_STEPS pixels per lane (norm_fusion.cc: CHUNK_PIXELS =
  // SPLIT_STEPS * LOCAL_X): a lane's loads all issued at once and kept in
  // registers for the squared differences, instead of a loop of unknown
  // trip count that loaded each pixel twice.
  vec4 xs[SPLIT_STEPS];
  for (int j = 0; j < SPLIT_STEPS; ++j) {
    xs[j] = vec4(0.0);
    if (lane + j * LOCAL_X < pixels) xs[j] = LOAD(in0, base + lane + j * LOCAL_X);
    sum += xs[j];
  }
#else
  for (int p = lane; p < pixels; p += LOCAL_X) sum += LOAD(in0, base + p);
#endif
  REDUCE(sum);
  vec4 mean = reduced * scale;
  vec4 squares = vec4(0.0);
#if defined(SPLIT)
  for (int j = 0; j < SPLIT_STEPS; ++j) {
    vec4 d = xs[j] - mean;
    if (lane + j * LOCAL_X < pixels) squares += d * d;
  }
#else
  for (int p = lane; p < pixels; p += LOCAL_X) {
    vec4 d = LOAD(in0, base + p) - mean;
    squares += d * d;
  }
#endif
  REDUCE(squares);
  vec4 total = reduced;
#if defined(SPLIT)
  if (lane == 0 && group < GROUPS) {
    partials[2 * workgroup] = mean;
    partials[2 * workgroup + 1] = total;
  }
  memoryBarrierBuffer();
  barrier();
  if (lane == 0) {
    last_chunk = group < GROUPS && atomicAdd(arrivals[group], 1u) == uint(CHUNKS - 1) ? 1u : 0u;
  }
  memoryBarrierShared();
  barrier();
  // The last workgroup of a slice combines its CHUNKS runs with all of its
  // lanes, each taking every LOCAL_X-th run: one lane walking them read 2 x
  // 144 partials one after another on a 384x384 map, ~40 us on an H100
  // (docs/perf/log.md, "style3, session 14"). Every other workgroup runs
  // the same reductions over nothing (barrier() forbids leaving).
  bool combine = last_chunk != 0u;
  memoryBarrierBuffer();
  vec4 weighted = vec4(0.0);
  for (int k = lane; combine && k < CHUNKS; k += LOCAL_X) {
    float n = float(min(CHUNK_PIXELS, PIXELS - k * CHUNK_PIXELS));
    weighted += n * partials[2 * (group * CHUNKS + k)];
  }
  REDUCE(weighted);
  mean = reduced / float(PIXELS);
  vec4 m2 = vec4(0.0);
  for (int k = lane; combine && k < CHUNKS; k += LOCAL_X) {
    float n = float(min(CHUNK_PIXELS, PIXELS - k * CHUNK_PIXELS));
    vec4 d = partials[2 * (group * CHUNKS + k)] - mean;
    m2 += partials[2 * (group * CHUNKS + k) + 1] + n * d * d;
  }
  REDUCE(m2);
  total = reduced;
  scale = 1.0 / float(PIXELS);
  if (lane == 0 && combine) {
    arrivals[group] = 0u;  // for the next run
#else
  if (lane == 0 && group < GROUPS) {
#endif
    int slice = group % SLICES;
    STORE(mean_out, group, zero_padded(mean, slice, CHANNELS));
    vec4 rstd = inversesqrt(total * scale + vec4(EPS));
#if defined(AFFINE)
    vec4 s = rstd * LOAD(gamma_in, GAMMA_BASE + group);
    STORE(scale_out, group, zero_padded(s, slice, CHANNELS));
    STORE(shift_out, group,
          zero_padded(LOAD(beta_in, BETA_BASE + group) - mean * s, slice, CHANNELS));
#else
    STORE(rstd_out, group, zero_padded(rstd, slice, CHANNELS));
#endif
  }
}
