#version 310 es
// Elementwise ops over PHWC4 tensors, one invocation per output vec4.
//
// Bindings: 0 = output, 1 = input A, 2 = input B (binary ops only).
// An op is at most one binary step (first @axis) followed by at most one
// unary step (second @axis, which holds the fused activations ACT_* of the
// preamble's activate() and the unary ops): RELU is just ACT_RELU on input
// A, SQUARED_DIFFERENCE is OP_SUB then OP_SQUARE, ADD with a fused RELU6 is
// OP_ADD then ACT_RELU6. With neither step the shader copies A.
// Binary ops broadcast each input along any dimension of size 1 (shape
// constants A_*, B_* against OUT_*); an input with a single channel is
// splatted across the vec4 (A_SPLAT / B_SPLAT); B_LITERAL replaces input B
// by the compile-time scalar B_VALUE. Booleans (LOGICAL_AND) are 0.0/1.0.
// Padded channel lanes are stored as zero. With fp16 storage, results are
// saturated to +-65504 (the largest half): an overflow then stays finite
// instead of becoming an Inf that turns into NaN downstream.
// OP_FAKE_QUANT is the quantization simulator of quantized models
// (delegate/graph/quantization.h): x rounded to the grid of a uint8/int8
// tensor (half away from zero, as TFLite's QUANTIZE) and clamped to its
// range, in real values: clamp(round(x / s), qmin - z, qmax - z) * s, with
// Q_INV_SCALE = 1 / s, Q_SCALE = s, Q_LO = qmin - z, Q_HI = qmax - z.
//
// @axis - OP_ADD OP_SUB OP_MUL OP_DIV OP_MAXIMUM OP_MINIMUM OP_POW OP_PRELU OP_LOGICAL_AND
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID OP_RELU_0_TO_1 OP_EXP OP_SQRT OP_RSQRT OP_ABS OP_NEG OP_SQUARE OP_LEAKY_RELU OP_ELU OP_HARD_SWISH OP_FAKE_QUANT
// @axis - A_SPLAT B_SPLAT B_LITERAL
// @axis - EPILOGUE_IN
// @const EPILOGUE(x,index,slice)=(x)
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64
// @const OUT_B=1 OUT_H=4 OUT_W=4 OUT_S=1 OUT_C=4
// @const A_B=1 A_H=4 A_W=4 A_S=1 B_B=1 B_H=4 B_W=4 B_S=1 B_VALUE=1.0 ALPHA=0.2
// @const Q_INV_SCALE=128.0 Q_SCALE=0.0078125 Q_LO=-128.0 Q_HI=127.0

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

#if defined(OP_ADD) || defined(OP_SUB) || defined(OP_MUL) || \
    defined(OP_DIV) || defined(OP_MAXIMUM) || defined(OP_MINIMUM) || \
    defined(OP_POW) || defined(OP_PRELU) || defined(OP_LOGICAL_AND)
#define BINARY 1
#else
#define BINARY 0
#endif

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in_a, 1, InA);
#if BINARY && !defined(B_LITERAL)
TENSOR_IN(in_b, 2, InB);
#if defined(EPILOGUE_IN)
TENSOR_IN(epilogue_in, 3, EpilogueIn);
#endif
#elif defined(EPILOGUE_IN)
TENSOR_IN(epilogue_in, 2, EpilogueIn);
#endif
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif

// Index of element (b, s, h, w) in an input broadcast to the output shape:
// a dimension of size 1 always reads index 0 (folded at compile time).
int broadcast_index(int b, int s, int h, int w, ivec4 dims) {
  // dims = (B, S, H, W) of the input.
  return (((dims.x == 1 ? 0 : b) * dims.y + (dims.y == 1 ? 0 : s)) * dims.z +
          (dims.z == 1 ? 0 : h)) * dims.w + (dims.w == 1 ? 0 : w);
}

#if defined(OP_POW)
// pow() in GLSL is undefined for x < 0; TFLite's CPU (std::pow) defines it
// for integral exponents and gives NaN otherwise, and so does this.
vec4 power(vec4 x, vec4 y) {
  vec4 magnitude = pow(abs(x), y);
  bvec4 integral = equal(y, floor(y));
  bvec4 odd = notEqual(mod(y, 2.0), vec4(0.0));
  vec4 signed_magnitude =
      mix(magnitude, -magnitude, bvec4(uvec4(odd) & uvec4(integral)));
  vec4 nan = vec4(uintBitsToFloat(0x7fc00000u));
  bvec4 negative = lessThan(x, vec4(0.0));
  vec4 result = mix(magnitude, signed_magnitude, negative);
  return mix(result, nan, bvec4(uvec4(negative) & uvec4(not(integral))));
}
#endif

