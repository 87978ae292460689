#version 310 es
// Elementwise ops over PHWC4 tensors, one invocation per output vec4.
//
// Bindings: 0 = output, 1 = input A, 2 = input B (binary ops only).
// Binary ops broadcast each input along any dimension of size 1 (shape
// constants A_*, B_* against OUT_*); an input with a single channel is
// splatted across the vec4 (A_SPLAT / B_SPLAT); B_LITERAL replaces input B
// by the compile-time scalar B_VALUE. The fused activation (ACT_*, see
// activate() in the preamble) is applied last, and padded channel lanes are
// stored as zero.
//
// @axis OP_ADD OP_SUB OP_MUL OP_RELU OP_RELU6 OP_LOGISTIC
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID
// @axis - A_SPLAT B_SPLAT B_LITERAL
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64
// @const OUT_B=1 OUT_H=4 OUT_W=4 OUT_S=1 OUT_C=4
// @const A_B=1 A_H=4 A_W=4 A_S=1 B_B=1 B_H=4 B_W=4 B_S=1 B_VALUE=1.0

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

#if defined(OP_ADD) || defined(OP_SUB) || defined(OP_MUL)
#define BINARY 1
#else
#define BINARY 0
#endif

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in_a, 1, InA);
#if BINARY && !defined(B_LITERAL)
TENSOR_IN(in_b, 2, InB);
#endif

// Index of element (b, s, h, w) in an input broadcast to the output shape:
// a dimension of size 1 always reads index 0 (folded at compile time).
int broadcast_index(int b, int s, int h, int w, ivec4 dims) {
  // dims = (B, S, H, W) of the input.
  return (((dims.x == 1 ? 0 : b) * dims.y + (dims.y == 1 ? 0 : s)) * dims.z +
          (dims.z == 1 ? 0 : h)) * dims.w + (dims.w == 1 ? 0 : w);
}

vec4 apply_op(vec4 a, vec4 b) {
#if defined(OP_ADD)
  return a + b;
#elif defined(OP_SUB)
  return a - b;
#elif defined(OP_MUL)
  return a * b;
#elif defined(OP_RELU)
  return max(a, vec4(0.0));
#elif defined(OP_RELU6)
  return clamp(a, vec4(0.0), vec4(6.0));
#elif defined(OP_LOGISTIC)
  return vec4(1.0) / (vec4(1.0) + exp(-a));
#endif
}

void main() {
  int i = int(global_index());
  if (i >= TOTAL) return;
  int w = i % OUT_W;
  int t = i / OUT_W;
  int h = t % OUT_H;
  t /= OUT_H;
  int s = t % OUT_S;
  int b = t / OUT_S;

  vec4 a = LOAD(in_a, broadcast_index(b, s, h, w, ivec4(A_B, A_S, A_H, A_W)));
#if defined(A_SPLAT)
  a = a.xxxx;
#endif
  vec4 other = vec4(0.0);
#if BINARY && defined(B_LITERAL)
  other = vec4(B_VALUE);
#elif BINARY
  other = LOAD(in_b, broadcast_index(b, s, h, w, ivec4(B_B, B_S, B_H, B_W)));
#if defined(B_SPLAT)
  other = other.xxxx;
#endif
#endif
  STORE(out0, i, zero_padded(activate(apply_op(a, other)), s, OUT_C));
}
