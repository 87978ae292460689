#version 310 es
// GEMM for many-core GPUs (NVIDIA and other real GPUs; chosen by
// DeviceProfile::shared_memory_gemm, delegate/device/device_tuning.cc): 1x1
// CONV_2D (stride 1, no padding) and FULLY_CONNECTED, read exactly as
// conv2d.comp's default path reads them. conv2d.comp gives each invocation a
// whole output tile and sums the whole depth in it; MobileNet-sized GEMMs
// (196 x 512 x 512) are too small for that to fill a GPU, so here the depth
// is split across a workgroup and the partial sums meet in shared memory.
//
// The output is a matrix of ROWS rows (output pixels over all batches) by
// OUT_S channel slices; the depth (K) is DEPTH_STEPS input vec4s. Row r
// reads depth step d at (r / ROW_PIXELS) * IN_BATCH_STRIDE + r % ROW_PIXELS
// + d * DEPTH_STRIDE.
//
// Default (tiled): a workgroup computes WG_ROWS rows x WG_SLICES slices with
// LOCAL_X x K_PARTS invocations. Invocation (tx, part) accumulates
// TILE_ROWS x TILE_SLICES vec4s over the depth steps d with d % K_PARTS ==
// part (FMA_CHAIN: one FMA per product, where ACC_P is MATH_P); its rows
// are tx % THREADS_R + i * THREADS_R and its slices tx / THREADS_R + j *
// THREADS_S: neighbouring invocations load and store neighbouring pixels.
// Weights (binding 2): [slice group][step][WG_SLICES][4] vec4 (vec4 k of a
// slice: input lane k's weights for its 4 output channels), zero-padded.
//
// SPLIT_K (few rows: FC layers, a classifier's logits): invocation (slice,
// part) sums steps d with d % K_PARTS == part for TILE_ROWS rows. Weights:
// [step][WEIGHT_SLICES][4] vec4, so neighbouring invocations read
// neighbouring weights.
//
// Staging K chunks through shared memory (the textbook GEMM) would need a
// barrier() inside the depth loop, which GLSL ES 3.10 forbids (barrier only
// in main, outside control flow, before any return); on the H200 it was no
// faster than these direct loads anyway (docs/perf/log.md, "NVIDIA GEMM").
// So the only barrier is the one before the partial sums are combined.
//
// MEAN_PROLOGUE: see shaders/gemm_splitk.glsl.
//
// DW_PROLOGUE_* (tiled only; delegate/passes/dw_fusion.h): the input is not the
// GEMM's A matrix but the input of a DW_KH x DW_KW depthwise convolution
// (multiplier 1, any stride, padding and dilation DW_DIL_H x DW_DIL_W)
// whose output A is. The workgroup first computes
// the A rows it needs, WG_ROWS x DEPTH_STEPS vec4s, into `scratch` (layout
// [step][row], so the GEMM's neighbouring invocations read neighbouring
// vec4s), then one barrier, then the GEMM reads A from there. Every
// workgroup along the slice axis recomputes its rows' depthwise: that is
// the price of the saved dispatch and tensor. The suffix is the depthwise's
// own activation (NONE, RELU, RELU6, RELU_N1_TO_1), apart from the GEMM's
// ACT_*. Its weights ([slice][tap] vec4, as depthwise_conv2d.comp) and bias
// follow the other inputs. Padded channel lanes stay zero without a mask:
// the input's padded lanes are zero (every kernel stores zero_padded) and
// so are the depthwise weights and bias there. The partial sums of the K
// parts reuse the A tile's memory after a second barrier.
//
// Prologues of delegate/passes/prologue_fusion.h. PROLOGUE_IN (tiled): A
// vec4 = PROLOGUE_CHAIN(PROLOGUE(x, index, slice), index, slice) of the
// loaded x (index: A's PHWC4 index, slice: depth step), reading prologue_in
// (and prologue_in2) at slice or index; steps keep padded lanes finite.
// RESIZE_PROLOGUE (tiled): A is a bilinear resize of binding 1 (RS_IN_H x
// RS_IN_W, resize.comp's rules): four weighted loads, the taps found once.
// FC_PROLOGUE (split-K, one row): A is another one-row GEMM's output
// (FC1_* shapes and bindings), computed first by every workgroup: partial
// sums per (hidden slice, part) in `scratch`, then summed into `mean_a`.
// FC1_MEAN: that GEMM's input is the mean of binding 1's FC1_MEAN_PIXELS-
// pixel map, averaged into `fc_x` first (neighbouring invocations on
// neighbouring pixels).
//
// SOFTMAX_EPILOGUE: see shaders/gemm_splitk.glsl.
//
// Shapes are @uniform values (written once at init): layers differing only in size share a program; tiles are constants.
// Bindings: 0 = output, 1 = input, 2 = packed weights, 3 = bias (one vec4 per
// slice, zero-padded), 4 = EPILOGUE_IN, 5 = EPILOGUE_IN2 (ENet's PRELU alpha after its residual ADD at 4;
// delegate/passes/fusion.h), as conv2d.comp; then, with DW_PROLOGUE_* (not with EPILOGUE_IN2), the dw weights and bias.
//
// @axis - SPLIT_K DW_PROLOGUE_NONE DW_PROLOGUE_RELU DW_PROLOGUE_RELU6 DW_PROLOGUE_RELU_N1_TO_1 PROLOGUE_IN PROLOGUE_IN2 FC_PROLOGUE FC1_MEAN RESIZE_PROLOGUE
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID
// @const LOCAL_X=64 LOCAL_Y=2 LOCAL_Z=1 TILE_ROWS=2 TILE_SLICES=2
// @const THREADS_R=16 THREADS_S=4 K_PARTS=2 SHARED_VEC4=1024
// @uniform ROWS=16 OUT_S=2 DEPTH_STEPS=2 OUT_C=8 ROW_PIXELS=16
// @uniform DEPTH_STRIDE=16 IN_BATCH_STRIDE=32 OUT_HW=16 WEIGHT_SLICES=2
// @uniform DW_IN_H=8 DW_IN_W=8 DW_OUT_W=4 DW_STRIDE_H=2 DW_STRIDE_W=2
// @uniform DW_PAD_TOP=0 DW_PAD_LEFT=0
// @const DW_KH=3 DW_KW=3 DW_DIL_H=1 DW_DIL_W=1 MATH_P=mediump ACC_P=mediump
// @axis - MEAN_PROLOGUE
// @const A_VEC4=64
// @uniform MEAN_PIXELS=4 MEAN_BATCH_STRIDE=8
// @axis - EPILOGUE_IN EPILOGUE_IN2 SOFTMAX_EPILOGUE
// @const SOFTMAX_BETA=1.0 READ_WRITE_BINDING_0=5 READ_WRITE_BINDING_1=6
// @const EPILOGUE(x,index,slice)=(x) FMA_CHAIN=0
// @const DW_EPILOGUE(x)=(x)
// @const MEAN_EPILOGUE(x)=(x) SOFTMAX_OUT_EPILOGUE(x)=(x)
// @const PROLOGUE(x,index,slice)=(x) PROLOGUE_CHAIN(x,index,slice)=(x)
// @const PROLOGUE_BINDING=7 PROLOGUE_BINDING2=8
// @const FC1_DEPTH_STEPS=2 FC1_WEIGHT_SLICES=2 FC1_OUT_C=8 FC1_W_BINDING=7 FC1_B_BINDING=8
// @const FC1_ACT(x)=(x) FC1_EPILOGUE(x)=(x) FC1_MEAN_PIXELS=16
// @const RS_IN_H=2 RS_IN_W=2 RS_OUT_W=4 RS_SCALE_H=0.5 RS_SCALE_W=0.5 RS_OFFSET=0.0

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in0, 1, In0);
TENSOR_IN(weights, 2, Weights);
TENSOR_IN(bias, 3, Bias);
#if defined(EPILOGUE_IN) || defined(EPILOGUE_IN2)
TENSOR_IN(epilogue_in, 4, EpilogueIn);
#endif
#if defined(EPILOGUE_IN2)
TENSOR_IN(epilogue_in2, 5, EpilogueIn2);
#endif
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif
// MEAN_EPILOGUE(x) / SOFTMAX_OUT_EPILOGUE(x): the fused mean's / softmax's own epilogue on each
// averaged vec4 / stored probability (a quantized AVERAGE_POOL_2D's / SOFTMAX's simulator step).
#if !defined(MEAN_EPILOGUE)
#define MEAN_EPILOGUE(x) (x)
#endif
#if !defined(SOFTMAX_OUT_EPILOGUE)
#define SOFTMAX_OUT_EPILOGUE(x) (x)
#endif
// First-@axis prologue choices imply what they build on (PROLOGUE, PROLOGUE_CHAIN, FC1_ACT, FC1_EPILOGUE come too).
#if defined(PROLOGUE_IN2) && !defined(PROLOGUE_IN)
#define PROLOGUE_IN 1
#endif
#if defined(FC1_MEAN) && !defined(FC_PROLOGUE)
#define FC_PROLOGUE 1
#endif
#if defined(FC_PROLOGUE) && !defined(SPLIT_K)
#define SPLIT_K 1
#endif
#if defined(PROLOGUE_IN)
TENSOR_IN(prologue_in, PROLOGUE_BINDING, PrologueIn);
#if defined(PROLOGUE_IN2)
TENSOR_IN(prologue_in2, PROLOGUE_BINDING2, PrologueIn2);
#endif
#endif
#if defined(FC_PROLOGUE)
TENSOR_IN(fc1_weights, FC1_W_BINDING, Fc1Weights);
TENSOR_IN(fc1_bias, FC1_B_BINDING, Fc1Bias);
#endif
#if defined(DW_PROLOGUE_NONE) || defined(DW_PROLOGUE_RELU) || \
    defined(DW_PROLOGUE_RELU6) || defined(DW_PROLOGUE_RELU_N1_TO_1)
