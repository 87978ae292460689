#version 310 es
// A depthwise convolution fused into the 1x1 GEMM that reads it (as
// gemm.comp's DW_PROLOGUE_*), with the depth (K) split across workgroups
// as well as within them: for small maps (14x14, 7x7), where gemm.comp's
// fused tile must stay at 4 rows a workgroup to make enough workgroups,
// so every workgroup reads all the weights of its slices and the layer
// moves tens of MB of weights from L2 for a few MB of arithmetic
// (docs/perf/log.md, "Split-K across workgroups (skw)").
//
// Workgroup (row group, slice group, chunk) computes WG_ROWS rows x
// WG_SLICES slices over the CHUNK_STEPS depth steps of its chunk: first
// the depthwise outputs of its rows for those steps only into `a_tile`
// ([step][row]; no depthwise is computed twice along the chunk axis), one
// barrier, then invocation (tx, part) sums one output vec4 over the steps
// with step % K_PARTS == part; the parts meet in shared memory. The
// chunk's partial sums go to `partials` (read-write binding 0); one
// invocation counts the chunk on the tile's counter in `arrivals`
// (read-write binding 1); the workgroup that arrives last for the tile adds
// all chunks' partials in chunk order (the same sum whichever arrives
// last), then bias, activation, epilogue, stores, and zeroes the counter for
// the next run. No workgroup waits for another: no forward-progress
// guarantee between workgroups is needed.
//
// ONE_CHUNK (the whole depth in one chunk): no partial sums, no counters;
// the workgroup stores its results (gemm.comp's fused form with the trip
// counts compiled in). CHUNK_EXACT (DEPTH_STEPS a multiple of CHUNK_STEPS):
// the loops run a compile-time count of steps, so the compiler may unroll
// them and issue the weight loads of several steps at once.
//
// Bindings: 0 = output, 1 = the depthwise's input, 2 = GEMM weights
// ([slice group][step][WG_SLICES][4] vec4, as gemm.comp's tiled form),
// 3 = GEMM bias, (4 = EPILOGUE_IN,) then the depthwise weights
// ([slice][tap] vec4) and bias, then the two read-write buffers.
//
// @axis DW_PROLOGUE_NONE DW_PROLOGUE_RELU DW_PROLOGUE_RELU6 DW_PROLOGUE_RELU_N1_TO_1
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID
// @axis - EPILOGUE_IN
// @axis - ONE_CHUNK
// @axis - CHUNK_EXACT
// @const LOCAL_X=64 LOCAL_Y=2 LOCAL_Z=1 WG_ROWS=8 WG_SLICES=8 K_PARTS=2
// @const CHUNK_STEPS=8 SHARED_VEC4=128
// @const DW_KH=3 DW_KW=3 DW_DIL_H=1 DW_DIL_W=1
// @const READ_WRITE_BINDING_0=7 READ_WRITE_BINDING_1=8
// @const EPILOGUE(x,index,slice)=(x)
// @const DW_EPILOGUE(x)=(x)
// @uniform ROWS=16 OUT_S=2 DEPTH_STEPS=2 OUT_C=8 ROW_PIXELS=16 OUT_HW=16
// @uniform DW_IN_H=8 DW_IN_W=8 DW_OUT_W=4 DW_STRIDE_H=2 DW_STRIDE_W=2
// @uniform DW_PAD_TOP=0 DW_PAD_LEFT=0

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in0, 1, In0);
TENSOR_IN(weights, 2, Weights);
TENSOR_IN(bias, 3, Bias);
#if defined(EPILOGUE_IN)
TENSOR_IN(epilogue_in, 4, EpilogueIn);
TENSOR_IN(dw_weights, 5, DwWeights);
TENSOR_IN(dw_bias, 6, DwBias);
#else
TENSOR_IN(dw_weights, 4, DwWeights);
TENSOR_IN(dw_bias, 5, DwBias);
#endif
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif

// fp32 partial sums whatever the storage (the kernel sizes the buffer for
// vec4s); coherent: the last workgroup must see the others' stores, not
// lines its own cache kept.
#if !defined(ONE_CHUNK)
layout(std430, binding = READ_WRITE_BINDING_0) coherent buffer Partials { vec4 partials[]; };
layout(std430, binding = READ_WRITE_BINDING_1) coherent buffer Arrivals { uint arrivals[]; };
#endif

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

