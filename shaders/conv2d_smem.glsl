// conv2d.comp's SMEM_TILE path (GENERIC, stride 1, no dilation, batch 1), its shared
// arrays, staging and main(), included by conv2d.comp's include line (egl/shader_source.h)
// inside #if defined(SMEM_TILE); conv2d.comp declares the bindings, load_input, GATHER_*,
// EPILOGUE, ACC_STEP, the @const and @uniform names.
// SMEM_TILE (GENERIC, stride 1, no dilation, batch 1; DeviceProfile::conv_smem_tile): a
// workgroup computes LOCAL_Y rows x LOCAL_X * TILE_ROWS pixels x TILE_SLICES slices. Per input
// slice it stages the input tile and weights in shared memory; each invocation slides a row of
// TILE_ROWS + KERNEL_W - 1 vec4s over its pixels (weights as broadcasts: 1.07-1.5x the gather on
// an H200, "peak, session 11"). Columns skewed by c / 8: invocations TILE_ROWS columns apart
// read distinct banks. barrier() only outside control flow (GLSL ES 3.10): the ST_SLICES (<= 8)
// slices are steps written out in main. 16 x ((LOCAL_Y + KERNEL_H - 1) x ST_SWP + ST_WEIGHTS)
// bytes stay within the device's limit.
#if defined(ONE_INPUT_SLICE)
#define ST_IN_SLICES 1
#else
#define ST_IN_SLICES IN_S
#endif
#define ST_TW (LOCAL_X * TILE_ROWS)
#define ST_SW (ST_TW + KERNEL_W - 1)
#define ST_SH (LOCAL_Y + KERNEL_H - 1)
#define ST_SKEW(c) ((c) + (c) / 8)
#define ST_SWP (ST_SKEW(ST_SW - 1) + 1)
#define ST_WEIGHTS (KERNEL_H * KERNEL_W * TILE_SLICES * 4)
#define ST_N (LOCAL_X * LOCAL_Y)
// ST_WONCE=1: every input slice's weights staged once, before slice 0 (st_w [tap][slice]
// [TILE_SLICES][4], the packing's order); else each slice's with its tile. ST_DB=1: two
// tiles, slice s + 1's loaded into registers before slice s's taps and stored into the
// other after them: one barrier per slice (with ST_WONCE or ST_LIT; up to 8 loads per
// invocation).
#if defined(ST_WONCE) && ST_WONCE
#define ST_WSL ST_SLICES
#else
#define ST_WSL 1
#endif
// ST_PAIR=1: two input slices staged per barrier, into two tiles (half the barriers).
#if (defined(ST_DB) && ST_DB) || (defined(ST_PAIR) && ST_PAIR)
#define ST_BUFS 2
#else
#define ST_BUFS 1
#endif
#define ST_TILE (ST_SH * ST_SWP)
shared MATH_P vec4 st_in[ST_BUFS * ST_TILE];
shared MATH_P vec4 st_w[ST_WEIGHTS * ST_WSL];
// ST_LIT_N > 0 (DeviceProfile::conv_smem_lit; one slice group): the layer's ST_LIT_N weight
// vec4s, in the packing's order, as a constant array in the program (ST_LIT: its elements),
// so that the FMAs take them as immediate operands, without loads: at 1 pixel x 2 slices
// style's @256 ran 26.3 -> 14.8 us on an H100 (docs/perf/log.md, "tri7, session 18").
// ST_LIT_G=2: two slice groups' literals, group g's at g * ST_LIT_N / ST_LIT_G; the
// taps branch on the workgroup's group (uniform), each branch indexing its own by constants.
#if defined(ST_LIT_N) && ST_LIT_N > 0
#define ST_LITW 1
const highp vec4 st_lit[ST_LIT_N] = vec4[ST_LIT_N](ST_LIT);
#if !defined(ST_LIT_G) || ST_LIT_G < 1
#undef ST_LIT_G
#define ST_LIT_G 1
#endif
#define ST_WGT(g, i) st_lit[(g) * (ST_LIT_N / ST_LIT_G) + (i)]
#else
#undef ST_LIT_G
#define ST_LIT_G 1
#define ST_WGT(g, i) st_w[i]
#endif