#define DW_PROLOGUE 1
#if defined(EPILOGUE_IN)
TENSOR_IN(dw_weights, 5, DwWeights);
TENSOR_IN(dw_bias, 6, DwBias);
#else
TENSOR_IN(dw_weights, 4, DwWeights);
TENSOR_IN(dw_bias, 5, DwBias);
#endif

// The depthwise layer's fused activation (not the GEMM's activate()).
#if !defined(DW_EPILOGUE)
#define DW_EPILOGUE(x) (x)
#endif
// GLSL's max/clamp here, not the NaN-keeping ew_relu* of
// elementwise_ops.glsl: this runs for every depthwise value the GEMM reads,
// and the NaN test and select cost MobileNet v1 12 % of its GEMM time on
// the H100 (docs/perf/log.md, session 8). A NaN out of a fused depthwise
// layer becomes the bound, where TFLite keeps it (docs/reliability.md).
vec4 dw_act(vec4 v) {
#if defined(DW_PROLOGUE_RELU)
  return max(v, vec4(0.0));
#elif defined(DW_PROLOGUE_RELU6)
  return clamp(v, vec4(0.0), vec4(6.0));
#elif defined(DW_PROLOGUE_RELU_N1_TO_1)
  return clamp(v, vec4(-1.0), vec4(1.0));
#else
  return v;
#endif
}
// DW_EPILOGUE(x): the depthwise layer's own epilogue after its activation
// (the quantization simulator of a quantized model; delegate/passes/
// dw_fusion.h), an expression of x alone.
vec4 dw_activate(vec4 v) { return DW_EPILOGUE(dw_act(v)); }
#endif

