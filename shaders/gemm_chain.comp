#version 310 es
// Two tiled 1x1 GEMMs in a row as one dispatch (delegate/passes/gemm_chain.h):
// x = CHAIN_EPILOGUE(CHAIN_ACT(A * W1 + b1)), which other dispatches read
// too (so it is still stored), then y = EPILOGUE(activate(x * W2 + b2)).
// ENet's bottleneck ends in a 1x1 expansion + residual ADD + PRELU and the
// next one starts with a 1x1 projection + PRELU: on the H100 each such GEMM
// of the hair stand-in took 11-17 us, ~5 of them the dependent-dispatch
// floor (docs/perf/log.md, "hair3, session 14").
//
// A workgroup takes WG_ROWS rows (output pixels over the batches) and
// LOCAL_X invocations. Stage 1: invocation t computes x of row t % WG_ROWS
// for slices t / WG_ROWS + j * (LOCAL_X / WG_ROWS) over all DEPTH_STEPS1
// input steps, stores it to out1 and into `x_tile` ([slice][row]). One
// barrier. Stage 2: invocation t takes row t % WG_ROWS, output slices q %
// SLICE_THREADS2 + j * SLICE_THREADS2 and the x steps d with d % K_PARTS2 ==
// q / SLICE_THREADS2 (q = t / WG_ROWS); with several parts the partial sums
// meet in `partial` after a second barrier. Neighbouring invocations load
// and store neighbouring pixels. Weights as gemm.comp's tiled form:
// [slice group][step][group slices][4] vec4 (W1_GROUP, W2_GROUP slices).
//
// Bindings: 0 = y, 1 = x, 2 = A, 3 = W2, 4 = b2, 5 = W1, 6 = b1, then
// EPILOGUE_IN (y's epilogue operand), CHAIN_IN, CHAIN_IN2 (x's) at the
// bindings the pass gives them.
// HEAD (delegate/passes/gemm_chain_head.h): A itself is a convolution's
// output c (the bottleneck's 3x3 + PRELU) that nothing else reads: stage 0
// computes the workgroup's rows of c into `c_tile` from that convolution's
// input (binding 2 then; its taps gathered in place, zero outside, as
// conv2d.comp's GENERIC path reads them, weights packed as conv2d.comp's
// [group][tap][slice][W0_GROUP][4]), its K_PARTS0 parts meeting in
// `partial0`, and stage 1 reads c from there: one dispatch per bottleneck
// instead of two (~5 us of dispatch floor each on the H100); ROWS0 rows
// per invocation (each weight load feeds that many). Bindings
// HEAD_BINDING, HEAD_BINDING1, HEAD_BINDING2 = W0, b0, HEAD_IN (c's
// epilogue operand). HEAD_UPSTRIDE s > 0: the head is a transposed
// convolution of stride s instead (ENet's up blocks), its taps gathered as
// transpose_conv.comp gathers them (input pixel iy where iy * s - PAD_TOP +
// ky == y), its weights packed alike.
//
// SINGLE (gemm_chain.h SingleGemmChain): stage 1 alone, x the output, for a
// head before a GEMM that no second follows. Bindings 0 = x, 1 = A, 2 = W1,
// 3 = b1, then CHAIN_IN, CHAIN_IN2 and the head's.
//
// UNPOOL_GATHER (delegate/passes/pool_fusion.h): an epilogue operand is
// a MaxUnpooling2D's output, gathered where it is read (UNPOOL_LOAD): its
// binding holds the pooled values, UNPOOL_BINDING their argmax indices;
// UNPOOL_FROM_INPUT: UNPOOL_BINDING holds the pooling's input instead, and
// each window's argmax is found again there, as shaders/pooling.comp finds it.
// POOL_PROLOGUE (pool_fusion.h, not with HEAD): A is a max pooling of in0
// (POOL_IN_H x POOL_IN_W, POOL_K x POOL_K windows that tile it, A's slices),
// taken in A's loads with pooling.comp's comparisons (POOL_MAX_OP 1: max(),
// POOL_MAX's; 0: the first strict maximum, POOL_MAX_ARGMAX's).
//
// Y2 (gemm_chain.h FuseSecondProjections): stage 2 also computes
// y2 = Y2_EPILOGUE(Y2_ACT(x * W3 + b3)) (OUT_S3 slices, SLICE_THREADS3 x
// K_PARTS3 invocations a row, partials in `partial3`), another 1x1 GEMM of
// x that would otherwise be a dispatch of its own (ENet's upsampling block:
// its side branch's projection beside the main branch's 1x1, both of the
// last bottleneck's x). Bindings 0 = y, 1 = x, 2 = y2, then the inputs one
// later than above; Y2_BINDING, Y2_BINDING1 = W3, b3, and Y2_BINDING2 (-1
// where there is none) = y2_in, y2's epilogue operand.
//
// @axis - SINGLE Y2
// @const Y2_BINDING=13 Y2_BINDING1=14 Y2_BINDING2=15 OUT_S3=1 OUT_C3=4 TILE3=1
// @const SLICE_THREADS3=1 K_PARTS3=4 W3_GROUP=1 PARTIAL3_VEC4=64
// @const Y2_EPILOGUE(x,index,slice)=(x) Y2_ACT(x)=(x)
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID
// @axis - EPILOGUE_IN
// @axis - CHAIN_IN CHAIN_IN2
// @axis - HEAD HEAD_IN POOL_PROLOGUE
// @const POOL_K=2 POOL_IN_H=4 POOL_IN_W=8 POOL_OUT_W=4 POOL_MAX_OP=0
// @const HEAD_BINDING=10 HEAD_BINDING1=11 HEAD_BINDING2=12 KERNEL_H=3 KERNEL_W=3
// @const DILATION_H=1 DILATION_W=1 W0_GROUP=2 TILE0=1 SLICE_THREADS0=4 K_PARTS0=1
// @const HEAD_UPSTRIDE=0
// @const C_TILE_VEC4=32 PARTIAL0_VEC4=1 ROWS0=1 HEAD_MATH_P=mediump HEAD_ACC_P=mediump
// @const HEAD_EPILOGUE(x,index,slice)=(x) HEAD_ACT(x)=(x)
// @uniform IN_S0=2 IN_H0=4 IN_W0=4 OUT_W0=4 PAD_TOP=1 PAD_LEFT=1 OUT_C0=8
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 WG_ROWS=16 TILE1=1 TILE2=1 SLICE_THREADS2=4 K_PARTS2=1
// @const W1_GROUP=4 W2_GROUP=4 X_TILE_VEC4=64 PARTIAL_VEC4=1 MATH_P=mediump ACC_P=mediump
// @const EPILOGUE_BINDING=7 CHAIN_BINDING=8 CHAIN_BINDING2=9
// @const EPILOGUE(x,index,slice)=(x) CHAIN_EPILOGUE(x,index,slice)=(x) CHAIN_ACT(x)=(x)
// UPSAMPLE_GATHER (pool_fusion.h): an epilogue operand is a nearest
// upsampling by UNPOOL_KH x UNPOOL_KW (RESIZE_NEAREST_NEIGHBOR by 1, 2 or 4,
// the builtin twin's decoder), read where it is read (UPSAMPLE_LOAD): its
// binding holds the resize's source, and output vec4 i reads the source
// vec4 of the window over i (unpool_source).
//
// @axis - UNPOOL_GATHER UNPOOL_FROM_INPUT UPSAMPLE_GATHER
// @const UNPOOL_BINDING=13 UNPOOL_IN_H=2 UNPOOL_IN_W=2 UNPOOL_OUT_H=4 UNPOOL_OUT_W=4
// @const UNPOOL_KH=2 UNPOOL_KW=2
// @uniform ROWS=16 ROW_PIXELS=16 IN_BATCH_STRIDE=32 DEPTH_STRIDE=16 DEPTH_STEPS1=2
// @uniform S1=4 OUT_C1=16 OUT_S=2 OUT_C=8 OUT_HW=16

