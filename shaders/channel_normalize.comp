#version 310 es
// Normalizations along the channel axis of a PHWC4 tensor, one invocation
// per pixel walking all of its slices:
//   OP_SOFTMAX:          exp(BETA * (x - max)) / sum over channels; the
//                        maximum is subtracted first so exp() cannot overflow.
//   OP_L2_NORMALIZATION: x / max(sqrt(sum of x^2), EPSILON).
//
// COOPERATIVE: one workgroup per pixel instead of one invocation, for few
// pixels with many channels (a classifier's 1001 logits: one invocation
// walking 251 slices three times took 49 us on an H200). Each of the
// LOCAL_X (a power of two) invocations takes every LOCAL_X-th slice, and the
// maximum and the sum are combined by a tree reduction in shared memory.
//
// Bindings: 0 = output, 1 = input (same shape).
// Padded lanes of the last slice hold zeros; a zero is a valid candidate for
// a maximum and adds exp(-max) to a softmax sum, so they are masked here
// explicitly (squares of zeros need no mask).
// EPILOGUE(x,index,slice) (delegate/passes/fusion.h): a unary elementwise
// step fused into the store (a quantized SOFTMAX's simulator step); no
// tensor operand.
//
// @axis OP_SOFTMAX OP_L2_NORMALIZATION
// @axis - COOPERATIVE
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=16
// @const H=4 W=4 S=2 C=6 BETA=1.0 EPSILON=1e-6
// @const EPILOGUE(x,index,slice)=(x)

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in0, 1, In0);
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif

const float kLowest = -3.402823466e38;

#if defined(COOPERATIVE)
// GLSL ES 3.10 allows barrier() only directly in main(), outside control
// flow and before any return: so no early return here. Each reduction has
// its own shared array, written once and read once: every invocation stores
// its partial value, and after one barrier each reads all 64 and combines
// them itself (64 shared reads cost less than a tree's 6 barriers). (A tree
// reduction that reused one array passed on llvmpipe and came out slightly
// wrong on NVIDIA's driver.)
#if LOCAL_X != 64
#error COOPERATIVE needs LOCAL_X == 64
#endif
shared float partial_a[64];
shared float partial_b[64];
const int kSliceStep = 64;
float add(float a, float b) { return a + b; }
// Leaves op() of every invocation's `value` in `result`, for all of them.
#define REDUCE(result, value, op, partial) \
  partial[lane] = value; memoryBarrierShared(); barrier(); \
  result = partial[0]; \
  for (int i = 1; i < 64; ++i) result = op(result, partial[i]);
#else
const int kSliceStep = 1;
#define REDUCE(result, value, op, partial) result = value;
#endif

void main() {
#if defined(COOPERATIVE)
  int pixel = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  int lane = int(gl_LocalInvocationID.x);
#else
  int pixel = int(global_index());
  const int lane = 0;
#endif
  // Invocations past the last pixel (a grid rounded up to whole groups)
  // walk no slices; they do not return early, as barrier() forbids.
  int slices = pixel < TOTAL ? S : 0;
  int first = pixel / (H * W) * S * H * W + pixel % (H * W);
  const int kSliceStride = H * W;
#if defined(OP_SOFTMAX)
  vec4 largest = vec4(kLowest);
  for (int s = lane; s < slices; s += kSliceStep) {
    vec4 v = LOAD(in0, first + s * kSliceStride);
    bvec4 real = lessThan(ivec4(s * 4) + ivec4(0, 1, 2, 3), ivec4(C));
    largest = max(largest, mix(vec4(kLowest), v, real));
  }
  float m;
  REDUCE(m, max(max(largest.x, largest.y), max(largest.z, largest.w)), max, partial_a)
  float sum = 0.0;
  for (int s = lane; s < slices; s += kSliceStep) {
    vec4 e = exp((LOAD(in0, first + s * kSliceStride) - vec4(m)) * BETA);
    sum += dot(zero_padded(e, s, C), vec4(1.0));
  }
  REDUCE(sum, sum, add, partial_b)
  float scale = 1.0 / sum;
  for (int s = lane; s < slices; s += kSliceStep) {
    vec4 e = exp((LOAD(in0, first + s * kSliceStride) - vec4(m)) * BETA);
    STORE(out0, first + s * kSliceStride,
          zero_padded(EPILOGUE(e * scale, first + s * kSliceStride, s), s, C));
  }
#else
  float squares = 0.0;
  for (int s = lane; s < slices; s += kSliceStep) {
    vec4 v = LOAD(in0, first + s * kSliceStride);
    squares += dot(v, v);
  }
  REDUCE(squares, squares, add, partial_a)
  float scale = 1.0 / max(sqrt(squares), EPSILON);
  for (int s = lane; s < slices; s += kSliceStep) {
    vec4 v = LOAD(in0, first + s * kSliceStride);
    STORE(out0, first + s * kSliceStride,
          zero_padded(EPILOGUE(v * scale, first + s * kSliceStride, s), s, C));
  }
#endif
}