// Vec4 i of the tile: its input pixel within the slice, or -1 (outside the
// map, or past the tile), and its shared-memory slot.
int st_source(int i) {
  int r = i / ST_SW;
  int c = i - r * ST_SW;
  int y = GATHER_Y(int(gl_WorkGroupID.y) * LOCAL_Y - PAD_TOP + r);
  int x = GATHER_X(int(gl_WorkGroupID.x) * ST_TW - PAD_LEFT + c);
#if defined(GATHER_MIRROR)
  // A tile past the map's end reflects past 0 on small maps: kept inside (never stored).
  y = clamp(y, 0, IN_H - 1);
  x = clamp(x, 0, IN_W - 1);
#endif
  return i < ST_SH * ST_SW && GATHER_INSIDE(y, x) ? GATHER_INDEX(y, x) : -1;
}
int st_slot(int i) { return (i / ST_SW) * ST_SWP + ST_SKEW(i - (i / ST_SW) * ST_SW); }

// Weights are packed [group][tap][slice][TILE_SLICES][4]: slice s's i-th.
int st_weight(int s, int i) {
  int tap = i / (TILE_SLICES * 4);
  return (int(gl_WorkGroupID.z) * KERNEL_H * KERNEL_W + tap) * ST_IN_SLICES * TILE_SLICES * 4 +
         s * TILE_SLICES * 4 + i - tap * (TILE_SLICES * 4);
}
void st_stage(int s, int b) {
  if (s >= ST_IN_SLICES) return;
  int lid = int(gl_LocalInvocationIndex);
  for (int i = lid; i < ST_SH * ST_SW; i += ST_N) {
    int source = st_source(i);  // GATHER_UPSAMPLE, PROLOGUE_IN: the gather's own remaps
    st_in[b * ST_TILE + st_slot(i)] =
        source >= 0 ? GATHERED(load_input(s * IN_HW + source), s) : vec4(0.0);
  }
#if (!defined(ST_WONCE) || !ST_WONCE) && !defined(ST_LITW)
  for (int i = lid; i < ST_WEIGHTS; i += ST_N) st_w[i] = LOAD(weights, st_weight(s, i));
#endif
}

// A macro: as a global array that a function updates, the accumulators
// ran 1.1-2x slower on an H200 (kept in memory, not registers).
#if ST_WSL > 1 || defined(ST_LITW)
#define ST_WI(tap, s) (((tap) * ST_SLICES + (s)) * TILE_SLICES * 4)
#else
#define ST_WI(tap, s) ((tap) * TILE_SLICES * 4)
#endif
#define ST_COMPUTE(s) ST_COMPUTE_B(s, 0)
#if ST_LIT_G == 2
#define ST_COMPUTE_B(s, b) \
  if (gl_WorkGroupID.z == 0u) { ST_COMPUTE_G(s, b, 0) } else { ST_COMPUTE_G(s, b, 1) }
#else
#define ST_COMPUTE_B(s, b) ST_COMPUTE_G(s, b, 0)
#endif
#define ST_COMPUTE_G(s, b, g)                                                      \
  if ((s) < ST_IN_SLICES) {                                                        \
    int lx = int(gl_LocalInvocationID.x);                                          \
    int ly = int(gl_LocalInvocationID.y);                                          \
    for (int ky = 0; ky < KERNEL_H; ++ky) {                                        \
      MATH_P vec4 row[TILE_ROWS + KERNEL_W - 1];                                   \
      for (int j = 0; j < TILE_ROWS + KERNEL_W - 1; ++j) {                         \
        row[j] = st_in[(b) * ST_TILE + (ly + ky) * ST_SWP + ST_SKEW(lx * TILE_ROWS + j)]; \
      }                                                                            \
      for (int kx = 0; kx < KERNEL_W; ++kx) {                                      \
        int wi = ST_WI(ky * KERNEL_W + kx, s);                                     \
        for (int o = 0; o < TILE_SLICES; ++o) {                                    \
          MATH_P vec4 w0 = ST_WGT(g, wi + o * 4);                                       \
          MATH_P vec4 w1 = ST_WGT(g, wi + o * 4 + 1);                                   \
          MATH_P vec4 w2 = ST_WGT(g, wi + o * 4 + 2);                                   \
          MATH_P vec4 w3 = ST_WGT(g, wi + o * 4 + 3);                                   \
          for (int p = 0; p < TILE_ROWS; ++p) {                                    \
            MATH_P vec4 x = row[p + kx];                                           \
            ACC_STEP(acc[p * TILE_SLICES + o], x);                                 \
          }                                                                        \
        }                                                                          \
      }                                                                            \
    }                                                                              \
  }