layout(local_size_x = LOCAL_X) in;

#if defined(SINGLE)
TENSOR_OUT(out1, 0, Out1);
TENSOR_IN(in0, 1, In0);
TENSOR_IN(weights1, 2, Weights1);
TENSOR_IN(bias1, 3, Bias1);
#elif defined(Y2)
TENSOR_OUT(out0, 0, Out0);
TENSOR_OUT(out1, 1, Out1);
TENSOR_OUT(out2, 2, Out2);
TENSOR_IN(in0, 3, In0);
TENSOR_IN(weights, 4, Weights);
TENSOR_IN(bias, 5, Bias);
TENSOR_IN(weights1, 6, Weights1);
TENSOR_IN(bias1, 7, Bias1);
TENSOR_IN(weights3, Y2_BINDING, Weights3);
TENSOR_IN(bias3, Y2_BINDING1, Bias3);
#if Y2_BINDING2 >= 0
TENSOR_IN(y2_in, Y2_BINDING2, Y2In);
#endif
#else
TENSOR_OUT(out0, 0, Out0);
TENSOR_OUT(out1, 1, Out1);
TENSOR_IN(in0, 2, In0);
TENSOR_IN(weights, 3, Weights);
TENSOR_IN(bias, 4, Bias);
TENSOR_IN(weights1, 5, Weights1);
TENSOR_IN(bias1, 6, Bias1);
#endif
#if defined(EPILOGUE_IN)
TENSOR_IN(epilogue_in, EPILOGUE_BINDING, EpilogueIn);
#endif
#if defined(CHAIN_IN2) && !defined(CHAIN_IN)
#define CHAIN_IN 1
#endif
#if defined(CHAIN_IN)
TENSOR_IN(chain_in, CHAIN_BINDING, ChainIn);
#endif
#if defined(CHAIN_IN2)
TENSOR_IN(chain_in2, CHAIN_BINDING2, ChainIn2);
#endif
// pooling.comp's start for a maximum: the lowest float.
const float kLowestFloat = -3.402823466e38;
#if defined(UNPOOL_FROM_INPUT) && !defined(UNPOOL_GATHER)
#define UNPOOL_GATHER 1
#endif
#if defined(UNPOOL_GATHER) || defined(UPSAMPLE_GATHER)
// The pooled vec4 (and its indices) of the window over output vec4 `i`:
// windows tile the output (filter = stride, no padding), one per position.
// (A nearest upsampling's source vec4 likewise.)
int unpool_source(int i) {
  int pixel = i % (UNPOOL_OUT_H * UNPOOL_OUT_W);
  int plane = i / (UNPOOL_OUT_H * UNPOOL_OUT_W);  // batch * slices + slice
  int y = pixel / UNPOOL_OUT_W, x = pixel % UNPOOL_OUT_W;
  return (plane * UNPOOL_IN_H + y / UNPOOL_KH) * UNPOOL_IN_W + x / UNPOOL_KW;
}
#endif
#if defined(UPSAMPLE_GATHER)
#define UPSAMPLE_LOAD(name, i) LOAD(name, unpool_source(int(i)))
#endif
#if defined(UNPOOL_GATHER)
TENSOR_IN(unpool_indices, UNPOOL_BINDING, UnpoolIndices);
// The pooled value `v` (indices `picked`) at output vec4 `i`: where the
// window's index (a float, truncated as the CPU op's cast does) names `i`'s
// position in it (ky * KW + kx, MaxPoolingWithArgmax2D's numbering), else 0.
vec4 unpool_pick(vec4 v, vec4 picked, int i) {
  int pixel = i % (UNPOOL_OUT_H * UNPOOL_OUT_W);
  int here = ((pixel / UNPOOL_OUT_W) % UNPOOL_KH) * UNPOOL_KW + (pixel % UNPOOL_OUT_W) % UNPOOL_KW;
  return mix(vec4(0.0), v, equal(ivec4(picked), ivec4(here)));
}
#if defined(UNPOOL_FROM_INPUT)
// The argmax of the window over output vec4 `i` in the pooling's input (the
// unpooled map's size): its first strict maximum in row-major order.
vec4 unpool_indices_at(int i) {
  int pixel = i % (UNPOOL_OUT_H * UNPOOL_OUT_W);
  int plane = i / (UNPOOL_OUT_H * UNPOOL_OUT_W);
  int y0 = (pixel / UNPOOL_OUT_W) / UNPOOL_KH * UNPOOL_KH;
  int x0 = (pixel % UNPOOL_OUT_W) / UNPOOL_KW * UNPOOL_KW;
  vec4 result = vec4(kLowestFloat), where = vec4(0.0);
  for (int ky = 0; ky < UNPOOL_KH; ++ky) {
    for (int kx = 0; kx < UNPOOL_KW; ++kx) {
      vec4 v = LOAD(unpool_indices, (plane * UNPOOL_OUT_H + y0 + ky) * UNPOOL_OUT_W + x0 + kx);
      bvec4 larger = greaterThan(v, result);
      where = mix(where, vec4(float(ky * UNPOOL_KW + kx)), larger);
      result = mix(result, v, larger);
    }
  }
  return where;
}
#define UNPOOL_INDICES(i) unpool_indices_at(i)
#else
#define UNPOOL_INDICES(i) LOAD(unpool_indices, unpool_source(i))
#endif
#define UNPOOL_LOAD(name, i) \
  unpool_pick(LOAD(name, unpool_source(int(i))), UNPOOL_INDICES(int(i)), int(i))
