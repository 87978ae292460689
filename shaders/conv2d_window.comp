#version 310 es
// A general convolution of a large window over few channels, with the input
// window of a whole workgroup staged in shared memory once: style
// transfer's 9x9 first and last layers (3 -> 8 and 8 -> 3 channels at
// 384x384), the two largest dispatches of that model on an H100
// (docs/perf/log.md, "style2, session 11").
//
// conv2d.comp GENERIC gathers every tap of every output pixel from the
// tensor: for a 9x9 window that is 81 loads (and as many coordinate
// computations, with a mirror remap each) per pixel and input slice, and a
// 3-channel tensor fills only 3 of a vec4's lanes on either side. Here a
// workgroup of LOCAL_X x LOCAL_Y invocations computes an output block of
// (LOCAL_X * PX) x LOCAL_Y pixels (invocation x takes the pixels x + p *
// LOCAL_X, p < PX, so that a warp's shared-memory reads are contiguous); it
// first copies the block's input window, (LOCAL_Y + KERNEL_H - 1) x
// (LOCAL_X * PX + KERNEL_W - 1) pixels of every input slice, into shared
// memory, with the padding (zeros, or the mirror image of MIRROR_PAD when
// GATHER_MIRROR is 0 or 1) resolved there, so the tap loop has neither
// coordinate arithmetic nor bounds tests. The arithmetic skips the lanes
// that are not there: IN_C's last slice multiplies only its real input
// lanes, and with one output slice of OUT_LANES < 4 channels the
// accumulators are vecOUT_LANES, so 3 -> 8 and 8 -> 3 do 3/4 of a vec4
// formulation's multiply-adds (NVIDIA's and llvmpipe's ALUs are scalar per
// lane: a vec3 is 3 of them).
//
// Stride and dilation 1 only; every output slice in one invocation.
// Weights are conv2d.comp's packing, in groups of TILE_SLICES output slices:
// [group][tap][input slice][TILE_SLICES][4 input lanes] vec4 of 4 output
// channels.
// Bindings as conv2d.comp: 0 = output, 1 = input, 2 = weights, 3 = bias,
// 4 = the epilogue's operand (EPILOGUE_IN).
//
// BHWC_INPUT: the input is a partition input of IN_C <= 4 channels read
// from its BHWC upload staging (delegate/passes/upload_fusion.h), as
// conv2d.comp's.
// GATHER_UPSAMPLE=F: the input is the source of a nearest-neighbour resize
// by F that only this convolution read (delegate/passes/upsample_fusion.h;
// conv2d.comp's): IN_H / IN_W the resized map's, IN_HW the source's.
// PROLOGUE_IN: an instance norm's apply step done on the input as it is
// staged (delegate/passes/norm_prologue.h; conv2d.comp's, bindings 4 and 5).
// Chosen by delegate/passes/window_conv.h after the other fusions.
//
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1
// @axis - EPILOGUE_IN PROLOGUE_IN
// @axis - BHWC_INPUT
// @axis - ROW_REUSE
// @axis - SLICE_STEPS
// @axis - PACK3 WEIGHTS_LITERAL
// @axis - HALF_SMEM
// @const LOCAL_X=16 LOCAL_Y=8 LOCAL_Z=1 PX=2 KERNEL_H=9 KERNEL_W=9
// @const IN_SLICES=2 IN_C=8 OUT_SLICES=1 OUT_LANES=3 TILE_SLICES=1 GATHER_MIRROR=0
// @const MATH_P=highp ACC_P=highp EPILOGUE(x,index,slice)=(x) INPUT_QUANT(x)=(x)
// @const PROLOGUE(x,slice)=(x) GATHER_UPSAMPLE=1 FMA_CHAIN=0 BLOCK_STEPS=1
// @const WEIGHT_VALUES=vec4(0.0)
// @uniform IN_H=16 IN_W=16 IN_HW=256 OUT_H=16 OUT_W=16 OUT_HW=256 OUT_C=3
// @uniform PAD_TOP=4 PAD_LEFT=4

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
#if defined(BHWC_INPUT)
FLOATS_IN(in0, 1, In0);
#if !defined(INPUT_QUANT)
#define INPUT_QUANT(x) (x)
#endif
// slice_base: the slice's first vec4 (PHWC4); image_base: the image's first
// pixel (BHWC); pixel: y * IN_W + x.
vec4 load_input(int slice_base, int image_base, int pixel) {
  vec4 v = vec4(0.0);
  for (int k = 0; k < IN_C; ++k) v[k] = LOAD_FLOAT(in0, (image_base + pixel) * IN_C + k);
  return INPUT_QUANT(v);
}
#else
TENSOR_IN(in0, 1, In0);
vec4 load_input(int slice_base, int image_base, int pixel) {
  return LOAD(in0, slice_base + pixel);
}
#endif
TENSOR_IN(weights, 2, Weights);
TENSOR_IN(bias, 3, Bias);
#if defined(EPILOGUE_IN)
TENSOR_IN(epilogue_in, 4, EpilogueIn);
#endif
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
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
#if !defined(MATH_P)
#define MATH_P highp
#endif
#if !defined(ACC_P)
#define ACC_P highp
#endif