// ST_PREFETCH=1 (DeviceProfile::conv_smem_prefetch): slice s + 1's vec4s are loaded
// into registers before slice s's taps and stored after them, their latency hidden
// behind the FMAs; where the tile takes <= 4 vec4s and 1 weight per invocation.
#define ST_LOADS ((ST_SH * ST_SW + ST_N - 1) / ST_N)
#if defined(ST_PREFETCH) && ST_PREFETCH && ST_LOADS <= 4 && ST_WEIGHTS <= ST_N
#define ST_PF 1
#if defined(ST_HOIST) && ST_HOIST && (ST_WSL > 1 || defined(ST_LITW))  // sources set once
#define ST_PF_HOIST 1
#define ST_GET(k, s) if (k < ST_LOADS) raw[k] = load_input((s) * IN_HW + max(src[k], 0));
#define ST_PSLOT(k) hslot[k]
#else
#define ST_GET(k, s) if (k < ST_LOADS) { src[k] = st_source(lid + k * ST_N);         \
    raw[k] = load_input((s) * IN_HW + max(src[k], 0)); }
#define ST_PSLOT(k) st_slot(lid + k * ST_N)
#endif
#define ST_PUT(k, s) if (k < ST_LOADS && lid + k * ST_N < ST_SH * ST_SW) \
    st_in[ST_PSLOT(k)] = src[k] >= 0 ? GATHERED(raw[k], s) : vec4(0.0);
#if ST_WSL > 1 || defined(ST_LITW)
#define ST_WGET(s)
#define ST_WPUT
#else
#define ST_WGET(s) if (lid < ST_WEIGHTS) wraw = LOAD(weights, st_weight(s, lid));
#define ST_WPUT if (lid < ST_WEIGHTS) st_w[lid] = wraw;
#endif
#define ST_FETCH(s) if ((s) < ST_SLICES) { ST_GET(0, s) ST_GET(1, s) ST_GET(2, s) ST_GET(3, s) \
    ST_WGET(s) }
#define ST_STORE(s) if ((s) < ST_SLICES) { ST_PUT(0, s) ST_PUT(1, s) ST_PUT(2, s) ST_PUT(3, s) \
    ST_WPUT } memoryBarrierShared(); barrier();
#define ST_SLICE(s) ST_FETCH((s) + 1) ST_COMPUTE(s) barrier(); ST_STORE((s) + 1)
#elif ST_BUFS == 2 && (ST_WSL > 1 || defined(ST_LITW)) && ST_LOADS <= 8 && \
    !(defined(ST_PAIR) && ST_PAIR)
#define ST_DBUF 1
#define ST_GET(k, s) if (k < ST_LOADS) { src[k] = st_source(lid + k * ST_N);         \
    raw[k] = load_input((s) * IN_HW + max(src[k], 0)); }
#define ST_PUT(k, s, b) if (k < ST_LOADS && lid + k * ST_N < ST_SH * ST_SW) \
    st_in[(b) * ST_TILE + st_slot(lid + k * ST_N)] = src[k] >= 0 ? GATHERED(raw[k], s) : vec4(0.0);
#define ST_FETCH(s) if ((s) < ST_IN_SLICES) { ST_GET(0, s) ST_GET(1, s) ST_GET(2, s) ST_GET(3, s) \
    ST_GET(4, s) ST_GET(5, s) ST_GET(6, s) ST_GET(7, s) }
#define ST_STORE(s, b) if ((s) < ST_IN_SLICES) { ST_PUT(0, s, b) ST_PUT(1, s, b) ST_PUT(2, s, b) \
    ST_PUT(3, s, b) ST_PUT(4, s, b) ST_PUT(5, s, b) ST_PUT(6, s, b) ST_PUT(7, s, b) }
#define ST_SLICE(s) ST_FETCH((s) + 1) ST_COMPUTE_B(s, (s) & 1) ST_STORE((s) + 1, ((s) + 1) & 1) \
    memoryBarrierShared(); barrier();
#else
// ST_HOIST=1 (with ST_LIT): each invocation's <= 4 tile sources and slots computed once
// (the same for every slice), not per slice in st_stage (ST_PREFETCH's ST_GET alike).
#if defined(ST_HOIST) && ST_HOIST && ST_LOADS <= 4 && (ST_WSL > 1 || defined(ST_LITW))
#define ST_HOISTED 1
#define ST_HPUT(k, s, b) if (k < ST_LOADS && lid + k * ST_N < ST_SH * ST_SW)             \
    st_in[(b) * ST_TILE + hslot[k]] =                                                     \
        hsrc[k] >= 0 ? GATHERED(load_input((s) * IN_HW + hsrc[k]), s) : vec4(0.0);