#endif
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif
// The GEMMs' own precisions (gemm.comp's MATH_P, ACC_P: mediump with fp16
// storage where DeviceProfile::fp16_math asks for it); x is stored and
// shared at the storage's precision either way.
#if !defined(MATH_P)
#define MATH_P highp
#endif
#if !defined(ACC_P)
#define ACC_P highp
#endif
#if defined(HEAD_IN) && !defined(HEAD)
#define HEAD 1
#endif
#if !defined(HEAD_EPILOGUE)
#define HEAD_EPILOGUE(x, index, slice) (x)
#endif
#if defined(HEAD)
TENSOR_IN(weights0, HEAD_BINDING, Weights0);
TENSOR_IN(bias0, HEAD_BINDING1, Bias0);
#if defined(HEAD_IN)
TENSOR_IN(head_in, HEAD_BINDING2, HeadIn);
#endif
// c of the workgroup's rows, [slice][row]: stage 1's A.
shared vec4 c_tile[C_TILE_VEC4];  // >= DEPTH_STEPS1 * WG_ROWS
#if K_PARTS0 > 1
shared vec4 partial0[PARTIAL0_VEC4];
#endif
#endif

#if !defined(SINGLE)
// x of the workgroup's rows, [slice][row]: stage 2's A.
shared vec4 x_tile[X_TILE_VEC4];  // >= S1 * WG_ROWS
#if K_PARTS2 > 1
shared vec4 partial[PARTIAL_VEC4];
#endif
#if defined(Y2) && K_PARTS3 > 1
shared vec4 partial3[PARTIAL3_VEC4];
#endif
#endif

