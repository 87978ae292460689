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
// Q_SCALE = s, Q_LO = qmin - z, Q_HI = qmax - z, Q_ROUND_ZERO = 0 or z
// (the domain the op's integer kernel rounds in; ew_fake_quant).
// OP_QUANT_CLAMP is the same step without the rounding (the option
// quantization_simulator=false): x clamped to the real range of the tensor,
// [Q_LO * s, Q_HI * s] given as CLAMP_LO and CLAMP_HI (ew_quant_clamp), which
// TFLite's integer kernels always saturate to (a TF1 model's NONE
// activations are ReLU6 by their output range alone).
//
// @axis - OP_ADD OP_SUB OP_MUL OP_DIV OP_MAXIMUM OP_MINIMUM OP_POW OP_PRELU OP_LOGICAL_AND
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID OP_RELU_0_TO_1 OP_EXP OP_SQRT OP_RSQRT OP_ABS OP_NEG OP_SQUARE OP_LEAKY_RELU OP_ELU OP_HARD_SWISH OP_FAKE_QUANT OP_QUANT_CLAMP
// @axis - A_SPLAT B_SPLAT B_LITERAL
// @axis - EPILOGUE_IN EPILOGUE_IN2
// @const EPILOGUE(x,index,slice)=(x)
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64
// @const OUT_B=1 OUT_H=4 OUT_W=4 OUT_S=1 OUT_C=4
// @const A_B=1 A_H=4 A_W=4 A_S=1 B_B=1 B_H=4 B_W=4 B_S=1 B_VALUE=1.0 ALPHA=0.2
// @const Q_SCALE=0.0078125 Q_ROUND_ZERO=0.0 Q_LO=-128.0 Q_HI=127.0
// @const CLAMP_LO=-1.0 CLAMP_HI=0.9921875

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;
// EPILOGUE_IN2 (binary ops with a tensor B; delegate/passes/fusion.h,
// DeviceProfile::epilogue_second_operand): the epilogue reads a second
// tensor operand, at binding 4, besides the first (binding 3): style
// transfer's norm apply x * s + shift followed by its residual ADD.
#if defined(EPILOGUE_IN2) && !defined(EPILOGUE_IN)
#define EPILOGUE_IN
#endif

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
#if defined(EPILOGUE_IN2)
TENSOR_IN(epilogue_in2, 4, EpilogueIn2);
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

// One binary step and one unary step, each a function of
// elementwise_ops.glsl (part of the preamble), the same functions the fused
// epilogues of delegate/passes/fusion.cc call.
vec4 binary_op(vec4 a, vec4 b) {
#if defined(OP_ADD)
  return ew_add(a, b);
#elif defined(OP_SUB)
  return ew_sub(a, b);
#elif defined(OP_MUL)
  return ew_mul(a, b);
#elif defined(OP_DIV)
  return ew_div(a, b);
#elif defined(OP_MAXIMUM)
  return ew_maximum(a, b);
#elif defined(OP_MINIMUM)
  return ew_minimum(a, b);
#elif defined(OP_POW)
  return ew_pow(a, b);
#elif defined(OP_PRELU)
  return ew_prelu(a, b);
#elif defined(OP_LOGICAL_AND)
  return ew_logical_and(a, b);
#else
  return a;
#endif
}

vec4 unary_op(vec4 x) {
#if defined(OP_RELU_0_TO_1)
  return ew_relu_0_to_1(x);
#elif defined(OP_EXP)
  return ew_exp(x);
#elif defined(OP_SQRT)
  return ew_sqrt(x);
#elif defined(OP_RSQRT)
  return ew_rsqrt(x);
#elif defined(OP_ABS)
  return ew_abs(x);
#elif defined(OP_NEG)
  return ew_neg(x);
#elif defined(OP_SQUARE)
  return ew_square(x);
#elif defined(OP_LEAKY_RELU)
  return ew_leaky_relu(x, ALPHA);
#elif defined(OP_ELU)
  return ew_elu(x);
#elif defined(OP_HARD_SWISH)
  return ew_hard_swish(x);
#elif defined(OP_FAKE_QUANT)
  return ew_fake_quant(x, Q_SCALE, Q_ROUND_ZERO, Q_LO, Q_HI);
#elif defined(OP_QUANT_CLAMP)
  return ew_quant_clamp(x, CLAMP_LO, CLAMP_HI);
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
  // ADD/SUB/MUL/DIV keep TFLite's float range (ew_float_range).
  vec4 result = binary_op(a, other);
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