#define ST_STAGE(s, b) if ((s) < ST_IN_SLICES) { ST_HPUT(0, s, b) ST_HPUT(1, s, b)       \
    ST_HPUT(2, s, b) ST_HPUT(3, s, b) }
#else
#define ST_STAGE(s, b) st_stage(s, b);
#endif
#if ST_BUFS == 2 && defined(ST_PAIR) && ST_PAIR
#define ST_PAIRS 1
#define ST_SLICE2(s) ST_STAGE(s, 0) ST_STAGE((s) + 1, 1) memoryBarrierShared(); barrier(); \
    ST_COMPUTE_B(s, 0) ST_COMPUTE_B((s) + 1, 1) barrier();
#else
#define ST_SLICE(s) ST_STAGE(s, 0) memoryBarrierShared(); barrier(); ST_COMPUTE(s) barrier();
#endif
#endif

void main() {
  ACC_P vec4 acc[TILE];
  for (int i = 0; i < TILE; ++i) acc[i] = vec4(0.0);
#if ST_WSL > 1
  {  // ST_WONCE: the group's weights, every slice's, in the packing's order
    int w_base = int(gl_WorkGroupID.z) * KERNEL_H * KERNEL_W * ST_IN_SLICES * TILE_SLICES * 4;
    for (int i = int(gl_LocalInvocationIndex); i < KERNEL_H * KERNEL_W * ST_IN_SLICES *
         TILE_SLICES * 4; i += ST_N) {
      st_w[i] = LOAD(weights, w_base + i);
    }
  }
#endif
#if defined(ST_PF)
  int lid = int(gl_LocalInvocationIndex), src[4];
  vec4 raw[4], wraw;
#if defined(ST_PF_HOIST)
  int hslot[4];
  for (int k = 0; k < 4; ++k) {
    src[k] = st_source(lid + k * ST_N);
    hslot[k] = st_slot(lid + k * ST_N);
  }
#endif
  ST_FETCH(0) ST_STORE(0)
#elif defined(ST_DBUF)
  int lid = int(gl_LocalInvocationIndex), src[8];
  vec4 raw[8];
  ST_FETCH(0) ST_STORE(0, 0) memoryBarrierShared(); barrier();
#elif defined(ST_HOISTED)
  int lid = int(gl_LocalInvocationIndex), hsrc[4], hslot[4];
  for (int k = 0; k < 4; ++k) {
    hsrc[k] = st_source(lid + k * ST_N);
    hslot[k] = st_slot(lid + k * ST_N);
  }
#endif
#if defined(ST_PAIRS)
  ST_SLICE2(0)
#if ST_SLICES > 2
  ST_SLICE2(2)
#endif
#if ST_SLICES > 4
  ST_SLICE2(4) ST_SLICE2(6)
#endif
#else
  ST_SLICE(0)
#if ST_SLICES > 1
  ST_SLICE(1)
#endif
#if ST_SLICES > 2
  ST_SLICE(2)
#endif
#if ST_SLICES > 3
  ST_SLICE(3)
#endif
#if ST_SLICES > 4  // up to 8 (a step past IN_S only meets its barriers)
  ST_SLICE(4) ST_SLICE(5) ST_SLICE(6) ST_SLICE(7)
#endif
#endif  // ST_PAIRS
  int out_w = OUT_W;
  int out_hw = OUT_HW;
  int out_s = OUT_S;
  int out_c = OUT_C;
  int group = int(gl_WorkGroupID.z);
  int oy = int(gl_GlobalInvocationID.y);
  int ox = int(gl_WorkGroupID.x) * ST_TW + int(gl_LocalInvocationID.x) * TILE_ROWS;
  if (oy * out_w >= out_hw) return;
  vec4 b[TILE_SLICES];
  for (int o = 0; o < TILE_SLICES; ++o) {
    b[o] = LOAD(bias, min(group * TILE_SLICES + o, out_s - 1));
  }
  for (int p = 0; p < TILE_ROWS; ++p) {
    if (ox + p >= out_w) break;
    for (int o = 0; o < TILE_SLICES; ++o) {
      int slice = group * TILE_SLICES + o;
      if (slice >= out_s) break;
      int index = slice * out_hw + oy * out_w + ox + p;
      STORE(out0, index,
            zero_padded(EPILOGUE(activate(acc[p * TILE_SLICES + o] + b[o]), index, slice),
                        slice, out_c));
    }
  }
}