#if defined(POOL_PROLOGUE)
#if !defined(POOL_MAX_OP)
#define POOL_MAX_OP 0
#endif
// A at row `row` (batch x pixels), slice `d`: the max of its window of in0.
vec4 pooled_a(int row, int d) {
  int pixel = row % ROW_PIXELS;
  int y = (pixel / POOL_OUT_W) * POOL_K, x = (pixel % POOL_OUT_W) * POOL_K;
  int plane = ((row / ROW_PIXELS) * DEPTH_STEPS1 + d) * POOL_IN_H;
  vec4 result = vec4(kLowestFloat);
  for (int ky = 0; ky < POOL_K; ++ky) {
    for (int kx = 0; kx < POOL_K; ++kx) {
      vec4 v = LOAD(in0, (plane + y + ky) * POOL_IN_W + x + kx);
#if POOL_MAX_OP
      result = max(result, v);
#else
      result = mix(result, v, greaterThan(v, result));
#endif
    }
  }
  return result;
}
#endif

// Where row `row`, slice `slice` of a map of `slices` slices lies.
int output_index(int row, int slice, int slices) {
  return ((row / OUT_HW) * slices + slice) * OUT_HW + row % OUT_HW;
}

#if defined(HEAD)
// Stage 0: invocation t takes the workgroup's rows g + i * HEAD_GROUPS (g =
// t % HEAD_GROUPS, i < ROWS0: each weight vec4 it loads feeds ROWS0 rows),
// c's slices ts + j * SLICE_THREADS0 and the input slices part, part +
// K_PARTS0, ... of every tap (ts, part: t / HEAD_GROUPS's split).
#define HEAD_GROUPS (WG_ROWS / ROWS0)
#define HEAD_TILE (ROWS0 * TILE0)
// The convolution's own precisions (conv2d.comp's MATH_P, ACC_P: mediump
// with fp16 storage where DeviceProfile::fp16_math asks for it).
#if !defined(HEAD_MATH_P)
#define HEAD_MATH_P highp
#endif
#if !defined(HEAD_ACC_P)
#define HEAD_ACC_P highp
#endif
#if !defined(HEAD_UPSTRIDE)
#define HEAD_UPSTRIDE 0
#endif
#define HEAD_UP_DIV (HEAD_UPSTRIDE > 0 ? HEAD_UPSTRIDE : 1)
void head_sums(int g, int ts, int part, out HEAD_ACC_P vec4 acc[HEAD_TILE]) {
  int in_s = IN_S0;
  int in_h = IN_H0;
  int in_w = IN_W0;
  int c_slices = DEPTH_STEPS1;
  int steps = KERNEL_H * KERNEL_W * in_s;
  int y0[ROWS0];
  int x0[ROWS0];
  int batch_base[ROWS0];
  for (int i = 0; i < ROWS0; ++i) {
    int row = min(int(gl_WorkGroupID.x) * WG_ROWS + g + i * HEAD_GROUPS, ROWS - 1);
    int pixel = row % OUT_HW;
    batch_base[i] = (row / OUT_HW) * in_s * in_h * in_w;
    y0[i] = pixel / OUT_W0;
    x0[i] = pixel % OUT_W0;
  }
  for (int j = 0; j < HEAD_TILE; ++j) acc[j] = vec4(0.0);
  for (int tap = 0; tap < KERNEL_H * KERNEL_W; ++tap) {
    int base[ROWS0];
    bool inside[ROWS0];
    for (int i = 0; i < ROWS0; ++i) {
      int ky = tap / KERNEL_W, kx = tap % KERNEL_W;
      int y = y0[i] - PAD_TOP + ky * DILATION_H;
      int x = x0[i] - PAD_LEFT + kx * DILATION_W;
      bool tap_hits = true;
      if (HEAD_UPSTRIDE > 0) {  // a constant: one branch compiles
        // Offsets keep / and % on non-negative operands (transpose_conv.comp's).
        int ty = y0[i] + PAD_TOP - ky + HEAD_UP_DIV * KERNEL_H;
        int tx = x0[i] + PAD_LEFT - kx + HEAD_UP_DIV * KERNEL_W;
        tap_hits = ty % HEAD_UP_DIV == 0 && tx % HEAD_UP_DIV == 0;
        y = ty / HEAD_UP_DIV - KERNEL_H;
        x = tx / HEAD_UP_DIV - KERNEL_W;
      }
      inside[i] = tap_hits && y >= 0 && y < in_h && x >= 0 && x < in_w;
      base[i] = batch_base[i] + (inside[i] ? y * in_w + x : 0);
    }
    // A transposed head's taps of the other row phase hit nothing for the
    // whole of a workgroup's image row: skipped (3 or 6 of 9 taps at stride 2).
    bool any_inside = false;
    for (int i = 0; i < ROWS0; ++i) any_inside = any_inside || inside[i];
    if (HEAD_UPSTRIDE > 0 && !any_inside) continue;
    // A trip count of its own (not s < in_s from `part`): constant where the
    // shapes are compiled in (DeviceProfile::specialize_gemm_chains), so it unrolls.
    for (int k0 = 0; k0 < (in_s + K_PARTS0 - 1) / K_PARTS0; ++k0) {
      int s = part + k0 * K_PARTS0;
      if (s >= in_s) break;
      HEAD_MATH_P vec4 a[ROWS0];
      for (int i = 0; i < ROWS0; ++i) {
        a[i] = inside[i] ? LOAD(in0, base[i] + s * in_h * in_w) : vec4(0.0);
      }
      int k = tap * in_s + s;
      for (int j = 0; j < TILE0; ++j) {
        int o = min(ts + j * SLICE_THREADS0, c_slices - 1);
        int w = (((o / W0_GROUP) * steps + k) * W0_GROUP + o % W0_GROUP) * 4;
        HEAD_MATH_P vec4 w0 = LOAD(weights0, w);
        HEAD_MATH_P vec4 w1 = LOAD(weights0, w + 1);
        HEAD_MATH_P vec4 w2 = LOAD(weights0, w + 2);
        HEAD_MATH_P vec4 w3 = LOAD(weights0, w + 3);
        for (int i = 0; i < ROWS0; ++i) {
          acc[i * TILE0 + j] += w0 * a[i].x + w1 * a[i].y + w2 * a[i].z + w3 * a[i].w;
        }
      }
    }
  }
}

