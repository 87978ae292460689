#version 310 es
// A 3x3 convolution (stride 1, "same" padding of 1) over a map upsampled by 2 with nearest
// neighbours, computed as four 2x2 convolutions over the upsampled map's source: style
// transfer's decoder layers (a RESIZE_NEAREST_NEIGHBOR by 2, a MIRROR_PAD of 1, a 3x3 conv).
//
// Output pixel (2i + py, 2j + px) of the upsampled map reads rows 2i + py - 1 .. 2i + py + 1,
// which are source rows i - 1, i, i (py = 0) or i, i, i + 1 (py = 1): two distinct source
// rows, the kernel's rows {0}, {1, 2} (py = 0) or {0, 1}, {2} (py = 1) summed onto them; the
// columns alike. So each parity q = (py, px) is a 2x2 convolution over the source with its own
// summed weights (delegate/passes/upsample_conv.h makes them): 4 taps instead of 9, and the
// staged tile is the source's, a quarter of the upsampled tile's pixels. Padding: a mirror
// (REFLECT or SYMMETRIC, GATHER_MIRROR 0 / 1) of 1 around the upsampled map is the source
// clamped to its edges (row -1 mirrors to row 0 or 1, both source row 0); zero padding
// (GATHER_MIRROR -1) is the source's rows -1 and IN_H read as zeros.
//
// A workgroup: LOCAL_X x LOCAL_Y source pixels x 4 parities (z, one per 32-invocation warp
// when LOCAL_X * LOCAL_Y is 32) x TS output slices of group gl_WorkGroupID.z (QUAD: 1 along z,
// every invocation all four parities; PAR_WG: 1 along z, one parity per workgroup). Per input slice it stages the (LOCAL_Y + 2) x
// (LOCAL_X + 2) source tile (the prologue applied there) and each invocation reads its 2x2
// neighbourhood; the next slice's vec4s are loaded into registers before the taps and stored
// after them (<= 4 per invocation). barrier() only outside control flow: the IN_S (<= 8)
// slices are steps written out.
// Weights (binding 2): [group][parity][tap 2x2][input slice][TS][4 input lanes] vec4 of 4
// output channels, or WEIGHTS_LITERAL: the same values written into the program
// (WEIGHT_VALUES_g, a group each), every index a constant (each parity's taps in a branch of their own), so
// each weight is its FMA's immediate operand. Bias (binding 3): one vec4 per output slice.
// Bindings as conv2d.comp: 0 output, 1 input (the source map), 2 weights, 3 bias, 4 the
// epilogue's operand (EPILOGUE_IN) or 4-5 the prologue's scale and shift (PROLOGUE_IN).
//
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID
// @axis - EPILOGUE_IN PROLOGUE_IN
// @axis - WEIGHTS_LITERAL WSMEM
// @axis - QUAD PAR_WG
// @const LOCAL_X=8 LOCAL_Y=4 LOCAL_Z=4 TS=2 GROUPS=1 IN_S=3 IN_H=8 IN_W=8 OUT_S=2 OUT_C=8 GATHER_MIRROR=0
// @const MATH_P=highp ACC_P=highp FMA_CHAIN=0
// @const EPILOGUE(x,index,slice)=(x) PROLOGUE(x,slice)=(x) WEIGHT_VALUES_0=vec4(0.0)
// @const WEIGHT_VALUES_1=vec4(0.0) WEIGHT_VALUES_2=vec4(0.0) WEIGHT_VALUES_3=vec4(0.0)

// LOCAL_Z: 4 (the parities), 1 with QUAD or PAR_WG.
layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in0, 1, In0);
#if defined(PROLOGUE_IN)
TENSOR_IN(prologue_scale, 4, PrologueScale);
TENSOR_IN(prologue_shift, 5, PrologueShift);
#if !defined(PROLOGUE)
#define PROLOGUE(x, slice) (x)
#endif
#define GATHERED(v, s) PROLOGUE(ew_mul((v), LOAD(prologue_scale, (s))), (s))
#else
#define GATHERED(v, s) (v)
#endif
TENSOR_IN(bias, 3, Bias);
#if defined(EPILOGUE_IN)
TENSOR_IN(epilogue_in, 4, EpilogueIn);
#endif
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif

#if !defined(MATH_P)
#define MATH_P highp
#endif
#if !defined(ACC_P)
#define ACC_P highp
#endif
#define IN_HW (IN_H * IN_W)
#define OUT_W (2 * IN_W)
#define OUT_HW (4 * IN_HW)
#define TILE_W (LOCAL_X + 2)
#define TILE_H (LOCAL_Y + 2)
#define TILE_N (TILE_W * TILE_H)
#define N_INV (LOCAL_X * LOCAL_Y * LOCAL_Z)
#define LOADS ((TILE_N + N_INV - 1) / N_INV)
shared MATH_P vec4 tile[TILE_N];

