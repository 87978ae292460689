#version 310 es
// A register-tiled GEMM over PHWC4: CONV_2D (1x1 and general), FULLY_CONNECTED. The output
// is a matrix of ROWS rows (output pixels over all batches) by OUT_S channel slices. Each
// invocation computes TILE_ROWS consecutive rows x TILE_SLICES output slices in registers
// (8-32 vec4 accumulators): each input vec4 feeds TILE_SLICES x 4 FMAs, each weight vec4
// TILE_ROWS of them. Two ways to read the input:
//  - default (1x1 convolution, fully connected): row r reads the DEPTH_STEPS input vec4s at
//    row_base + d * DEPTH_STRIDE, row_base = (r / ROW_PIXELS) * IN_S * IN_HW + r % ROW_PIXELS:
//    ROW_PIXELS = IN_HW, DEPTH_STEPS = IN_S, DEPTH_STRIDE = IN_HW for a 1x1 convolution or an
//    FC over the last dimension; 1, IN_S * IN_HW, 1 for an FC over a flattened 4-D input.
//  - GENERIC (any kernel size, stride, dilation, padding): row r is output pixel (b, y, x);
//    for each tap (ky, kx) and input slice it reads input pixel (y * STRIDE_H - PAD_TOP + ky *
//    DILATION_H, x * ...), zero outside. No im2col buffer: the taps are gathered in place.
// Weights (binding 2), packed in the order read: [slice group][tap][depth step][TILE_SLICES]
// [4] vec4, vec4 k of output slice o holding input lane k's weights for the slice's 4 output
// channels. Bias (binding 3): one vec4 per output slice, padded to whole groups. Padding is
// zero. SLICES_ON_X: slice groups on x, row groups on y, for small maps (7x7, FC).
// Bindings: 0 = output, 1 = input, 2 = packed weights, 3 = packed bias.
// How the input is read besides a PHWC4 tensor (docs/conv2d_gather.md: what each define
// means, which pass sets it): BHWC_INPUT, INPUT_QUANT(x), BHWC_BYTES_INPUT (an image's upload
// staging), TEXTURE_INPUT (a bound 2D texture), GATHER_MIRROR (a folded MIRROR_PAD),
// GATHER_UPSAMPLE=F (a folded nearest resize), PROLOGUE_IN (a folded norm apply, bindings 4-5).
// EPILOGUE(x,index,slice) (delegate/passes/fusion.h): an elementwise step fused into the
// store, its tensor operand, if any, at binding 4 (EPILOGUE_IN).
// K_SPLIT (GENERIC, rows on x, LOCAL_Y 1; DeviceProfile::conv_k_split): the LOCAL_Z
// invocations along z share one output tile, each every LOCAL_Z-th (tap, slice) step;
// the partial sums meet in shared memory ((LOCAL_Z - 1) x LOCAL_X x TILE vec4s, within
// the device's limits), z = 0 stores: a register tile and enough invocations for
// thousands of lanes (docs/perf/log.md, "perf, session 9").
// ROWS_UNROLLED (ROW_STEP 1; DeviceProfile::conv_unrolled_tile): each step's slices and the
// stores' rows written out (llvmpipe: 3-6x faster from ~24 accumulators; "llvm4, session 13").
// K_UNROLL=2 (1x1 / FC; DeviceProfile::conv_k_unroll): two depth steps per loop.
// ROW_STEP (K_SPLIT; 1 otherwise): the step between an invocation's rows; LOCAL_X:
// neighbouring invocations take neighbouring pixels (rows w * LOCAL_X * TILE_ROWS + x
// + p * LOCAL_X), a warp's loads and stores contiguous (DeviceProfile::conv_split_tile).
// MATH_P / ACC_P (default highp): products' and accumulators' precision; mediump with fp16
// storage and DeviceProfile::fp16_math (NVIDIA: packed halves; "conv, session 10").
// Shapes are uniforms (egl/shader_source.h): layers of one tile, window and activation share
// a program; the unrolled loops' bounds stay constants. div_mod() instead of divisions by a
// uniform (llvmpipe scalarizes those); shapes compiled in (Dispatch::specialize) from
// gl::kExactDivModLimit rows.
// @axis - GENERIC
// @axis - ONE_INPUT_SLICE
// @axis - K_SPLIT SMEM_TILE ROWS_UNROLLED
// @axis - SLICES_ON_X
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID
// @const LOCAL_X=8 LOCAL_Y=1 LOCAL_Z=1 TILE_ROWS=4 TILE_SLICES=2
// @const KERNEL_H=3 KERNEL_W=3 STRIDE_H=1 STRIDE_W=1 DILATION_H=1
// @const DILATION_W=1 K_UNROLL=1 ROW_STEP=8 MATH_P=mediump ACC_P=mediump ST_SLICES=2
// @uniform ROWS=16 SLICE_GROUPS=1 IN_S=2 IN_HW=16 IN_H=4 IN_W=4 OUT_S=2
// @uniform OUT_C=8 OUT_HW=16 OUT_W=4 ROW_PIXELS=16 DEPTH_STEPS=2
// @uniform DEPTH_STRIDE=16 PAD_TOP=1 PAD_LEFT=1
// @axis - EPILOGUE_IN PROLOGUE_IN
// @const EPILOGUE(x,index,slice)=(x) PROLOGUE(x,slice)=(x)
// @axis - BHWC_INPUT TEXTURE_INPUT BHWC_BYTES_INPUT
// @const IN_C=3 INPUT_QUANT(x)=(x) GATHER_MIRROR=0 GATHER_UPSAMPLE=1
// @const STAGED_SCALE=0.5 STAGED_ZERO_POINT=3 STAGED_FLIP=128u FMA_CHAIN=0 ST_PREFETCH=0 KS_WSMEM=0
// @const ST_WONCE=0 ST_DB=0 ST_LIT_N=0 ST_LIT=0 ST_LIT_G=1 ST_PAIR=0 ST_HOIST=0

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
#if defined(TEXTURE_INPUT)
layout(binding = 1) uniform highp sampler2D in0;
layout(location = 0) uniform highp vec4 io_scale;
layout(location = 1) uniform highp vec4 io_offset;
layout(location = 2) uniform highp ivec4 io_channels;
vec4 load_texel(int x, int y) {
  vec4 t = texelFetch(in0, ivec2(x, y), 0);
  vec4 v = vec4(0.0);
  for (int k = 0; k < IN_C; ++k) v[k] = t[io_channels[k]] * io_scale[k] + io_offset[k];
  return v;
}
// Only GENERIC reads through this; the other variants compile with it.
vec4 load_input(int pixel) { return load_texel(pixel % IN_W, pixel / IN_W); }
#elif defined(BHWC_INPUT)
FLOATS_IN(in0, 1, In0);
#if !defined(INPUT_QUANT)
#define INPUT_QUANT(x) (x)
#endif
vec4 load_input(int pixel) {
  vec4 v = vec4(0.0);
  for (int k = 0; k < IN_C; ++k) v[k] = LOAD_FLOAT(in0, pixel * IN_C + k);
  return INPUT_QUANT(v);
}
#elif defined(BHWC_BYTES_INPUT)
WORDS_IN(in0, 1, In0);
// A pixel's IN_C <= 4 bytes lie in at most two words: fetched once each.
vec4 load_input(int pixel) {
  int first = pixel * IN_C;
  uint lo = LOAD_WORD(in0, first >> 2);
  uint hi = LOAD_WORD(in0, (first + IN_C - 1) >> 2);
  vec4 v = vec4(0.0);
  for (int k = 0; k < IN_C; ++k) {
    int byte_index = (first & 3) + k;
    uint q = bitfieldExtract(byte_index < 4 ? lo : hi, (byte_index & 3) * 8, 8);
    v[k] = float(int(q ^ STAGED_FLIP) - STAGED_ZERO_POINT) * STAGED_SCALE;
  }
  return v;
}
#else
TENSOR_IN(in0, 1, In0);
vec4 load_input(int index) { return LOAD(in0, index); }
#endif
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
#define WLOAD(i) LOAD(weights, i)  // K_SPLIT's KS_WSMEM: from shared memory (below)
TENSOR_IN(weights, 2, Weights);
TENSOR_IN(bias, 3, Bias);
#if defined(EPILOGUE_IN)
TENSOR_IN(epilogue_in, 4, EpilogueIn);
#endif
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif

#define TILE (TILE_ROWS * TILE_SLICES)
#if !defined(MATH_P)
#define MATH_P highp
#endif
#if !defined(ACC_P)
#define ACC_P highp
#endif
#if defined(FMA_CHAIN) && FMA_CHAIN  // one FMA per product (ACC_P == MATH_P only), as gemm.comp
#define ACC_STEP(C, A) { C += w0 * A.x; C += w1 * A.y; C += w2 * A.z; C += w3 * A.w; }
#else
#define ACC_STEP(C, A) C += w0 * A.x + w1 * A.y + w2 * A.z + w3 * A.w
#endif

#if defined(GATHER_MIRROR)
// One reflection suffices: MIRROR_PAD's paddings stay below the size.
int mirror_coord(int v, int n) {
  if (v < 0) v = -v - GATHER_MIRROR;
  if (v >= n) v = 2 * n - 2 + GATHER_MIRROR - v;
  return v;
}
#define GATHER_Y(v) mirror_coord(v, IN_H)
#define GATHER_X(v) mirror_coord(v, IN_W)
// A mirrored tap is always inside: no bounds test, no select on the load.
#define GATHER_INSIDE(y, x) true
#else
#define GATHER_Y(v) (v)
#define GATHER_X(v) (v)
#define GATHER_INSIDE(y, x) ((y) >= 0 && (y) < IN_H && (x) >= 0 && (x) < IN_W)
#endif
// The vec4 of a tap inside the (possibly resized) input within its slice.
#if defined(GATHER_UPSAMPLE) && GATHER_UPSAMPLE > 1
#define GATHER_INDEX(y, x) \
  (((y) / GATHER_UPSAMPLE) * (IN_W / GATHER_UPSAMPLE) + (x) / GATHER_UPSAMPLE)