// c = HEAD_EPILOGUE(HEAD_ACT(sum + b0)) into c_tile.
void head_store(int row, int r, int slice, vec4 sum) {
  if (slice >= DEPTH_STEPS1) return;
  int index = output_index(row, slice, DEPTH_STEPS1);
  vec4 v = HEAD_ACT(sum + LOAD(bias0, slice));
  c_tile[slice * WG_ROWS + r] = zero_padded(HEAD_EPILOGUE(v, index, slice), slice, OUT_C0);
}
#endif

#if !defined(SINGLE)
void store_y(int row, int slice, vec4 sum) {
  if (row >= ROWS || slice >= OUT_S) return;
  int index = output_index(row, slice, OUT_S);
  vec4 v = activate(sum + LOAD(bias, slice));
  STORE(out0, index, zero_padded(EPILOGUE(v, index, slice), slice, OUT_C));
}
#endif

#if defined(Y2)
void store_y2(int row, int slice, vec4 sum) {
  if (row >= ROWS || slice >= OUT_S3) return;
  int index = output_index(row, slice, OUT_S3);
  vec4 v = Y2_ACT(sum + LOAD(bias3, slice));
  STORE(out2, index, zero_padded(Y2_EPILOGUE(v, index, slice), slice, OUT_C3));
}