vec4 binary_op(vec4 a, vec4 b) {
#if defined(OP_ADD)
  return a + b;
#elif defined(OP_SUB)
  return a - b;
#elif defined(OP_MUL)
  return a * b;
#elif defined(OP_DIV)
  return a / b;
#elif defined(OP_MAXIMUM)
  return max(a, b);
#elif defined(OP_MINIMUM)
  return min(a, b);
#elif defined(OP_POW)
  return power(a, b);
#elif defined(OP_PRELU)
  // b is alpha.
  return mix(a * b, a, greaterThanEqual(a, vec4(0.0)));
#elif defined(OP_LOGICAL_AND)
  return vec4(uvec4(notEqual(a, vec4(0.0))) & uvec4(notEqual(b, vec4(0.0))));
#else
  return a;
#endif
}

vec4 unary_op(vec4 x) {
#if defined(OP_RELU_0_TO_1)
  return clamp(x, vec4(0.0), vec4(1.0));
#elif defined(OP_EXP)
  return exp(x);
#elif defined(OP_SQRT)
  return sqrt(x);
#elif defined(OP_RSQRT)
  return inversesqrt(x);
#elif defined(OP_ABS)
  return abs(x);
#elif defined(OP_NEG)
  return -x;
#elif defined(OP_SQUARE)
  return x * x;
#elif defined(OP_LEAKY_RELU)
  return mix(x * ALPHA, x, greaterThanEqual(x, vec4(0.0)));
#elif defined(OP_ELU)
  // exp() of a large positive x would overflow in the unused branch.
  return mix(exp(min(x, vec4(0.0))) - vec4(1.0), x, greaterThan(x, vec4(0.0)));
#elif defined(OP_HARD_SWISH)
  return x * clamp(x + vec4(3.0), vec4(0.0), vec4(6.0)) * (1.0 / 6.0);
#elif defined(OP_FAKE_QUANT)
  // trunc(v + 0.5 sign(v)): half away from zero (GLSL's round() leaves ties
  // to the implementation). Kept in step with fusion.cc's epilogue text.
  return clamp(trunc(x * Q_INV_SCALE + sign(x) * 0.5), vec4(Q_LO), vec4(Q_HI)) *
         Q_SCALE;
#else
  return activate(x);  // ACT_* if one is defined, else the identity
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

  // An input of the output's shape reads element i itself: the shape
  // constants are compared by the preprocessor, so no variant is added.
#if A_B == OUT_B && A_S == OUT_S && A_H == OUT_H && A_W == OUT_W
  vec4 a = LOAD(in_a, i);
#else
  vec4 a = LOAD(in_a, broadcast_index(b, s, h, w, ivec4(A_B, A_S, A_H, A_W)));
#endif
#if defined(A_SPLAT)
  a = a.xxxx;
#endif
  vec4 other = vec4(0.0);
#if BINARY && defined(B_LITERAL)
  other = vec4(B_VALUE);
#elif BINARY
#if B_B == OUT_B && B_S == OUT_S && B_H == OUT_H && B_W == OUT_W
  other = LOAD(in_b, i);
#else
  other = LOAD(in_b, broadcast_index(b, s, h, w, ivec4(B_B, B_S, B_H, B_W)));
#endif
#if defined(B_SPLAT)
  other = other.xxxx;
#endif
#endif
  vec4 result = binary_op(a, other);
#if defined(OP_ADD) || defined(OP_SUB) || defined(OP_MUL) || defined(OP_DIV)
  // TFLite's CPU kernels clamp these to their activation range, which is
  // [-FLT_MAX, FLT_MAX] without an activation: an overflow or x/0 gives
  // +-3.4028235e38 there, not +-Inf. NaN (0/0) passes through.
  result = mix(clamp(result, vec4(-3.40282347e38), vec4(3.40282347e38)), result,
               isnan(result));
#endif
  result = unary_op(result);
  result = EPILOGUE(result, i, s);
#if STORAGE_FP16
  // NaN (POW of a negative base, as on the CPU) is kept: clamp() would
  // turn it into a bound.
  result = mix(clamp(result, vec4(-65504.0), vec4(65504.0)), result,
               isnan(result));
#endif
  STORE(out0, i, zero_padded(result, s, OUT_C));
}