// The accumulators' type: the output's real lanes when it has one slice.
#if OUT_SLICES == 1 && OUT_LANES == 1
#define ACC_T float
#define LANES(v) (v).x
#define TO_VEC4(a) vec4((a), 0.0, 0.0, 0.0)
#elif OUT_SLICES == 1 && OUT_LANES == 2
#define ACC_T vec2
#define LANES(v) (v).xy
#define TO_VEC4(a) vec4((a), 0.0, 0.0)
#elif OUT_SLICES == 1 && OUT_LANES == 3
#define ACC_T vec3
#define LANES(v) (v).xyz
#define TO_VEC4(a) vec4((a), 0.0)
#else
#define ACC_T vec4
#define LANES(v) (v)
#define TO_VEC4(a) (a)
#endif

#if GATHER_UPSAMPLE > 1
#define GATHER_INDEX(y, x) \
  (((y) / GATHER_UPSAMPLE) * (IN_W / GATHER_UPSAMPLE) + (x) / GATHER_UPSAMPLE)
#else
#define GATHER_INDEX(y, x) ((y) * IN_W + (x))
#endif

#define BLOCK_W (LOCAL_X * PX)
#define WINDOW_H (LOCAL_Y + KERNEL_H - 1)
#define WINDOW_W (BLOCK_W + KERNEL_W - 1)
#define WINDOW_PIXELS (WINDOW_H * WINDOW_W)
// The window's vec4s, and how many each invocation stages.
// SLICE_STEPS (DeviceProfile::window_conv_slice_steps): shared memory holds
// one input slice's window at a time, staged and consumed in IN_SLICES
// steps written out in main (barrier() only in straight code in GLSL ES
// 3.10), the next slice's loads issued before this slice's taps; so blocks
// of 4-8 pixels per invocation fit 48 KB with 256 invocations.
#if !defined(BLOCK_STEPS)
#define BLOCK_STEPS 1
#endif
#if BLOCK_STEPS > 4 || (BLOCK_STEPS > 1 && defined(SLICE_STEPS))
#error BLOCK_STEPS: at most 4, and not with SLICE_STEPS
#endif
#if defined(SLICE_STEPS)
#if IN_SLICES > 8
#error SLICE_STEPS writes out at most 8 slice steps
#endif
#define WINDOW_SLICES 1
#else
#define WINDOW_SLICES IN_SLICES
#endif
#define STAGE_TOTAL (WINDOW_SLICES * WINDOW_PIXELS)
#define STAGE_STEPS ((STAGE_TOTAL + LOCAL_X * LOCAL_Y - 1) / (LOCAL_X * LOCAL_Y))
// HALF_SMEM (DeviceProfile::window_conv_half_smem; fp16 storage, whose
// tensors and weights are halves already): window and weights staged as
// packed halves, half the shared-memory bytes per read.
#if defined(HALF_SMEM)
#define SMEM_T uvec2
#define TO_SMEM(v) uvec2(packHalf2x16((v).xy), packHalf2x16((v).zw))
#define FROM_SMEM(u) vec4(unpackHalf2x16((u).x), unpackHalf2x16((u).y))
#else
#define SMEM_T MATH_P vec4
#define TO_SMEM(v) (v)
#define FROM_SMEM(u) (u)
#endif
#if defined(ROW_REUSE)
// ROW_REUSE (DeviceProfile::window_conv_row_reuse): invocation x takes the
// PX consecutive pixels x * PX + p; per (ky, slice) it loads the window row
// of PX + KERNEL_W - 1 vec4s into registers once and slides it over the
// KERNEL_W taps, and every weight is staged in shared memory (broadcast
// reads): bench/peak_probe.py's fastest form ("peak, session 11"; measured
// in docs/perf/log.md "gap, session 12"). Columns are skewed by c / 8 so
// that invocations PX columns apart read distinct banks; an odd PX needs no
// skew (with it, PX 3's lanes met 2-way conflicts: 0, 3, 6, 10, 13, 16 ...).
#if PX % 2 == 1
#define SKEW(c) (c)
#else
#define SKEW(c) ((c) + (c) / 8)
#endif
#define WINDOW_WP (SKEW(WINDOW_W - 1) + 1)
#define WINDOW_AT(s, wy, wx) (((s) * WINDOW_H + (wy)) * WINDOW_WP + SKEW(wx))
#define WEIGHT_VEC4S \
  ((OUT_SLICES + TILE_SLICES - 1) / TILE_SLICES * TILE_SLICES * KERNEL_H * KERNEL_W * IN_SLICES * 4)