#if defined(WEIGHTS_LITERAL)
// One array per group (WEIGHT_VALUES_g): NVIDIA's compiler refused one of 2048 vec4s ("too much
// data in initialization") and took 1152.
const highp vec4 weight_literal_0[] = vec4[](WEIGHT_VALUES_0);
const highp vec4 weight_literal_1[] = vec4[](WEIGHT_VALUES_1);  // vec4(0.0) past GROUPS
const highp vec4 weight_literal_2[] = vec4[](WEIGHT_VALUES_2);
const highp vec4 weight_literal_3[] = vec4[](WEIGHT_VALUES_3);
#define WLIT(a, i) a[min((i), a.length() - 1)]
// g is a constant in every use (COMPUTE's branches): the choice folds away.
#define WEIGHT(g, i) ((g) == 0 ? WLIT(weight_literal_0, i) : (g) == 1 ? WLIT(weight_literal_1, i) \
    : (g) == 2 ? WLIT(weight_literal_2, i) : WLIT(weight_literal_3, i))
#else
TENSOR_IN(weights, 2, Weights);
#define WEIGHT(g, i) LOAD(weights, (g) * GROUP_VEC4S + (i))
#endif
#if defined(FMA_CHAIN) && FMA_CHAIN
#define ACC_STEP(C, A) { C += w0 * A.x; C += w1 * A.y; C += w2 * A.z; C += w3 * A.w; }
#else
#define ACC_STEP(C, A) C += w0 * A.x + w1 * A.y + w2 * A.z + w3 * A.w
#endif

// Tile vec4 i's source pixel within a slice, or -1 (a zero: outside the map with zero padding,
// or past the tile).
int tile_source(int i) {
  int r = i / TILE_W;
  int y = int(gl_WorkGroupID.y) * LOCAL_Y - 1 + r;
  int x = int(gl_WorkGroupID.x) * LOCAL_X - 1 + (i - r * TILE_W);
  if (i >= TILE_N) return -1;
#if GATHER_MIRROR >= 0
  return clamp(y, 0, IN_H - 1) * IN_W + clamp(x, 0, IN_W - 1);
#else
  return y >= 0 && y < IN_H && x >= 0 && x < IN_W ? y * IN_W + x : -1;
#endif
}

// Weight vec4 (parity q, tap t, slice s, output slice o, input lane k) within its group.
#define GROUP_VEC4S (4 * 4 * IN_S * TS * 4)
#define W_INDEX(q, t, s, o, k) ((((((q) * 4 + (t)) * IN_S + (s)) * TS + (o)) * 4) + (k))

#if defined(WSMEM) && !defined(WEIGHTS_LITERAL)
// WSMEM: each slice's weights of the group (4 parities x 4 taps x TS x 4 vec4s) staged in
// shared memory with its tile (loaded into registers during the previous slice's taps), read
// as broadcasts (a warp has one parity): no texel fetch per weight.
#define W_SLICE (4 * 4 * TS * 4)
#define WLOADS ((W_SLICE + N_INV - 1) / N_INV)
shared MATH_P vec4 wtile[W_SLICE];
#undef WEIGHT
#define WEIGHT(g, i) wtile[i]
#define WIDX(q, t, s, o, k) (((((q) * 4 + (t)) * TS + (o)) * 4) + (k))
// Entry i of slice s's staging: its vec4 in the group's weights.
int w_source(int i, int s) {
  int qt = i / (TS * 4);
  return int(gl_WorkGroupID.z) * GROUP_VEC4S + (qt * IN_S + s) * TS * 4 + (i - qt * TS * 4);
}
#else
#define WLOADS 0
#define WIDX(q, t, s, o, k) W_INDEX(q, t, s, o, k)
#endif

// Parity q's 4 taps of slice s into acc[a0 .. a0 + TS - 1]; ly / lx: the invocation's place.
#define TAPS(g, q, s, a0)                                                          \
  {                                                                               \
    for (int t = 0; t < 4; ++t) {                                                 \
      MATH_P vec4 x = tile[(ly + (q) / 2 + t / 2) * TILE_W + lx + (q) % 2 + t % 2];  \
      for (int o = 0; o < TS; ++o) {                                              \
        MATH_P vec4 w0 = WEIGHT(g, WIDX(q, t, s, o, 0));                       \
        MATH_P vec4 w1 = WEIGHT(g, WIDX(q, t, s, o, 1));                       \
        MATH_P vec4 w2 = WEIGHT(g, WIDX(q, t, s, o, 2));                       \
        MATH_P vec4 w3 = WEIGHT(g, WIDX(q, t, s, o, 3));                       \
        ACC_STEP(acc[(a0) + o], x);                                               \
      }                                                                           \
    }                                                                             \
  }