// The A tile [step][row], then (after a barrier) the K parts' sums.
shared vec4 a_tile[SHARED_VEC4];
shared uint last_chunk;

void main() {
  int tx = int(gl_LocalInvocationID.x);
  int part = int(gl_LocalInvocationID.y);
  int thread = part * LOCAL_X + tx;
  int tr = tx % WG_ROWS;
  int ts = tx / WG_ROWS;
  int first_row = int(gl_WorkGroupID.x) * WG_ROWS;
  int group = int(gl_WorkGroupID.y);
  int chunk = int(gl_WorkGroupID.z);
  int first_step = chunk * CHUNK_STEPS;
#if defined(CHUNK_EXACT)
  const int steps = CHUNK_STEPS;
#else
  int steps = min(CHUNK_STEPS, DEPTH_STEPS - first_step);
#endif
  {
    // Invocation `thread` computes A row `r` for every
    // (LOCAL_X * K_PARTS / WG_ROWS)-th step of the chunk (the kernel makes
    // the workgroup a multiple of WG_ROWS).
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
    for (int s = thread / WG_ROWS; s < steps; s += LOCAL_X * K_PARTS / WG_ROWS) {
      int d = first_step + s;
      int base_d = plane + d * in_hw;
      vec4 sum = LOAD(dw_bias, d);
      for (int t = 0; t < kTaps; ++t) {
        vec4 x = LOAD(in0, base_d + offset[t]);
        sum += (inside[t] ? x : vec4(0.0)) * LOAD(dw_weights, d * kTaps + t);
      }
      a_tile[s * WG_ROWS + r] = dw_activate(sum);
    }
  }
  memoryBarrierShared();
  barrier();
  vec4 acc = vec4(0.0);
  int w = ((group * DEPTH_STEPS + first_step) * WG_SLICES + ts) * 4;
  for (int s = part; s < steps; s += K_PARTS) {
    vec4 a = a_tile[s * WG_ROWS + tr];
    int ws = w + s * WG_SLICES * 4;
    acc += LOAD(weights, ws) * a.x + LOAD(weights, ws + 1) * a.y +
           LOAD(weights, ws + 2) * a.z + LOAD(weights, ws + 3) * a.w;
  }
#if K_PARTS > 1
  barrier();  // every invocation is done reading the A tile it overwrites
  a_tile[thread] = acc;
  memoryBarrierShared();
  barrier();
  if (part == 0) {
    for (int q = 1; q < K_PARTS; ++q) acc += a_tile[q * LOCAL_X + tx];
  }
#endif
  int row = first_row + tr;
  int slice = group * WG_SLICES + ts;
#if defined(ONE_CHUNK)
  if (part != 0) return;
  vec4 sum = acc;
#else
  int tile_id = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  int tile_base = tile_id * int(gl_NumWorkGroups.z) * LOCAL_X;
  if (part == 0) partials[tile_base + chunk * LOCAL_X + tx] = acc;
  memoryBarrierBuffer();
  barrier();
  if (thread == 0) {
    last_chunk = atomicAdd(arrivals[tile_id], 1u) == gl_NumWorkGroups.z - 1u ? 1u : 0u;
  }
  memoryBarrierShared();
  barrier();
  if (last_chunk == 0u || part != 0) return;
  memoryBarrierBuffer();
  vec4 sum = vec4(0.0);
  int chunks = int(gl_NumWorkGroups.z);
  for (int c = 0; c < chunks; ++c) {
    sum += c == chunk ? acc : partials[tile_base + c * LOCAL_X + tx];
  }
  if (tx == 0) arrivals[tile_id] = 0u;  // every chunk has counted: reset
#endif
  if (row >= ROWS || slice >= OUT_S) return;
  int index = ((row / OUT_HW) * OUT_S + slice) * OUT_HW + row % OUT_HW;
  vec4 v = activate(sum + LOAD(bias, slice));
  STORE(out0, index, zero_padded(EPILOGUE(v, index, slice), slice, OUT_C));
}