// Uniforms (egl/shader_source.h): ROWS, OUT_S (output slices), DEPTH_STEPS,
// OUT_C (output channels), ROW_PIXELS, DEPTH_STRIDE, IN_BATCH_STRIDE
// (IN_S * IN_HW), OUT_HW (output pixels per batch), WEIGHT_SLICES (split-K:
// weight slices per step). Integer divisions by them stay: they are exact
// for any size, and gemm.comp does not run on llvmpipe, which scalarizes
// them, unless a test forces it.

shared vec4 scratch[SHARED_VEC4];
#if defined(FC_PROLOGUE) || defined(MEAN_PROLOGUE)
shared vec4 mean_a[A_VEC4];
#endif
#if defined(FC_PROLOGUE) && defined(FC1_MEAN)
shared vec4 fc_x[FC1_DEPTH_STEPS];
#define FC1_INPUT(d) fc_x[d]
#else
#define FC1_INPUT(d) LOAD(in0, d)
#endif
#if defined(SOFTMAX_EPILOGUE)
// coherent: the last workgroup's loads must see the other workgroups'
// stores, not lines its own cache kept from before.
#if STORAGE_FP16
layout(std430, binding = READ_WRITE_BINDING_0) coherent buffer Logits { uvec2 logits[]; };
#define LOAD_LOGITS(i) unpack_half4(logits[int(i)])
#define STORE_LOGITS(i, v) logits[int(i)] = pack_half4(v)
#else
layout(std430, binding = READ_WRITE_BINDING_0) coherent buffer Logits { vec4 logits[]; };
#define LOAD_LOGITS(i) logits[int(i)]
#define STORE_LOGITS(i, v) logits[int(i)] = (v)
#endif
layout(std430, binding = READ_WRITE_BINDING_1) coherent buffer Arrivals { uint arrivals; };
#if defined(SPLIT_K) && TILE_ROWS > 4
#error SOFTMAX_EPILOGUE keeps one row per vec4 lane: at most 4 rows
#endif
#define SOFTMAX_THREADS (LOCAL_X * K_PARTS)
#define SOFTMAX_SPAN ((SOFTMAX_THREADS + 15) / 16)
#define SOFTMAX_GROUPS ((SOFTMAX_THREADS + SOFTMAX_SPAN - 1) / SOFTMAX_SPAN)
shared uint last_group;
// Each invocation's (max, sum), then 16 groups' (see merge_softmax).
shared vec4 softmax_max[SOFTMAX_THREADS];
shared vec4 softmax_max_groups[16];
shared vec4 softmax_sum[SOFTMAX_THREADS];
shared vec4 softmax_sum_groups[16];
const float kLowest = -3.402823466e38;
#endif