shared SMEM_T window[WINDOW_SLICES * WINDOW_H * WINDOW_WP];
// PACK3 (DeviceProfile::window_conv_pack3; one output slice of 3 lanes): a
// tap's 4 weight vec4s hold 12 weights, staged as 3 vec4s, so each tap
// reads 3/4 of the shared-memory bytes (those reads bound the kernel while
// PX is small: 4 broadcast vec4 reads per 2 x 12 products).
#if defined(WEIGHTS_LITERAL)
// WEIGHTS_LITERAL (DeviceProfile::window_conv_literal_weights): the constant
// weights written into the program (WEIGHT_VALUES: the initializer, from
// delegate/kernels/literal_weights.h); with the taps and the window rows
// written out every index is a constant, so each weight can be its FMA's
// immediate operand instead of a shared-memory broadcast read.
const highp vec4 weight_literal[] = vec4[](WEIGHT_VALUES);
#define WEIGHT(i) weight_literal[min((i), weight_literal.length() - 1)]
#elif defined(PACK3) && OUT_SLICES == 1 && OUT_LANES == 3
#define PACKED_WEIGHTS
shared SMEM_T weight_tile[WEIGHT_VEC4S / 4 * 3];
#else
shared SMEM_T weight_tile[WEIGHT_VEC4S];
#endif
#if !defined(WEIGHTS_LITERAL)
#define WEIGHT(i) FROM_SMEM(weight_tile[i])
#endif
#else
#define WINDOW_AT(s, wy, wx) ((s) * WINDOW_PIXELS + (wy) * WINDOW_W + (wx))
shared SMEM_T window[WINDOW_SLICES * WINDOW_PIXELS];
#define WEIGHT(i) LOAD(weights, i)
#endif

// A coordinate of the padded input into the input. Mirrored: one
// reflection suffices for every output pixel (MIRROR_PAD limits its
// paddings to that); the clamp only keeps the window pixels of outputs past
// the edge (computed, never stored) inside the tensor.
int source_coord(int v, int n) {
#if GATHER_MIRROR >= 0
  if (v < 0) v = -v - GATHER_MIRROR;
  if (v >= n) v = 2 * n - 2 + GATHER_MIRROR - v;
#endif
  return clamp(v, 0, n - 1);
}

ACC_P ACC_T acc[PX * OUT_SLICES];
MATH_P vec4 staged[STAGE_STEPS];