#if defined(QUAD)
#define PARITIES(g, s) TAPS(g, 0, s, 0) TAPS(g, 1, s, TS) TAPS(g, 2, s, 2 * TS) TAPS(g, 3, s, 3 * TS)
#elif defined(WEIGHTS_LITERAL) && !defined(PAR_WG)
// The parity (uniform in a warp of 32) picks a branch whose every weight index is constant.
#define PARITIES(g, s)                    \
  if (q == 0) { TAPS(g, 0, s, 0) }        \
  else if (q == 1) { TAPS(g, 1, s, 0) }   \
  else if (q == 2) { TAPS(g, 2, s, 0) }   \
  else { TAPS(g, 3, s, 0) }
#else
#define PARITIES(g, s) TAPS(g, q, s, 0)
#endif
#if defined(WEIGHTS_LITERAL) && GROUPS == 1
#define COMPUTE(s) if ((s) < IN_S) { PARITIES(0, s) }
#elif defined(WEIGHTS_LITERAL)
#define COMPUTE(s) if ((s) < IN_S) { \
  if (group == 0) { PARITIES(0, s) } else if (group == 1) { PARITIES(1, s) } \
  else if (group == 2) { PARITIES(2, s) } else { PARITIES(3, s) } }
#else
#define COMPUTE(s) if ((s) < IN_S) { PARITIES(group, s) }
#endif

#if LOADS > 4
#error the block stages more than 4 vec4s per invocation (delegate/passes/upsample_conv.cc)
#endif
// Slice s's vec4s into registers (raw), stored into the tile after the taps of slice s - 1.
#if WLOADS > 0
#define WFETCH(s) for (int k = 0; k < WLOADS; ++k) { \
    if (lid + k * N_INV < W_SLICE) { wraw[k] = LOAD(weights, w_source(lid + k * N_INV, s)); } }
#define WPUT for (int k = 0; k < WLOADS; ++k) { \
    if (lid + k * N_INV < W_SLICE) { wtile[lid + k * N_INV] = wraw[k]; } }
#else
#define WFETCH(s)
#define WPUT
#endif
#define FETCH(s) if ((s) < IN_S) { for (int k = 0; k < LOADS; ++k) { \
    raw[k] = src[k] >= 0 ? LOAD(in0, (s) * IN_HW + src[k]) : vec4(0.0); } WFETCH(s) }
#define PUT(s) if ((s) < IN_S) { for (int k = 0; k < LOADS; ++k) { \
    if (lid + k * N_INV < TILE_N) { tile[lid + k * N_INV] = src[k] >= 0 ? GATHERED(raw[k], s) : vec4(0.0); } } \
    WPUT }
#define SLICE(s) FETCH((s) + 1) COMPUTE(s) barrier(); PUT((s) + 1) memoryBarrierShared(); barrier();
#define FIRST FETCH(0) PUT(0) memoryBarrierShared(); barrier();

void main() {
  int lid = int(gl_LocalInvocationIndex);
  int lx = int(gl_LocalInvocationID.x);
  int ly = int(gl_LocalInvocationID.y);
#if defined(PAR_WG)
  // PAR_WG: a parity per workgroup (z = group * 4 + parity), uniform to the compiler, so one
  // code path indexes the literals by it (not a branch per parity).
  int q = int(gl_WorkGroupID.z) % 4;
  int group = int(gl_WorkGroupID.z) / 4;
#else
  int q = int(gl_LocalInvocationID.z);
  int group = int(gl_WorkGroupID.z);
#endif
  int src[LOADS];
  for (int k = 0; k < LOADS; ++k) src[k] = tile_source(lid + k * N_INV);
#if defined(QUAD)
  ACC_P vec4 acc[4 * TS];
  for (int i = 0; i < 4 * TS; ++i) acc[i] = vec4(0.0);
#else
  ACC_P vec4 acc[TS];
  for (int i = 0; i < TS; ++i) acc[i] = vec4(0.0);
#endif
  vec4 raw[LOADS];
#if WLOADS > 0
  vec4 wraw[WLOADS];
#endif
  FIRST
  SLICE(0)
#if IN_S > 1
  SLICE(1)
#endif
#if IN_S > 2
  SLICE(2)
#endif
#if IN_S > 3
  SLICE(3)
#endif
#if IN_S > 4
  SLICE(4) SLICE(5) SLICE(6) SLICE(7)
#endif
  int i = int(gl_GlobalInvocationID.y);
  int j = int(gl_WorkGroupID.x) * LOCAL_X + lx;
  if (i >= IN_H || j >= IN_W) return;
#if defined(QUAD)
  for (int p = 0; p < 4; ++p) {
#else
  {
    int p = q;
#endif
    int index0 = (2 * i + p / 2) * OUT_W + 2 * j + p % 2;
    for (int o = 0; o < TS; ++o) {
      int slice = group * TS + o;
      if (slice >= OUT_S) break;
      int index = slice * OUT_HW + index0;
#if defined(QUAD)
      ACC_P vec4 sum = acc[p * TS + o];
#else
      ACC_P vec4 sum = acc[o];
#endif
      STORE(out0, index,
            zero_padded(EPILOGUE(activate(sum + LOAD(bias, slice)), index, slice), slice, OUT_C));
    }
  }
}