int input_base(int row) {
  return (row / ROW_PIXELS) * IN_BATCH_STRIDE + row % ROW_PIXELS;
}

void store_result(int row, int slice, vec4 sum) {
  if (row >= ROWS || slice >= OUT_S) return;
  int index = ((row / OUT_HW) * OUT_S + slice) * OUT_HW + row % OUT_HW;
  vec4 v = activate(sum + LOAD(bias, slice));
#if defined(SOFTMAX_EPILOGUE)
  // A buffer whatever the tensors' storage (STORE may be an image store).
  STORE_LOGITS(index, zero_padded(EPILOGUE(v, index, slice), slice, OUT_C));
#else
  STORE(out0, index, zero_padded(EPILOGUE(v, index, slice), slice, OUT_C));
#endif
}

#define TILE (TILE_ROWS * TILE_SLICES)

#if defined(SPLIT_K)
// The split-K kernel (shaders/gemm_splitk.glsl).
// @include gemm_splitk.glsl
#else

#define WG_ROWS (TILE_ROWS * THREADS_R)
// The precision of the products and accumulators (conv2d.comp's MATH_P).
#if !defined(MATH_P)
#define MATH_P highp
#endif
#if !defined(ACC_P)
#define ACC_P highp
#endif
#define WG_SLICES (TILE_SLICES * THREADS_S)
#if defined(FMA_CHAIN) && FMA_CHAIN  // 4 FMAs a step, not a multiply, 3 FMAs and an add
#define ACC_STEP(C, A) { C += w0 * A.x; C += w1 * A.y; C += w2 * A.z; C += w3 * A.w; }
#else
#define ACC_STEP(C, A) C += w0 * A.x + w1 * A.y + w2 * A.z + w3 * A.w
#endif