// Loads the window of input slices first.. (WINDOW_SLICES of them) into
// `staged`: every invocation copies every (LOCAL_X * LOCAL_Y)-th pixel, all
// of its loads issued before the first store. A loop of load, store,
// load... made each invocation wait for its loads STAGE_STEPS times in a
// row; with @3's image read from host memory every workgroup's second round
// trip queued behind all workgroups' first, so none could start its taps
// before the bus had carried nearly the whole image (H100: @3 71 us, 40
// with the image in device memory; docs/perf/log.md, "style3, session 14").
void load_window(int first, int batch, int block_y, int block_x, int invocation) {
  int top = block_y - PAD_TOP;
  int left = block_x - PAD_LEFT;
  int batch_base = batch * IN_SLICES * IN_HW;
  for (int j = 0; j < STAGE_STEPS; ++j) {
    int i = invocation + j * LOCAL_X * LOCAL_Y;
    int s = i / WINDOW_PIXELS;
    int pixel = i - s * WINDOW_PIXELS;
    int wy = pixel / WINDOW_W;
    int wx = pixel - wy * WINDOW_W;
    int y = source_coord(top + wy, IN_H);
    int x = source_coord(left + wx, IN_W);
    bool inside = GATHER_MIRROR >= 0 ||
                  (top + wy >= 0 && top + wy < IN_H && left + wx >= 0 && left + wx < IN_W);
    staged[j] = vec4(0.0);
    if (i < STAGE_TOTAL && inside) {
      vec4 v = load_input(batch_base + (first + s) * IN_HW, batch * IN_HW, GATHER_INDEX(y, x));
      staged[j] = GATHERED(v, first + s);
    }
  }
}

void store_window(int invocation) {
  for (int j = 0; j < STAGE_STEPS; ++j) {
    int i = invocation + j * LOCAL_X * LOCAL_Y;
    int s = i / WINDOW_PIXELS;
    int pixel = i - s * WINDOW_PIXELS;
    int wy = pixel / WINDOW_W;
    if (i < STAGE_TOTAL) window[WINDOW_AT(s, wy, pixel - wy * WINDOW_W)] = TO_SMEM(staged[j]);
  }
}

// Output slice o's weights of one tap and input slice (vec4 index wi):
// w0..w3, the weights of input lanes 0..3.
#if defined(PACKED_WEIGHTS)
#define LOAD_WEIGHTS(wi)                               \
  MATH_P vec4 q0 = WEIGHT((wi) / 4 * 3);               \
  MATH_P vec4 q1 = WEIGHT((wi) / 4 * 3 + 1);           \
  MATH_P vec4 q2 = WEIGHT((wi) / 4 * 3 + 2);           \
  MATH_P ACC_T w0 = q0.xyz;                           \
  MATH_P ACC_T w1 = vec3(q0.w, q1.xy);                \
  MATH_P ACC_T w2 = vec3(q1.zw, q2.x);                \
  MATH_P ACC_T w3 = q2.yzw;
#else
#define LOAD_WEIGHTS(wi)                               \
  MATH_P ACC_T w0 = LANES(WEIGHT(wi));                 \
  MATH_P ACC_T w1 = LANES(WEIGHT((wi) + 1));           \
  MATH_P ACC_T w2 = LANES(WEIGHT((wi) + 2));           \
  MATH_P ACC_T w3 = LANES(WEIGHT((wi) + 3));
#endif
#define WEIGHT_INDEX(o, tap, s) \
  (((((o) / TILE_SLICES) * KERNEL_H * KERNEL_W + (tap)) * IN_SLICES + (s)) * TILE_SLICES + \
    (o) % TILE_SLICES) * 4
#if defined(FMA_CHAIN) && FMA_CHAIN
// Every product fused into the accumulator (one FMA each): the sum-then-add
// form costs a multiply and an add more per 3-4 products. Only where ACC_P is
// MATH_P (the kernel's choice), else each product would change precision on
// its way in.
#define PRODUCTS(acc_p, xv)                           \
  {                                                   \
    ACC_P ACC_T a = acc_p;                            \
    a += w0 * (xv).x;                                 \
    if (lanes > 1) a += w1 * (xv).y;                  \
    if (lanes > 2) a += w2 * (xv).z;                  \
    if (lanes > 3) a += w3 * (xv).w;                  \
    acc_p = a;                                        \
  }
#else
#define PRODUCTS(acc_p, xv)                           \
  {                                                   \
    MATH_P ACC_T sum = w0 * (xv).x;                   \
    if (lanes > 1) sum += w1 * (xv).y;                \
    if (lanes > 2) sum += w2 * (xv).z;                \
    if (lanes > 3) sum += w3 * (xv).w;                \
    acc_p += sum;                                     \
  }
