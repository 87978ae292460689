#version 310 es
// Normalizations along the channel axis of a PHWC4 tensor:
//   OP_SOFTMAX:          exp(BETA * (x - max)) / sum over channels; the
//                        maximum is subtracted first so exp() cannot overflow.
//   OP_L2_NORMALIZATION: x / max(sqrt(sum of x^2), EPSILON).
// Two layouts of the work:
//   (default) one invocation per pixel walks all of its slices: many pixels,
//             few channels (segmentation maps).
//   WIDE      one workgroup of exactly 64 invocations per pixel, each taking
//             every 64th slice, partial results combined in shared memory:
//             few pixels, many channels (a classifier's 1001 classes), where
//             one invocation alone would be a long serial loop on a GPU.
//             GLSL ES forbids barrier() in control flow, so the tree
//             reduction is written out step by step.
//
// Bindings: 0 = output, 1 = input (same shape).
// Padded lanes of the last slice hold zeros; a zero is a valid candidate for
// a maximum and adds exp(-max) to a softmax sum, so they are masked here
// explicitly (squares of zeros need no mask).
//
// @axis OP_SOFTMAX OP_L2_NORMALIZATION
// @axis - WIDE
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=16
// @const H=4 W=4 S=2 C=6 BETA=1.0 EPSILON=1e-6

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in0, 1, In0);

const float kLowest = -3.402823466e38;
const int kSliceStride = H * W;

#if defined(WIDE)
const int kLanes = 64;  // the kernel dispatches workgroups of exactly 64
int g_lane;
#define FIRST_SLICE g_lane
#define SLICE_STEP kLanes
#else
#define FIRST_SLICE 0
#define SLICE_STEP 1
#endif

vec4 masked_for_max(vec4 v, int s) {
  return mix(vec4(kLowest), v, lessThan(ivec4(s * 4) + ivec4(0, 1, 2, 3), ivec4(C)));
}

#if defined(WIDE)
shared float g_partial[kLanes];
// One step of the tree: lanes below `k` fold in the value k lanes above.
#define FOLD_MAX(k) if (g_lane < k) g_partial[g_lane] = max(g_partial[g_lane], g_partial[g_lane + k]);
#define FOLD_SUM(k) if (g_lane < k) g_partial[g_lane] += g_partial[g_lane + k];
#endif

void main() {
#if defined(WIDE)
  g_lane = int(gl_LocalInvocationID.x);
  int pixel = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  // Workgroups past the last pixel still reach every barrier (no early
  // return before a barrier is allowed); they just load and store nothing.
  bool in_range = pixel < TOTAL;
#else
  int pixel = int(global_index());
  if (pixel >= TOTAL) return;
  bool in_range = true;
#endif
  int b = pixel / (H * W);
  int hw = pixel % (H * W);
  int first = b * S * H * W + hw;  // slice 0 of this pixel
  int slice_end = in_range ? S : 0;

#if defined(OP_SOFTMAX)
  vec4 largest = vec4(kLowest);
  for (int s = FIRST_SLICE; s < slice_end; s += SLICE_STEP) {
    largest = max(largest, masked_for_max(LOAD(in0, first + s * kSliceStride), s));
  }
  float m = max(max(largest.x, largest.y), max(largest.z, largest.w));
#if defined(WIDE)
  g_partial[g_lane] = m;
  barrier();
  FOLD_MAX(32) barrier();
  FOLD_MAX(16) barrier();
  FOLD_MAX(8) barrier();
  FOLD_MAX(4) barrier();
  FOLD_MAX(2) barrier();
  FOLD_MAX(1) barrier();
  m = g_partial[0];
  barrier();
#endif
  float total = 0.0;
  for (int s = FIRST_SLICE; s < slice_end; s += SLICE_STEP) {
    vec4 e = exp((LOAD(in0, first + s * kSliceStride) - vec4(m)) * BETA);
    total += dot(zero_padded(e, s, C), vec4(1.0));
  }
#else
  float total = 0.0;
  for (int s = FIRST_SLICE; s < slice_end; s += SLICE_STEP) {
    vec4 v = LOAD(in0, first + s * kSliceStride);
    total += dot(v, v);
  }
#endif
#if defined(WIDE)
  g_partial[g_lane] = total;
  barrier();
  FOLD_SUM(32) barrier();
  FOLD_SUM(16) barrier();
  FOLD_SUM(8) barrier();
  FOLD_SUM(4) barrier();
  FOLD_SUM(2) barrier();
  FOLD_SUM(1) barrier();
  total = g_partial[0];
#endif

#if defined(OP_SOFTMAX)
  float scale = 1.0 / total;
  for (int s = FIRST_SLICE; s < slice_end; s += SLICE_STEP) {
    vec4 e = exp((LOAD(in0, first + s * kSliceStride) - vec4(m)) * BETA);
    STORE(out0, first + s * kSliceStride, zero_padded(e * scale, s, C));
  }
#else
  float scale = 1.0 / max(sqrt(total), EPSILON);
  for (int s = FIRST_SLICE; s < slice_end; s += SLICE_STEP) {
    vec4 v = LOAD(in0, first + s * kSliceStride);
    STORE(out0, first + s * kSliceStride, zero_padded(v * scale, s, C));
  }
#endif
}