// y2's partial sums of row r: slices ts + j * SLICE_THREADS3, the x steps
// d with d % K_PARTS3 == part (stage 2's loop, x * W3).
void y2_sums(int r, int ts, int part, out ACC_P vec4 acc[TILE3]) {
  for (int j = 0; j < TILE3; ++j) acc[j] = vec4(0.0);
  for (int k3 = 0; k3 < (S1 + K_PARTS3 - 1) / K_PARTS3; ++k3) {
    int d = part + k3 * K_PARTS3;
    if (d >= S1) break;
    MATH_P vec4 a = x_tile[d * WG_ROWS + r];
    for (int j = 0; j < TILE3; ++j) {
      int s = min(ts + j * SLICE_THREADS3, OUT_S3 - 1);
      int w = (((s / W3_GROUP) * S1 + d) * W3_GROUP + s % W3_GROUP) * 4;
      MATH_P vec4 w0 = LOAD(weights3, w);
      MATH_P vec4 w1 = LOAD(weights3, w + 1);
      MATH_P vec4 w2 = LOAD(weights3, w + 2);
      MATH_P vec4 w3 = LOAD(weights3, w + 3);
      acc[j] += w0 * a.x + w1 * a.y + w2 * a.z + w3 * a.w;
    }
  }
}
#endif