#endif

#define ROW_N (PX + KERNEL_W - 1)
#if defined(ROW_REUSE) && ROW_N <= 16 && KERNEL_W <= 9 && PX <= 8 && OUT_SLICES <= 4
// The taps written out: every index into the row and accumulator arrays a
// constant, whatever the compiler's unrolling budget. Loops over the taps
// and pixels left the arrays to the compiler; at 4-8 pixels per invocation
// NVIDIA's ran 1.2-2.6x slower than at 2 (docs/perf/log.md, "peak4, session
// 15": the mark of arrays moved to local memory).
#define UNROLLED_TAPS
#define ROW_AT(j) row[min((j), ROW_N - 1)]
#define ACC_AT(p, o) acc[(p) * OUT_SLICES + (o)]
#define ROW(j) \
  if ((j) < ROW_N) ROW_AT(j) = FROM_SMEM(window[WINDOW_AT(ws, local_y + ky, local_x * PX + (j))]);
// Only the steps that exist reach the compiler (PIXELS_2: pixels 0 and 1;
// the row loads are few, guarded): written out to the largest counts with
// dead steps folded, @3's program was 4x larger after the preprocessor.
#define PIX(kx, o, p) PRODUCTS(ACC_AT(p, o), ROW_AT((p) + (kx)))
#define PIXELS_1(kx, o) PIX(kx, o, 0)
#define PIXELS_2(kx, o) PIXELS_1(kx, o) PIX(kx, o, 1)
#define PIXELS_3(kx, o) PIXELS_2(kx, o) PIX(kx, o, 2)
#define PIXELS_4(kx, o) PIXELS_3(kx, o) PIX(kx, o, 3)
#define PIXELS_5(kx, o) PIXELS_4(kx, o) PIX(kx, o, 4)
#define PIXELS_6(kx, o) PIXELS_5(kx, o) PIX(kx, o, 5)
#define PIXELS_7(kx, o) PIXELS_6(kx, o) PIX(kx, o, 6)
#define PIXELS_8(kx, o) PIXELS_7(kx, o) PIX(kx, o, 7)
// (GLSL ES has no token pasting: the counts are chosen by #if.)
#if PX == 1
#define PIXELS(kx, o) PIXELS_1(kx, o)
#elif PX == 2
#define PIXELS(kx, o) PIXELS_2(kx, o)
#elif PX == 3
#define PIXELS(kx, o) PIXELS_3(kx, o)
#elif PX == 4
#define PIXELS(kx, o) PIXELS_4(kx, o)
#elif PX == 5
#define PIXELS(kx, o) PIXELS_5(kx, o)
#elif PX == 6
#define PIXELS(kx, o) PIXELS_6(kx, o)
#elif PX == 7
#define PIXELS(kx, o) PIXELS_7(kx, o)
#else
#define PIXELS(kx, o) PIXELS_8(kx, o)
#endif
#define OSL(kx, o)                                         \
  {                                                        \
    LOAD_WEIGHTS(WEIGHT_INDEX(o, ky * KERNEL_W + (kx), s)) \
    PIXELS(kx, o)                                          \
  }
#define OSLICES_1(kx) OSL(kx, 0)
#define OSLICES_2(kx) OSLICES_1(kx) OSL(kx, 1)
#define OSLICES_3(kx) OSLICES_2(kx) OSL(kx, 2)
#define OSLICES_4(kx) OSLICES_3(kx) OSL(kx, 3)
#if OUT_SLICES == 1
#define TAP(kx) OSLICES_1(kx)
#elif OUT_SLICES == 2
#define TAP(kx) OSLICES_2(kx)
#elif OUT_SLICES == 3
#define TAP(kx) OSLICES_3(kx)
#else
#define TAP(kx) OSLICES_4(kx)
#endif
// One window row (ky) of every staged slice.
#define KY_ROW                                                    \
  for (int ws = 0; ws < WINDOW_SLICES; ++ws) {                    \
    int s = first + ws;                                           \
    int lanes = min(4, IN_C - 4 * s);                             \
    MATH_P vec4 row[ROW_N];                                       \
    ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7)       \
    ROW(8) ROW(9) ROW(10) ROW(11) ROW(12) ROW(13) ROW(14) ROW(15) \
    TAPS                                                          \
  }
