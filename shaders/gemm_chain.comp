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
//
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID
// @axis - EPILOGUE_IN
// @axis - CHAIN_IN CHAIN_IN2
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 WG_ROWS=16 TILE1=1 TILE2=1 SLICE_THREADS2=4 K_PARTS2=1
// @const W1_GROUP=4 W2_GROUP=4 X_TILE_VEC4=64 PARTIAL_VEC4=1
// @const EPILOGUE_BINDING=7 CHAIN_BINDING=8 CHAIN_BINDING2=9
// @const EPILOGUE(x,index,slice)=(x) CHAIN_EPILOGUE(x,index,slice)=(x) CHAIN_ACT(x)=(x)
// @uniform ROWS=16 ROW_PIXELS=16 IN_BATCH_STRIDE=32 DEPTH_STRIDE=16 DEPTH_STEPS1=2
// @uniform S1=4 OUT_C1=16 OUT_S=2 OUT_C=8 OUT_HW=16

layout(local_size_x = LOCAL_X) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_OUT(out1, 1, Out1);
TENSOR_IN(in0, 2, In0);
TENSOR_IN(weights, 3, Weights);
TENSOR_IN(bias, 4, Bias);
TENSOR_IN(weights1, 5, Weights1);
TENSOR_IN(bias1, 6, Bias1);
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
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif

// x of the workgroup's rows, [slice][row]: stage 2's A.
shared vec4 x_tile[X_TILE_VEC4];  // >= S1 * WG_ROWS
#if K_PARTS2 > 1
shared vec4 partial[PARTIAL_VEC4];
#endif

// Where row `row`, slice `slice` of a map of `slices` slices lies.
int output_index(int row, int slice, int slices) {
  return ((row / OUT_HW) * slices + slice) * OUT_HW + row % OUT_HW;
}

void store_y(int row, int slice, vec4 sum) {
  if (row >= ROWS || slice >= OUT_S) return;
  int index = output_index(row, slice, OUT_S);
  vec4 v = activate(sum + LOAD(bias, slice));
  STORE(out0, index, zero_padded(EPILOGUE(v, index, slice), slice, OUT_C));
}

void main() {
  int t = int(gl_LocalInvocationID.x);
  int r = t % WG_ROWS;
  int q = t / WG_ROWS;
  int row = int(gl_WorkGroupID.x) * WG_ROWS + r;
  bool real_row = row < ROWS;
  {
    const int kSliceThreads = LOCAL_X / WG_ROWS;
    int clamped = min(row, ROWS - 1);
    int base = (clamped / ROW_PIXELS) * IN_BATCH_STRIDE + clamped % ROW_PIXELS;
    vec4 acc[TILE1];
    for (int j = 0; j < TILE1; ++j) acc[j] = vec4(0.0);
    for (int d = 0; d < DEPTH_STEPS1; ++d) {
      vec4 a = LOAD(in0, base + d * DEPTH_STRIDE);
      for (int j = 0; j < TILE1; ++j) {
        int s = min(q + j * kSliceThreads, S1 - 1);
        int w = (((s / W1_GROUP) * DEPTH_STEPS1 + d) * W1_GROUP + s % W1_GROUP) * 4;
        acc[j] += LOAD(weights1, w) * a.x + LOAD(weights1, w + 1) * a.y +
                  LOAD(weights1, w + 2) * a.z + LOAD(weights1, w + 3) * a.w;
      }
    }
    for (int j = 0; j < TILE1; ++j) {
      int s = q + j * kSliceThreads;
      if (s >= S1) continue;
      int index = output_index(clamped, s, S1);
      vec4 v = acc[j] + LOAD(bias1, s);
      vec4 x = zero_padded(CHAIN_EPILOGUE(CHAIN_ACT(v), index, s), s, OUT_C1);
      if (real_row) STORE(out1, index, x);
      x_tile[s * WG_ROWS + r] = x;
    }
  }
  memoryBarrierShared();
  barrier();
  int ts = q % SLICE_THREADS2;
  int part = q / SLICE_THREADS2;
  vec4 acc[TILE2];
  for (int j = 0; j < TILE2; ++j) acc[j] = vec4(0.0);
  for (int d = part; d < S1; d += K_PARTS2) {
    vec4 a = x_tile[d * WG_ROWS + r];
    for (int j = 0; j < TILE2; ++j) {
      int s = min(ts + j * SLICE_THREADS2, OUT_S - 1);
      int w = (((s / W2_GROUP) * S1 + d) * W2_GROUP + s % W2_GROUP) * 4;
      acc[j] += LOAD(weights, w) * a.x + LOAD(weights, w + 1) * a.y +
                LOAD(weights, w + 2) * a.z + LOAD(weights, w + 3) * a.w;
    }
  }
#if K_PARTS2 > 1
  for (int j = 0; j < TILE2; ++j) partial[t * TILE2 + j] = acc[j];
  memoryBarrierShared();
  barrier();
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
}
