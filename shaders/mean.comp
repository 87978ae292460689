#version 310 es
// MEAN over any of H, W and C of a PHWC4 tensor, one invocation per output
// vec4 looping over the reduced positions (a global mean of a big map is one
// long loop per slice: cheap next to the layers around it).
//
// Bindings: 0 = output, 1 = input.
// The kept dimensions, in B, H, W, C order, enumerate the output's elements
// in TFLite order whether or not the reduced ones were kept as size 1, so an
// output element's flat index is decomposed over KEPT_H x KEPT_W (1 where
// reduced); the output's own Shape4 can then be anything (a rank-1 or rank-3
// result moves batch or width into channels).
//   KEEP_C:   channels are kept: a vec4 is one pixel's slice, reduced as one.
//   REDUCE_C: each lane is its own output element, summed over all input
//             slices (padded lanes hold zeros, so they add nothing).
// REDUCE_H / REDUCE_W loop over that whole input axis. ACT_* (global
// average pooling through this shader) clamps the mean.
// EPILOGUE(x,index,slice) (delegate/passes/fusion.h): a unary elementwise
// step fused into the store after the activation (a quantized
// AVERAGE_POOL_2D's simulator step); no tensor operand.
// COOPERATIVE (with KEEP_C): one workgroup of LOCAL_X (64, 256 or 1024)
// per output vec4, its invocations taking every LOCAL_X-th position of the
// window, partial sums met in shared memory: on a GPU a window of thousands
// of positions walked by one invocation is a serial chain of fetches (style
// transfer's instance norms: 50-80 us per mean on an H200, and still 50 with
// 64 invocations sharing a 96x96 window). The partials are added in two
// steps: 32 invocations each add LOCAL_X / 32 of them, then the first adds
// those 32 (barrier() only directly in main, never after a return: GLSL ES
// 3.10).
//
// @axis KEEP_C REDUCE_C
// @axis - REDUCE_H
// @axis - REDUCE_W
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1
// @axis - COOPERATIVE
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64
// @const IN_H=4 IN_W=4 IN_S=2 OUT_H=1 OUT_W=1 OUT_S=2 OUT_C=8
// @const KEPT_H=1 KEPT_W=1 COUNT=16
// @const EPILOGUE(x,index,slice)=(x)

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in0, 1, In0);
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif

#if defined(REDUCE_H)
#define H_BEGIN(kh) 0
#define H_END(kh) IN_H
#else
#define H_BEGIN(kh) (kh)
#define H_END(kh) ((kh) + 1)
#endif
#if defined(REDUCE_W)
#define W_BEGIN(kw) 0
#define W_END(kw) IN_W
#else
#define W_BEGIN(kw) (kw)
#define W_END(kw) ((kw) + 1)
#endif

// Sum of slice `s` of batch `kb` over the reduced H/W positions around the
// kept (kh, kw).
vec4 window_sum(int kb, int s, int kh, int kw) {
  vec4 sum = vec4(0.0);
  for (int y = H_BEGIN(kh); y < H_END(kh); ++y) {
    int row = ((kb * IN_S + s) * IN_H + y) * IN_W;
    for (int x = W_BEGIN(kw); x < W_END(kw); ++x) sum += LOAD(in0, row + x);
  }
  return sum;
}

#if defined(COOPERATIVE) && defined(KEEP_C)
#if LOCAL_X != 64 && LOCAL_X != 256 && LOCAL_X != 1024
#error COOPERATIVE needs LOCAL_X of 64, 256 or 1024
#endif
const int kPerAdder = LOCAL_X / 32;  // partials each of the 32 adders sums
#if defined(REDUCE_H)
#define WINDOW_H IN_H
#else
#define WINDOW_H 1
#endif
#if defined(REDUCE_W)
#define WINDOW_W IN_W
#else
#define WINDOW_W 1
#endif
shared vec4 partial[LOCAL_X];
shared vec4 partial32[32];

void main() {
  int i = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  int lane = int(gl_LocalInvocationID.x);
  // Workgroups past the last output (a grid split over y) sum nothing and
  // store nothing; they do not return early, as barrier() forbids.
  bool valid = i < TOTAL;
  int w = i % OUT_W;
  int t = i / OUT_W;
  int h = t % OUT_H;
  t /= OUT_H;
  int s = t % OUT_S;
  int b = t / OUT_S;
  int pixel = (b * OUT_H + h) * OUT_W + w;
  int kw = pixel % KEPT_W;
  pixel /= KEPT_W;
  int kh = pixel % KEPT_H;
  int kb = pixel / KEPT_H;
  int plane = (kb * IN_S + s) * IN_H;
  vec4 sum = vec4(0.0);
  int positions = valid ? WINDOW_H * WINDOW_W : 0;
  for (int p = lane; p < positions; p += LOCAL_X) {
    int y = H_BEGIN(kh) + p / WINDOW_W;
    int x = W_BEGIN(kw) + p % WINDOW_W;
    sum += LOAD(in0, (plane + y) * IN_W + x);
  }
  partial[lane] = sum;
  memoryBarrierShared();
  barrier();
  if (lane < 32) {
    vec4 part = vec4(0.0);
    for (int k = 0; k < kPerAdder; ++k) part += partial[lane * kPerAdder + k];
    partial32[lane] = part;
  }
  memoryBarrierShared();
  barrier();
  vec4 total = vec4(0.0);
  if (lane == 0) {
    for (int k = 0; k < 32; ++k) total += partial32[k];
  }
  if (valid && lane == 0) {
    STORE(out0, i, zero_padded(EPILOGUE(activate(total / float(COUNT)), i, s), s, OUT_C));
  }
}
#else
void main() {
  int i = int(global_index());
  if (i >= TOTAL) return;
  int w = i % OUT_W;
  int t = i / OUT_W;
  int h = t % OUT_H;
  t /= OUT_H;
  int s = t % OUT_S;
  int b = t / OUT_S;

#if defined(KEEP_C)
  int pixel = (b * OUT_H + h) * OUT_W + w;
  int kw = pixel % KEPT_W;
  pixel /= KEPT_W;
  vec4 result = window_sum(pixel / KEPT_H, s, pixel % KEPT_H, kw) / float(COUNT);
#else
  vec4 result = vec4(0.0);
  int first = ((b * OUT_H + h) * OUT_W + w) * OUT_C + s * 4;
  int lanes = min(4, OUT_C - s * 4);
  for (int k = 0; k < lanes; ++k) {
    int element = first + k;
    int kw = element % KEPT_W;
    element /= KEPT_W;
    int kh = element % KEPT_H;
    int kb = element / KEPT_H;
    vec4 sum = vec4(0.0);
    for (int slice = 0; slice < IN_S; ++slice) sum += window_sum(kb, slice, kh, kw);
    result[k] = dot(sum, vec4(1.0)) / float(COUNT);
  }
#endif
  STORE(out0, i, zero_padded(EPILOGUE(activate(result), i, s), s, OUT_C));
}
#endif  // COOPERATIVE && KEEP_C