#define TAPS_1 TAP(0)
#define TAPS_2 TAPS_1 TAP(1)
#define TAPS_3 TAPS_2 TAP(2)
#define TAPS_4 TAPS_3 TAP(3)
#define TAPS_5 TAPS_4 TAP(4)
#define TAPS_6 TAPS_5 TAP(5)
#define TAPS_7 TAPS_6 TAP(6)
#define TAPS_8 TAPS_7 TAP(7)
#define TAPS_9 TAPS_8 TAP(8)
#if KERNEL_W == 1
#define TAPS TAPS_1
#elif KERNEL_W == 2
#define TAPS TAPS_2
#elif KERNEL_W == 3
#define TAPS TAPS_3
#elif KERNEL_W == 4
#define TAPS TAPS_4
#elif KERNEL_W == 5
#define TAPS TAPS_5
#elif KERNEL_W == 6
#define TAPS TAPS_6
#elif KERNEL_W == 7
#define TAPS TAPS_7
#elif KERNEL_W == 8
#define TAPS TAPS_8
#else
#define TAPS TAPS_9
#endif
#endif

// The taps of input slices first.. (WINDOW_SLICES of them, in `window`).
void accumulate(int first, int local_y, int local_x) {
#if defined(UNROLLED_TAPS) && defined(WEIGHTS_LITERAL)
  // The rows written out too: every weight index a constant.
#if KERNEL_H > 9
#error WEIGHTS_LITERAL writes out at most 9 window rows
#endif
#define KY(n) if ((n) < KERNEL_H) { const int ky = (n); KY_ROW }
  KY(0) KY(1) KY(2) KY(3) KY(4) KY(5) KY(6) KY(7) KY(8)
#else
  for (int ky = 0; ky < KERNEL_H; ++ky) {
#if defined(UNROLLED_TAPS)
    KY_ROW
#else
#if defined(ROW_REUSE)
    for (int ws = 0; ws < WINDOW_SLICES; ++ws) {
      int s = first + ws;
      MATH_P vec4 row[ROW_N];
      for (int j = 0; j < ROW_N; ++j) {
        row[j] = FROM_SMEM(window[WINDOW_AT(ws, local_y + ky, local_x * PX + j)]);
      }
      for (int kx = 0; kx < KERNEL_W; ++kx) {
        int lanes = min(4, IN_C - 4 * s);
        MATH_P vec4 x[PX];
        for (int p = 0; p < PX; ++p) x[p] = row[p + kx];
#else
    for (int kx = 0; kx < KERNEL_W; ++kx) {
      for (int ws = 0; ws < WINDOW_SLICES; ++ws) {
        int s = first + ws;
        // The real lanes of this input slice (compile-time once unrolled).
        int lanes = min(4, IN_C - 4 * s);
        int row = (ws * WINDOW_H + local_y + ky) * WINDOW_W + local_x + kx;
        MATH_P vec4 x[PX];
        for (int p = 0; p < PX; ++p) x[p] = FROM_SMEM(window[row + p * LOCAL_X]);
#endif
        for (int o = 0; o < OUT_SLICES; ++o) {
          LOAD_WEIGHTS(WEIGHT_INDEX(o, ky * KERNEL_W + kx, s))
          for (int p = 0; p < PX; ++p) PRODUCTS(acc[p * OUT_SLICES + o], x[p])
        }
      }
    }
#endif
  }
#endif
}

// The block's outputs: bias, activation, epilogue.
void store_outputs(int batch, int block_y, int block_x, int local_y, int local_x) {
  int out_w = OUT_W;
  int out_hw = OUT_HW;
  int out_c = OUT_C;
  int oy = block_y + local_y;
  if (oy >= OUT_H) return;
  for (int p = 0; p < PX; ++p) {
#if defined(ROW_REUSE)
    int ox = block_x + local_x * PX + p;
#else
    int ox = block_x + local_x + p * LOCAL_X;
#endif
    if (ox >= out_w) break;
    for (int o = 0; o < OUT_SLICES; ++o) {
      int index = (batch * OUT_SLICES + o) * out_hw + oy * out_w + ox;
      STORE(out0, index,
            zero_padded(EPILOGUE(activate(TO_VEC4(acc[p * OUT_SLICES + o]) + LOAD(bias, o)),
                                 index, o), o, out_c));
    }
  }
}

void main() {
  int batch = int(gl_WorkGroupID.z);
  // BLOCK_STEPS blocks stacked along y per workgroup (1 unless written).
  int block_y = int(gl_WorkGroupID.y) * LOCAL_Y * BLOCK_STEPS;
  int block_x = int(gl_WorkGroupID.x) * BLOCK_W;
  int local_x = int(gl_LocalInvocationID.x);
  int local_y = int(gl_LocalInvocationID.y);
  int invocation = local_y * LOCAL_X + local_x;

  load_window(0, batch, block_y, block_x, invocation);
  store_window(invocation);
#if defined(PACKED_WEIGHTS)
  for (int q = invocation; q < WEIGHT_VEC4S / 4; q += LOCAL_X * LOCAL_Y) {
    vec4 a = LOAD(weights, 4 * q);
    vec4 b = LOAD(weights, 4 * q + 1);
    vec4 c = LOAD(weights, 4 * q + 2);
    vec4 d = LOAD(weights, 4 * q + 3);
    weight_tile[3 * q] = TO_SMEM(vec4(a.xyz, b.x));
    weight_tile[3 * q + 1] = TO_SMEM(vec4(b.yz, c.xy));
    weight_tile[3 * q + 2] = TO_SMEM(vec4(c.z, d.xyz));
  }
#elif defined(ROW_REUSE) && !defined(WEIGHTS_LITERAL)
  for (int i = invocation; i < WEIGHT_VEC4S; i += LOCAL_X * LOCAL_Y) {
    weight_tile[i] = TO_SMEM(LOAD(weights, i));
  }
#endif
  memoryBarrierShared();
  barrier();

  for (int i = 0; i < PX * OUT_SLICES; ++i) acc[i] = ACC_T(0.0);
#if defined(SLICE_STEPS)
  // Step k: slice k's loads in flight while slice k - 1's taps run.
#define SLICE_STEP(k)                            \
  load_window(k, batch, block_y, block_x, invocation); \
  accumulate(k - 1, local_y, local_x);           \
  barrier();                                     \
  store_window(invocation);                            \
  memoryBarrierShared();                         \
  barrier();
#if IN_SLICES > 1
  SLICE_STEP(1)
#endif
#if IN_SLICES > 2
  SLICE_STEP(2)
#endif
#if IN_SLICES > 3
  SLICE_STEP(3)
#endif
#if IN_SLICES > 4
  SLICE_STEP(4)
#endif
#if IN_SLICES > 5
  SLICE_STEP(5)
#endif
#if IN_SLICES > 6
  SLICE_STEP(6)
#endif
#if IN_SLICES > 7
  SLICE_STEP(7)
#endif
  accumulate(IN_SLICES - 1, local_y, local_x);
  store_outputs(batch, block_y, block_x, local_y, local_x);
#else
  // BLOCK_STEPS (DeviceProfile::window_conv_block_steps): block k's window
  // loads in flight while block k - 1's taps run, so that a workgroup's
  // later reads overlap its arithmetic (@3 reads its image from host
  // memory: docs/perf/log.md, "style3, session 14").
#define BLOCK_STEP(k)                                               \
  load_window(0, batch, block_y + (k) * LOCAL_Y, block_x, invocation);    \
  accumulate(0, local_y, local_x);                                  \
  store_outputs(batch, block_y + ((k) - 1) * LOCAL_Y, block_x, local_y, local_x); \
  for (int i = 0; i < PX * OUT_SLICES; ++i) acc[i] = ACC_T(0.0);    \
  barrier();                                                        \
  store_window(invocation);                                               \
  memoryBarrierShared();                                            \
  barrier();
#if BLOCK_STEPS > 1
  BLOCK_STEP(1)
#endif
#if BLOCK_STEPS > 2
  BLOCK_STEP(2)
#endif
#if BLOCK_STEPS > 3
  BLOCK_STEP(3)
#endif
  accumulate(0, local_y, local_x);
  store_outputs(batch, block_y + (BLOCK_STEPS - 1) * LOCAL_Y, block_x, local_y, local_x);
#endif
}
