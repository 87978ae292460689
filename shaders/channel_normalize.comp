#version 310 es
// Normalizations along the channel axis of a PHWC4 tensor, one invocation
// per pixel walking all of its slices:
//   OP_SOFTMAX:          exp(BETA * (x - max)) / sum over channels; the
//                        maximum is subtracted first so exp() cannot overflow.
//   OP_L2_NORMALIZATION: x / max(sqrt(sum of x^2), EPSILON).
//
// Bindings: 0 = output, 1 = input (same shape).
// Padded lanes of the last slice hold zeros; a zero is a valid candidate for
// a maximum and adds exp(-max) to a softmax sum, so they are masked here
// explicitly (squares of zeros need no mask).
//
// @axis OP_SOFTMAX OP_L2_NORMALIZATION
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=16
// @const H=4 W=4 S=2 C=6 BETA=1.0 EPSILON=1e-6

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in0, 1, In0);

const float kLowest = -3.402823466e38;

void main() {
  int pixel = int(global_index());
  if (pixel >= TOTAL) return;
  int b = pixel / (H * W);
  int hw = pixel % (H * W);
  int first = b * S * H * W + hw;  // slice 0 of this pixel
  const int kSliceStride = H * W;

#if defined(OP_SOFTMAX)
  vec4 largest = vec4(kLowest);
  for (int s = 0; s < S; ++s) {
    vec4 v = LOAD(in0, first + s * kSliceStride);
    bvec4 real = lessThan(ivec4(s * 4) + ivec4(0, 1, 2, 3), ivec4(C));
    largest = max(largest, mix(vec4(kLowest), v, real));
  }
  float m = max(max(largest.x, largest.y), max(largest.z, largest.w));
  float sum = 0.0;
  for (int s = 0; s < S; ++s) {
    vec4 e = exp((LOAD(in0, first + s * kSliceStride) - vec4(m)) * BETA);
    sum += dot(zero_padded(e, s, C), vec4(1.0));
  }
  float scale = 1.0 / sum;
  for (int s = 0; s < S; ++s) {
    vec4 e = exp((LOAD(in0, first + s * kSliceStride) - vec4(m)) * BETA);
    STORE(out0, first + s * kSliceStride, zero_padded(e * scale, s, C));
  }
#else
  float squares = 0.0;
  for (int s = 0; s < S; ++s) {
    vec4 v = LOAD(in0, first + s * kSliceStride);
    squares += dot(v, v);
  }
  float scale = 1.0 / max(sqrt(squares), EPSILON);
  for (int s = 0; s < S; ++s) {
    vec4 v = LOAD(in0, first + s * kSliceStride);
    STORE(out0, first + s * kSliceStride, zero_padded(v * scale, s, C));
  }
#endif
}