#else
#define GATHER_INDEX(y, x) ((y) * IN_W + (x))
#endif

#if defined(K_SPLIT)
#if defined(KS_WSMEM) && KS_WSMEM > 0
// KS_WSMEM=N (DeviceProfile::conv_k_split_wsmem_rows): the slice group's N weight vec4s (all
// steps) staged in shared memory once per workgroup, then read as broadcasts.
shared MATH_P vec4 ks_w[KS_WSMEM];
#undef WLOAD
#define WLOAD(i) ks_w[(i) - w_base]
#endif
// The parts are the workgroup's z extent.
#define K_PARTS LOCAL_Z
#if LOCAL_Z > 1
#define K_SLOTS (LOCAL_Z - 1)
#else
#define K_SLOTS 1
#endif
shared vec4 k_partial[K_SLOTS * LOCAL_X * TILE];
#endif

#if defined(SMEM_TILE)
// @include conv2d_smem.glsl
#else  // SMEM_TILE
void main() {
#if defined(SLICES_ON_X)
  int group = int(gl_GlobalInvocationID.x);
  int first_row = int(gl_GlobalInvocationID.y) * TILE_ROWS;
#elif defined(K_SPLIT)
  int group = int(gl_GlobalInvocationID.y);
  // Invocation x of workgroup w: rows w * LOCAL_X * TILE_ROWS + (x % ROW_STEP)
  // + (x / ROW_STEP) * ROW_STEP * TILE_ROWS + p * ROW_STEP (p < TILE_ROWS).
  int local_x = int(gl_LocalInvocationID.x);
  int first_row = int(gl_WorkGroupID.x) * (LOCAL_X * TILE_ROWS) + local_x % ROW_STEP +
                  (local_x / ROW_STEP) * (ROW_STEP * TILE_ROWS);
#else
  int group = int(gl_GlobalInvocationID.y);
  int first_row = int(gl_GlobalInvocationID.x) * TILE_ROWS;
#endif
#if defined(K_SPLIT)
  // Every invocation reaches the barrier: one past the end computes tile 0, stores nothing.
  bool in_range = group < SLICE_GROUPS && first_row < ROWS;
  if (!in_range) {
    group = 0;
    first_row = 0;
  }
  int k_part = int(gl_LocalInvocationID.z);
#else
  if (group >= SLICE_GROUPS || first_row >= ROWS) return;
#endif
  int out_hw = OUT_HW;

  ACC_P vec4 acc[TILE];
  for (int i = 0; i < TILE; ++i) acc[i] = vec4(0.0);

#if defined(GENERIC)
#if defined(ONE_INPUT_SLICE)
#define IN_SLICES 1
#else
#define IN_SLICES IN_S
#endif
  // Top-left input pixel of each row's window and its batch's base index.
  int in_y0[TILE_ROWS];
  int in_x0[TILE_ROWS];
  int batch_base[TILE_ROWS];
  // div_mod for the tile's first row only; each next row is the next output pixel (x, then
  // y, then the batch carry over). Rows past the end repeat the first row (never stored).
  int out_w = OUT_W;
#if defined(K_SPLIT)
  // Rows ROW_STEP apart: each its own div_mod (past the end: the first row, never stored).
  for (int p = 0; p < TILE_ROWS; ++p) {
    int r = first_row + p * ROW_STEP;
    ivec2 bp = div_mod(r < ROWS ? r : first_row, out_hw);
    ivec2 row_yx = div_mod(bp.y, out_w);
    batch_base[p] = bp.x * IN_S * IN_HW;
    in_y0[p] = row_yx.x * STRIDE_H - PAD_TOP;
    in_x0[p] = row_yx.y * STRIDE_W - PAD_LEFT;
  }
#else
  ivec2 batch_pixel = div_mod(first_row, out_hw);
  ivec2 yx = div_mod(batch_pixel.y, out_w);
  int batch = batch_pixel.x;
  int pixel = batch_pixel.y;
  for (int p = 0; p < TILE_ROWS; ++p) {
    bool real = first_row + p < ROWS;
    batch_base[p] = real ? batch * IN_S * IN_HW : batch_base[0];
    in_y0[p] = real ? yx.x * STRIDE_H - PAD_TOP : in_y0[0];
    in_x0[p] = real ? yx.y * STRIDE_W - PAD_LEFT : in_x0[0];
    bool image_end = pixel + 1 >= out_hw;
    bool row_end = yx.y + 1 >= out_w;
    yx = image_end ? ivec2(0) : row_end ? ivec2(yx.x + 1, 0) : yx + ivec2(0, 1);
    pixel = image_end ? 0 : pixel + 1;
    batch += image_end ? 1 : 0;
  }
#endif  // K_SPLIT
#if defined(K_SPLIT)
  // Step k = tap * IN_SLICES + s, from k_part on by K_PARTS; weights packed in that order.
  int in_slices = IN_SLICES;
  int steps = KERNEL_H * KERNEL_W * in_slices;
  int w_base = group * steps * TILE_SLICES * 4;
#if defined(KS_WSMEM) && KS_WSMEM > 0
  for (int i = int(gl_LocalInvocationIndex); i < KS_WSMEM; i += LOCAL_X * LOCAL_Z) {
    ks_w[i] = LOAD(weights, int(gl_WorkGroupID.y) * KS_WSMEM + i);
  }
  memoryBarrierShared();
  barrier();
#endif
  ivec2 tap_slice = div_mod(k_part, in_slices);
  for (int k = k_part; k < steps; k += K_PARTS) {
    int tap = tap_slice.x;
    int s = tap_slice.y;
    tap_slice.y += K_PARTS;
    while (tap_slice.y >= in_slices) {
      tap_slice.y -= in_slices;
      tap_slice.x += 1;
    }
    int ky = tap / KERNEL_W;
    int kx = tap - ky * KERNEL_W;
    int w_index = w_base + k * TILE_SLICES * 4;
    {
      MATH_P vec4 x[TILE_ROWS];
      for (int p = 0; p < TILE_ROWS; ++p) {
        int y = GATHER_Y(in_y0[p] + ky * DILATION_H);
        int xx = GATHER_X(in_x0[p] + kx * DILATION_W);
        bool inside = GATHER_INSIDE(y, xx);
        x[p] = inside ? GATHERED(load_input(batch_base[p] + GATHER_INDEX(y, xx) + s * IN_HW), s)
                      : vec4(0.0);
      }
#else
  int w_index = group * KERNEL_H * KERNEL_W * IN_S * TILE_SLICES * 4;
  for (int tap = 0; tap < KERNEL_H * KERNEL_W; ++tap) {
    int ky = tap / KERNEL_W;
    int kx = tap - ky * KERNEL_W;
    int base[TILE_ROWS];
    bool inside[TILE_ROWS];
#if defined(TEXTURE_INPUT)
    ivec2 texel[TILE_ROWS];
#endif
    for (int p = 0; p < TILE_ROWS; ++p) {
      int y = GATHER_Y(in_y0[p] + ky * DILATION_H);
      int x = GATHER_X(in_x0[p] + kx * DILATION_W);
      inside[p] = GATHER_INSIDE(y, x);
      base[p] = inside[p] ? batch_base[p] + GATHER_INDEX(y, x) : 0;
#if defined(TEXTURE_INPUT)
      texel[p] = ivec2(x, y);
#endif
    }
    for (int s = 0; s < IN_SLICES; ++s) {
      MATH_P vec4 x[TILE_ROWS];
      for (int p = 0; p < TILE_ROWS; ++p) {
#if defined(TEXTURE_INPUT)
        x[p] = inside[p] ? load_texel(texel[p].x, texel[p].y) : vec4(0.0);
#else
        x[p] = inside[p] ? GATHERED(load_input(base[p] + s * IN_HW), s) : vec4(0.0);
#endif
      }
#endif  // K_SPLIT
#else
  // One div_mod for the tile's first row; each next row is one pixel on, with at most one
  // carry into the image index (pixel < ROW_PIXELS). Rows past the end read the first row.
  int row_pixels = ROW_PIXELS;
  int image_stride = IN_S * IN_HW;
  ivec2 image_pixel = div_mod(first_row, row_pixels);
  int base[TILE_ROWS];
  for (int p = 0; p < TILE_ROWS; ++p) {
    base[p] = first_row + p < ROWS ? image_pixel.x * image_stride + image_pixel.y
                                   : base[0];
    int carry = image_pixel.y + 1 >= row_pixels ? 1 : 0;
    image_pixel += ivec2(carry, 1 - carry * row_pixels);
  }
  int depth_steps = DEPTH_STEPS;
  int depth_stride = DEPTH_STRIDE;
  int w_index = group * depth_steps * TILE_SLICES * 4;
  int first_step = 0;
#if defined(K_UNROLL)
#if K_UNROLL == 2
  // Two depth steps per iteration (llvmpipe keeps loop-carried values in memory
  // behind the execution mask: ../shared/research/llvmpipe.md); odd step below.
  for (; first_step + 1 < depth_steps; first_step += 2) {
    vec4 xa[TILE_ROWS];
    vec4 xb[TILE_ROWS];
    for (int p = 0; p < TILE_ROWS; ++p) {
      xa[p] = load_input(base[p]);
      xb[p] = load_input(base[p] + depth_stride);
      base[p] += 2 * depth_stride;
    }
    for (int o = 0; o < TILE_SLICES; ++o) {
      int wa = w_index + o * 4;
      int wb = wa + TILE_SLICES * 4;
      vec4 a0 = LOAD(weights, wa), a1 = LOAD(weights, wa + 1);
      vec4 a2 = LOAD(weights, wa + 2), a3 = LOAD(weights, wa + 3);
      vec4 b0 = LOAD(weights, wb), b1 = LOAD(weights, wb + 1);
      vec4 b2 = LOAD(weights, wb + 2), b3 = LOAD(weights, wb + 3);
      for (int p = 0; p < TILE_ROWS; ++p) {
        acc[p * TILE_SLICES + o] += a0 * xa[p].x + a1 * xa[p].y + a2 * xa[p].z +
                                    a3 * xa[p].w + b0 * xb[p].x + b1 * xb[p].y +
                                    b2 * xb[p].z + b3 * xb[p].w;
      }
    }
    w_index += 2 * TILE_SLICES * 4;
  }
#endif
#endif
  {
    for (int s = first_step; s < depth_steps; ++s) {
      MATH_P vec4 x[TILE_ROWS];
      for (int p = 0; p < TILE_ROWS; ++p) {
        x[p] = load_input(base[p]);
        base[p] += depth_stride;
      }
#endif
#if defined(ROWS_UNROLLED)
      // Each slice written out too (llvmpipe): NIR leaves a slice loop over
      // 8 rows rolled, and acc[] indexed by its counter lives in scratch.
#define STEP_SLICE(O) if (O < TILE_SLICES) { int w_ = w_index + 4 * O;                        \
        MATH_P vec4 w0 = LOAD(weights, w_), w1 = LOAD(weights, w_ + 1);                       \
        MATH_P vec4 w2 = LOAD(weights, w_ + 2), w3 = LOAD(weights, w_ + 3);                   \
        for (int p = 0; p < TILE_ROWS; ++p) acc[p * TILE_SLICES + min(O, TILE_SLICES - 1)] += \
            w0 * x[p].x + w1 * x[p].y + w2 * x[p].z + w3 * x[p].w; }
      STEP_SLICE(0) STEP_SLICE(1) STEP_SLICE(2) STEP_SLICE(3)
      STEP_SLICE(4) STEP_SLICE(5) STEP_SLICE(6) STEP_SLICE(7)
      w_index += 4 * TILE_SLICES;
#else
      for (int o = 0; o < TILE_SLICES; ++o) {
        MATH_P vec4 w0 = WLOAD(w_index), w1 = WLOAD(w_index + 1);
        MATH_P vec4 w2 = WLOAD(w_index + 2), w3 = WLOAD(w_index + 3);
        w_index += 4;
        for (int p = 0; p < TILE_ROWS; ++p) ACC_STEP(acc[p * TILE_SLICES + o], x[p]);
      }
#endif
    }
  }

#if defined(K_SPLIT)
  // The other parts' sums into part 0's registers (barrier() at main's top level: GLSL ES 3.10).
  int slot = int(gl_LocalInvocationID.x);
  if (k_part > 0) {
    for (int i = 0; i < TILE; ++i) {
      k_partial[((k_part - 1) * LOCAL_X + slot) * TILE + i] = acc[i];
    }
  }
  memoryBarrierShared();
  barrier();
  if (k_part != 0 || !in_range) return;
  for (int part = 1; part < K_PARTS; ++part) {
    for (int i = 0; i < TILE; ++i) acc[i] += k_partial[((part - 1) * LOCAL_X + slot) * TILE + i];
  }
#endif

  // The uniforms the stores need are read before the first store: after it the compiler
  // must assume the block could have changed and would read it again for every store.
  int rows = ROWS;
  int out_s = OUT_S;
  int out_c = OUT_C;
  vec4 b[TILE_SLICES];
  for (int o = 0; o < TILE_SLICES; ++o) {
    b[o] = LOAD(bias, min(group * TILE_SLICES + o, out_s - 1));
  }
  ivec2 out_pixel = div_mod(first_row, out_hw);  // then one row at a time
#if defined(ROWS_UNROLLED) && ROW_STEP == 1
  // Each row written out (llvmpipe: NIR leaves this loop rolled from ~24 accumulators on).
#define STORE_AT(P, O) if (O < TILE_SLICES && group * TILE_SLICES + O < out_s) {            \
    int slice = group * TILE_SLICES + O, index = row_index + slice * out_hw;               \
    int o_ = min(O, TILE_SLICES - 1);                                                         \
    STORE(out0, index, zero_padded(EPILOGUE(activate(acc[min(P, TILE_ROWS - 1) * TILE_SLICES + o_] \
                                                     + b[o_]), index, slice), slice, out_c)); }
#define STORE_ROW(P) if (P < TILE_ROWS && first_row + P < rows) {                            \
    int row_index = out_pixel.x * out_s * out_hw + out_pixel.y;                              \
    int carry = out_pixel.y + 1 >= out_hw ? 1 : 0;                                            \
    out_pixel += ivec2(carry, 1 - carry * out_hw);                                            \
    STORE_AT(P, 0) STORE_AT(P, 1) STORE_AT(P, 2) STORE_AT(P, 3)                               \
    STORE_AT(P, 4) STORE_AT(P, 5) STORE_AT(P, 6) STORE_AT(P, 7) }
  STORE_ROW(0) STORE_ROW(1) STORE_ROW(2) STORE_ROW(3) STORE_ROW(4) STORE_ROW(5) STORE_ROW(6)
  STORE_ROW(7) STORE_ROW(8) STORE_ROW(9) STORE_ROW(10) STORE_ROW(11) STORE_ROW(12) STORE_ROW(13)
  STORE_ROW(14) STORE_ROW(15)
#else
  for (int p = 0; p < TILE_ROWS; ++p) {
    int r = first_row + p * ROW_STEP;
    if (r >= rows) break;
#if ROW_STEP > 1
    out_pixel = div_mod(r, out_hw);
#endif
    int row_index = out_pixel.x * out_s * out_hw + out_pixel.y;
    int carry = out_pixel.y + 1 >= out_hw ? 1 : 0;
    out_pixel += ivec2(carry, 1 - carry * out_hw);
    for (int o = 0; o < TILE_SLICES; ++o) {
      int slice = group * TILE_SLICES + o;
      if (slice >= out_s) break;
      int index = row_index + slice * out_hw;
      STORE(out0, index, zero_padded(EPILOGUE(activate(acc[p * TILE_SLICES + o] + b[o]),
                                              index, slice), slice, out_c));
    }
  }
#endif
}
#endif  // SMEM_TILE