void main() {
  int tx = int(gl_LocalInvocationID.x);
  int part = int(gl_LocalInvocationID.y);
  int tr = tx % THREADS_R;
  int ts = tx / THREADS_R;
  int first_row = int(gl_WorkGroupID.x) * WG_ROWS;
  int group = int(gl_WorkGroupID.y);
  int group_weights = group * DEPTH_STEPS * WG_SLICES * 4;
#if defined(DW_PROLOGUE)
  {
    // Invocation `thread` computes A row `r` (fixed: the workgroup size is
    // a multiple of WG_ROWS, checked by the kernel) for every
    // (LOCAL_X * K_PARTS / WG_ROWS)-th depth step; neighbouring
    // invocations take neighbouring pixels of one input plane.
    int thread = part * LOCAL_X + tx;
    int r = thread % WG_ROWS;
    int row = min(first_row + r, ROWS - 1);
    int pixel = row % ROW_PIXELS;
    int in_w = DW_IN_W;
    int in_h = DW_IN_H;
    int in_hw = in_h * in_w;
    int y0 = (pixel / DW_OUT_W) * DW_STRIDE_H - DW_PAD_TOP;
    int x0 = (pixel % DW_OUT_W) * DW_STRIDE_W - DW_PAD_LEFT;
    int plane = (row / ROW_PIXELS) * DEPTH_STEPS * in_hw + y0 * in_w + x0;
    const int kTaps = DW_KH * DW_KW;
    bool inside[kTaps];
    int offset[kTaps];
    for (int t = 0; t < kTaps; ++t) {
      int dy = (t / DW_KW) * DW_DIL_H;
      int dx = (t % DW_KW) * DW_DIL_W;
      int y = y0 + dy;
      int x = x0 + dx;
      inside[t] = y >= 0 && y < in_h && x >= 0 && x < in_w;
      offset[t] = inside[t] ? dy * in_w + dx : -plane;  // -plane: element 0
    }
    int depth_steps = DEPTH_STEPS;
    for (int d = thread / WG_ROWS; d < depth_steps; d += LOCAL_X * K_PARTS / WG_ROWS) {
      int base_d = plane + d * in_hw;
      vec4 sum = LOAD(dw_bias, d);
      for (int t = 0; t < kTaps; ++t) {
        vec4 x = LOAD(in0, base_d + offset[t]);
        sum += (inside[t] ? x : vec4(0.0)) * LOAD(dw_weights, d * kTaps + t);
      }
      scratch[d * WG_ROWS + r] = dw_activate(sum);
    }
  }
  memoryBarrierShared();
  barrier();
#elif defined(RESIZE_PROLOGUE)
  // Per row: the plane offset of its batch and its four source pixels.
  const int kInHW = RS_IN_H * RS_IN_W;
  int base[TILE_ROWS];
  ivec4 taps[TILE_ROWS];
  vec4 tap_weights[TILE_ROWS];
  for (int i = 0; i < TILE_ROWS; ++i) {
    int row = min(first_row + tr + i * THREADS_R, ROWS - 1);
    int pixel = row % ROW_PIXELS;
    base[i] = (row / ROW_PIXELS) * DEPTH_STEPS * kInHW;
    vec2 src = (vec2(pixel % RS_OUT_W, pixel / RS_OUT_W) + RS_OFFSET) *
                   vec2(RS_SCALE_W, RS_SCALE_H) - RS_OFFSET;
    ivec2 lo = max(ivec2(floor(src)), 0);
    ivec2 hi = min(ivec2(ceil(src)), ivec2(RS_IN_W, RS_IN_H) - 1);
    vec2 f = src - vec2(lo);
    taps[i] = ivec4(lo.y * RS_IN_W + lo.x, lo.y * RS_IN_W + hi.x, hi.y * RS_IN_W + lo.x,
                    hi.y * RS_IN_W + hi.x);
    tap_weights[i] = vec4(1.0 - f.y, 1.0 - f.y, f.y, f.y) * vec4(1.0 - f.x, f.x, 1.0 - f.x, f.x);
  }
#else
  int base[TILE_ROWS];
  for (int i = 0; i < TILE_ROWS; ++i) {
    base[i] = input_base(min(first_row + tr + i * THREADS_R, ROWS - 1));
  }
#endif
  ACC_P vec4 acc[TILE];
  for (int t = 0; t < TILE; ++t) acc[t] = vec4(0.0);
  for (int d = part; d < DEPTH_STEPS; d += K_PARTS) {
    MATH_P vec4 a[TILE_ROWS];
#if defined(DW_PROLOGUE)
    for (int i = 0; i < TILE_ROWS; ++i) a[i] = scratch[d * WG_ROWS + tr + i * THREADS_R];
#elif defined(RESIZE_PROLOGUE)
    for (int i = 0; i < TILE_ROWS; ++i) {
      int plane = base[i] + d * kInHW;
      a[i] = mat4(LOAD(in0, plane + taps[i].x), LOAD(in0, plane + taps[i].y),
                  LOAD(in0, plane + taps[i].z), LOAD(in0, plane + taps[i].w)) * tap_weights[i];
    }
#elif defined(PROLOGUE_IN)
    for (int i = 0; i < TILE_ROWS; ++i) {
      int index = base[i] + d * DEPTH_STRIDE;
      a[i] = PROLOGUE_CHAIN(PROLOGUE(LOAD(in0, index), index, d), index, d);
    }
#else
    for (int i = 0; i < TILE_ROWS; ++i) a[i] = LOAD(in0, base[i] + d * DEPTH_STRIDE);
#endif
    for (int j = 0; j < TILE_SLICES; ++j) {
      int w = group_weights + (d * WG_SLICES + ts + j * THREADS_S) * 4;
      MATH_P vec4 w0 = LOAD(weights, w), w1 = LOAD(weights, w + 1);
      MATH_P vec4 w2 = LOAD(weights, w + 2), w3 = LOAD(weights, w + 3);
      for (int i = 0; i < TILE_ROWS; ++i) ACC_STEP(acc[i * TILE_SLICES + j], a[i]);
    }
  }
#if K_PARTS > 1
#if defined(DW_PROLOGUE)
  barrier();  // every invocation is done reading the A tile it overwrites
#endif
  int thread = part * LOCAL_X + tx;
  for (int t = 0; t < TILE; ++t) scratch[thread * TILE + t] = acc[t];
  memoryBarrierShared();
  barrier();
  for (int t = part; t < TILE; t += K_PARTS) {
    vec4 sum = vec4(0.0);
    for (int q = 0; q < K_PARTS; ++q) sum += scratch[(q * LOCAL_X + tx) * TILE + t];
    store_result(first_row + tr + (t / TILE_SLICES) * THREADS_R,
                 group * WG_SLICES + ts + (t % TILE_SLICES) * THREADS_S, sum);
  }
#else
  for (int i = 0; i < TILE_ROWS; ++i) {
    for (int j = 0; j < TILE_SLICES; ++j) {
      store_result(first_row + tr + i * THREADS_R,
                   group * WG_SLICES + ts + j * THREADS_S,
                   acc[i * TILE_SLICES + j]);
    }
  }
#endif
}

#endif
