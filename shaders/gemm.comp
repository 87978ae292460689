#version 310 es
// GEMM for many-core GPUs (NVIDIA and other real GPUs; chosen by
// DeviceProfile::shared_memory_gemm, delegate/device_tuning.cc): 1x1
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
// TILE_ROWS x TILE_SLICES vec4s over the depth steps d with
// d % K_PARTS == part; its rows are tx % THREADS_R + i * THREADS_R and its
// slices tx / THREADS_R + j * THREADS_S, so neighbouring invocations load
// neighbouring pixels and store them. Weights (binding 2): [slice group]
// [step][WG_SLICES][4] vec4 (vec4 k of a slice holds input lane k's weights
// for its 4 output channels), zero-padded.
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
// Shapes are @uniform values (written once at init), so layers that differ
// only in size share one program; tile sizes are constants.
// Bindings: 0 = output, 1 = input, 2 = packed weights, 3 = bias (one vec4 per
// slice, zero-padded), 4 = EPILOGUE_IN (delegate/fusion.h), as conv2d.comp.
//
// @axis - SPLIT_K
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID
// @const LOCAL_X=64 LOCAL_Y=2 LOCAL_Z=1 TILE_ROWS=2 TILE_SLICES=2
// @const THREADS_R=16 THREADS_S=4 K_PARTS=2 SHARED_VEC4=1024
// @uniform ROWS=16 OUT_S=2 DEPTH_STEPS=2 OUT_C=8 ROW_PIXELS=16
// @uniform DEPTH_STRIDE=16 IN_BATCH_STRIDE=32 OUT_HW=16 WEIGHT_SLICES=2
// @axis - EPILOGUE_IN
// @const EPILOGUE(x,index,slice)=(x)

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in0, 1, In0);
TENSOR_IN(weights, 2, Weights);
TENSOR_IN(bias, 3, Bias);
#if defined(EPILOGUE_IN)
TENSOR_IN(epilogue_in, 4, EpilogueIn);
#endif
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif

// Uniforms (egl/shader_source.h): ROWS, OUT_S (output slices), DEPTH_STEPS,
// OUT_C (output channels), ROW_PIXELS, DEPTH_STRIDE, IN_BATCH_STRIDE
// (IN_S * IN_HW), OUT_HW (output pixels per batch), WEIGHT_SLICES (split-K:
// weight slices per step). Integer divisions by them stay: they are exact
// for any size, and gemm.comp does not run on llvmpipe, which scalarizes
// them, unless a test forces it.

shared vec4 scratch[SHARED_VEC4];

int input_base(int row) {
  return (row / ROW_PIXELS) * IN_BATCH_STRIDE + row % ROW_PIXELS;
}

void store_result(int row, int slice, vec4 sum) {
  if (row >= ROWS || slice >= OUT_S) return;
  int index = ((row / OUT_HW) * OUT_S + slice) * OUT_HW + row % OUT_HW;
  vec4 v = activate(sum + LOAD(bias, slice));
  STORE(out0, index, zero_padded(EPILOGUE(v, index, slice), slice, OUT_C));
}

#define TILE (TILE_ROWS * TILE_SLICES)

#if defined(SPLIT_K)

void main() {
  int tx = int(gl_LocalInvocationID.x);
  int part = int(gl_LocalInvocationID.y);
  int slice = int(gl_WorkGroupID.x) * LOCAL_X + tx;  // < WEIGHT_SLICES
  int first_row = int(gl_WorkGroupID.y) * TILE_ROWS;
  int base[TILE_ROWS];
  vec4 acc[TILE_ROWS];
  for (int p = 0; p < TILE_ROWS; ++p) {
    base[p] = input_base(min(first_row + p, ROWS - 1));
    acc[p] = vec4(0.0);
  }
  for (int d = part; d < DEPTH_STEPS; d += K_PARTS) {
    int w = (d * WEIGHT_SLICES + slice) * 4;
    vec4 w0 = LOAD(weights, w);
    vec4 w1 = LOAD(weights, w + 1);
    vec4 w2 = LOAD(weights, w + 2);
    vec4 w3 = LOAD(weights, w + 3);
    for (int p = 0; p < TILE_ROWS; ++p) {
      vec4 x = LOAD(in0, base[p] + d * DEPTH_STRIDE);
      acc[p] += w0 * x.x + w1 * x.y + w2 * x.z + w3 * x.w;
    }
  }
#if K_PARTS > 1
  for (int p = 0; p < TILE_ROWS; ++p) {
    scratch[(part * LOCAL_X + tx) * TILE_ROWS + p] = acc[p];
  }
  memoryBarrierShared();
  barrier();
  for (int p = part; p < TILE_ROWS; p += K_PARTS) {
    vec4 sum = vec4(0.0);
    for (int q = 0; q < K_PARTS; ++q) {
      sum += scratch[(q * LOCAL_X + tx) * TILE_ROWS + p];
    }
    store_result(first_row + p, slice, sum);
  }
#else
  // One part: no partial sums to meet (SHARED_VEC4 is a token 1).
  for (int p = 0; p < TILE_ROWS; ++p) store_result(first_row + p, slice, acc[p]);
#endif
}

#else

#define WG_ROWS (TILE_ROWS * THREADS_R)
#define WG_SLICES (TILE_SLICES * THREADS_S)

void main() {
  int tx = int(gl_LocalInvocationID.x);
  int part = int(gl_LocalInvocationID.y);
  int tr = tx % THREADS_R;
  int ts = tx / THREADS_R;
  int first_row = int(gl_WorkGroupID.x) * WG_ROWS;
  int group = int(gl_WorkGroupID.y);
  int group_weights = group * DEPTH_STEPS * WG_SLICES * 4;
  int base[TILE_ROWS];
  for (int i = 0; i < TILE_ROWS; ++i) {
    base[i] = input_base(min(first_row + tr + i * THREADS_R, ROWS - 1));
  }
  vec4 acc[TILE];
  for (int t = 0; t < TILE; ++t) acc[t] = vec4(0.0);
  for (int d = part; d < DEPTH_STEPS; d += K_PARTS) {
    vec4 a[TILE_ROWS];
    for (int i = 0; i < TILE_ROWS; ++i) a[i] = LOAD(in0, base[i] + d * DEPTH_STRIDE);
    for (int j = 0; j < TILE_SLICES; ++j) {
      int w = group_weights + (d * WG_SLICES + ts + j * THREADS_S) * 4;
      vec4 w0 = LOAD(weights, w);
      vec4 w1 = LOAD(weights, w + 1);
      vec4 w2 = LOAD(weights, w + 2);
      vec4 w3 = LOAD(weights, w + 3);
      for (int i = 0; i < TILE_ROWS; ++i) {
        acc[i * TILE_SLICES + j] +=
            w0 * a[i].x + w1 * a[i].y + w2 * a[i].z + w3 * a[i].w;
      }
    }
  }
#if K_PARTS > 1
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