void main() {
  int t = int(gl_LocalInvocationID.x);
  int r = t % WG_ROWS;
  int q = t / WG_ROWS;
  int row = int(gl_WorkGroupID.x) * WG_ROWS + r;
  bool real_row = row < ROWS;
#if defined(HEAD)
  {
    int g = t % HEAD_GROUPS;
    int ts = (t / HEAD_GROUPS) % SLICE_THREADS0;
    int part = t / HEAD_GROUPS / SLICE_THREADS0;
    HEAD_ACC_P vec4 acc[HEAD_TILE];
    head_sums(g, ts, min(part, K_PARTS0 - 1), acc);
#if K_PARTS0 > 1
    for (int j = 0; j < HEAD_TILE; ++j) partial0[t * HEAD_TILE + j] = acc[j];
  }
  memoryBarrierShared();
  barrier();
  {
    int g = t % HEAD_GROUPS;
    int ts = (t / HEAD_GROUPS) % SLICE_THREADS0;
    int part = t / HEAD_GROUPS / SLICE_THREADS0;
    vec4 acc[HEAD_TILE];
    for (int j = 0; j < HEAD_TILE; ++j) acc[j] = partial0[t * HEAD_TILE + j];
    for (int p = 1; p < K_PARTS0 && part == 0; ++p) {
      for (int j = 0; j < HEAD_TILE; ++j) {
        acc[j] += partial0[((p * SLICE_THREADS0 + ts) * HEAD_GROUPS + g) * HEAD_TILE + j];
      }
    }
#endif
    for (int i = 0; i < ROWS0 && part == 0; ++i) {
      int rr = g + i * HEAD_GROUPS;
      int clamped = min(int(gl_WorkGroupID.x) * WG_ROWS + rr, ROWS - 1);
      for (int j = 0; j < TILE0; ++j) {
        head_store(clamped, rr, ts + j * SLICE_THREADS0, acc[i * TILE0 + j]);
      }
    }
  }
  memoryBarrierShared();
  barrier();
#endif
  {
    const int kSliceThreads = LOCAL_X / WG_ROWS;
    int clamped = min(row, ROWS - 1);
    int base = (clamped / ROW_PIXELS) * IN_BATCH_STRIDE + clamped % ROW_PIXELS;
    ACC_P vec4 acc[TILE1];
    for (int j = 0; j < TILE1; ++j) acc[j] = vec4(0.0);
    for (int d = 0; d < DEPTH_STEPS1; ++d) {
#if defined(HEAD)
      MATH_P vec4 a = c_tile[d * WG_ROWS + r];
#elif defined(POOL_PROLOGUE)
      MATH_P vec4 a = pooled_a(clamped, d);
#else
      MATH_P vec4 a = LOAD(in0, base + d * DEPTH_STRIDE);
#endif
      for (int j = 0; j < TILE1; ++j) {
        int s = min(q + j * kSliceThreads, S1 - 1);
        int w = (((s / W1_GROUP) * DEPTH_STEPS1 + d) * W1_GROUP + s % W1_GROUP) * 4;
        MATH_P vec4 w0 = LOAD(weights1, w);
        MATH_P vec4 w1 = LOAD(weights1, w + 1);
        MATH_P vec4 w2 = LOAD(weights1, w + 2);
        MATH_P vec4 w3 = LOAD(weights1, w + 3);
        acc[j] += w0 * a.x + w1 * a.y + w2 * a.z + w3 * a.w;
      }
    }
    for (int j = 0; j < TILE1; ++j) {
      int s = q + j * kSliceThreads;
      if (s >= S1) continue;
      int index = output_index(clamped, s, S1);
      vec4 v = acc[j] + LOAD(bias1, s);
      vec4 x = zero_padded(CHAIN_EPILOGUE(CHAIN_ACT(v), index, s), s, OUT_C1);
      if (real_row) STORE(out1, index, x);
#if !defined(SINGLE)
      x_tile[s * WG_ROWS + r] = x;
#endif
    }
  }
#if !defined(SINGLE)
  memoryBarrierShared();
  barrier();
  int ts = q % SLICE_THREADS2;
  int part = q / SLICE_THREADS2;
  ACC_P vec4 acc[TILE2];
  for (int j = 0; j < TILE2; ++j) acc[j] = vec4(0.0);
  for (int k2 = 0; k2 < (S1 + K_PARTS2 - 1) / K_PARTS2; ++k2) {  // as stage 0's
    int d = part + k2 * K_PARTS2;
    if (d >= S1) break;
    MATH_P vec4 a = x_tile[d * WG_ROWS + r];
    for (int j = 0; j < TILE2; ++j) {
      int s = min(ts + j * SLICE_THREADS2, OUT_S - 1);
      int w = (((s / W2_GROUP) * S1 + d) * W2_GROUP + s % W2_GROUP) * 4;
      MATH_P vec4 w0 = LOAD(weights, w);
      MATH_P vec4 w1 = LOAD(weights, w + 1);
      MATH_P vec4 w2 = LOAD(weights, w + 2);
      MATH_P vec4 w3 = LOAD(weights, w + 3);
      acc[j] += w0 * a.x + w1 * a.y + w2 * a.z + w3 * a.w;
    }
  }
#if defined(Y2)
  int ts3 = q % SLICE_THREADS3;
  int part3 = q / SLICE_THREADS3;
  ACC_P vec4 acc3[TILE3];
  y2_sums(r, ts3, min(part3, K_PARTS3 - 1), acc3);
#endif
  // y's and y2's partial sums meet after one barrier.
#if K_PARTS2 > 1
  for (int j = 0; j < TILE2; ++j) partial[t * TILE2 + j] = acc[j];
#endif
#if defined(Y2) && K_PARTS3 > 1
  for (int j = 0; j < TILE3; ++j) partial3[t * TILE3 + j] = acc3[j];
#endif
#if K_PARTS2 > 1 || (defined(Y2) && K_PARTS3 > 1)
  memoryBarrierShared();
  barrier();
#endif
#if K_PARTS2 > 1
  if (part == 0) {
    for (int j = 0; j < TILE2; ++j) {
      vec4 sum = acc[j];
      for (int p = 1; p < K_PARTS2; ++p) {
        sum += partial[((p * SLICE_THREADS2 + ts) * WG_ROWS + r) * TILE2 + j];
      }
      store_y(row, ts + j * SLICE_THREADS2, sum);
    }
  }
#else
  for (int j = 0; j < TILE2; ++j) store_y(row, ts + j * SLICE_THREADS2, acc[j]);
#endif
#if defined(Y2)
  for (int j = 0; j < TILE3 && part3 == 0; ++j) {
    vec4 sum = acc3[j];
#if K_PARTS3 > 1
    for (int p = 1; p < K_PARTS3; ++p) {
      sum += partial3[((p * SLICE_THREADS3 + ts3) * WG_ROWS + r) * TILE3 + j];
    }
#endif
    store_y2(row, ts3 + j * SLICE_THREADS3, sum);
  }
#endif
#endif  // !SINGLE
}
