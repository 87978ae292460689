// Elementwise operations, one GLSL function each: the only place their
// formulas are written. Part of every shader's preamble (egl/shader_source.cc
// appends this file, embedded at build time, after the storage macros), so
// glslangValidator checks it with every variant of every shader. Used by
// shaders/elementwise.comp (binary_op, unary_op) and by the epilogues that
// delegate/passes/fusion.cc folds into producers, which only name these
// functions (EPILOGUE = "ew_relu(ew_add(x, LOAD(epilogue_in, index)))").
// Unused functions cost nothing: compilers drop them.
// No "// @" comments here: they would read as shader declarations.

// TFLite's CPU kernels clamp ADD/SUB/MUL/DIV to their activation range,
// which is [-FLT_MAX, FLT_MAX] without an activation: an overflow or x/0
// gives +-3.4028235e38 there, not +-Inf. NaN (0/0) passes through.
vec4 ew_float_range(vec4 v) {
  return mix(clamp(v, vec4(-3.40282347e38), vec4(3.40282347e38)), v, isnan(v));
}

vec4 ew_add(vec4 a, vec4 b) { return ew_float_range(a + b); }
vec4 ew_sub(vec4 a, vec4 b) { return ew_float_range(a - b); }
vec4 ew_mul(vec4 a, vec4 b) { return ew_float_range(a * b); }
vec4 ew_div(vec4 a, vec4 b) { return ew_float_range(a / b); }
vec4 ew_maximum(vec4 a, vec4 b) { return max(a, b); }
vec4 ew_minimum(vec4 a, vec4 b) { return min(a, b); }
// pow() in GLSL is undefined for x < 0; TFLite's CPU (std::pow) defines it
// for integral exponents and gives NaN otherwise, and so does this.
vec4 ew_pow(vec4 x, vec4 y) {
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
// b is alpha.
vec4 ew_prelu(vec4 a, vec4 b) { return mix(a * b, a, greaterThanEqual(a, vec4(0.0))); }
// Booleans are 0.0/1.0.
vec4 ew_logical_and(vec4 a, vec4 b) {
  return vec4(uvec4(notEqual(a, vec4(0.0))) & uvec4(notEqual(b, vec4(0.0))));
}

// TFLite's ReLU family keeps NaN (x < lo ? lo : x); GLSL's max() and
// clamp() are undefined for NaN and give the bound on llvmpipe.
vec4 ew_relu(vec4 x) { return mix(max(x, vec4(0.0)), x, isnan(x)); }
vec4 ew_relu6(vec4 x) { return mix(clamp(x, vec4(0.0), vec4(6.0)), x, isnan(x)); }
vec4 ew_relu_n1_to_1(vec4 x) { return mix(clamp(x, vec4(-1.0), vec4(1.0)), x, isnan(x)); }
vec4 ew_relu_0_to_1(vec4 x) { return mix(clamp(x, vec4(0.0), vec4(1.0)), x, isnan(x)); }
// tanh saturates long before 20; clamping keeps exp() in range on drivers
// that expand tanh as a ratio of exponentials (inf/inf = NaN).
vec4 ew_tanh(vec4 x) { return tanh(clamp(x, vec4(-20.0), vec4(20.0))); }
vec4 ew_sigmoid(vec4 x) { return vec4(1.0) / (vec4(1.0) + exp(-x)); }
vec4 ew_hard_swish(vec4 x) {
  return x * clamp(x + vec4(3.0), vec4(0.0), vec4(6.0)) * (1.0 / 6.0);
}
// The quantization simulator of quantized models (delegate/graph/
// quantization.h): x rounded to the grid of scale s and clamped to [lo, hi]
// steps (qmin - z, qmax - z), in real values. Rounded as TFLite's QUANTIZE
// rounds: x / s divided in float (not multiplied by 1 / s: an input of
// [-1, 1] at scale 1/127.5 lands exactly on ties), then half away from zero
// from the fraction (x / s + 0.5 would round up values just below a tie).
// z is 0 where TFLite's integer kernel rounds q - zero_point (the
// requantization of convolutions, ADD, MEAN ...) and the zero point where it
// rounds q itself (AVERAGE_POOL_2D averages the stored integers).
vec4 ew_fake_quant(vec4 x, float s, float z, float lo, float hi) {
  vec4 v = x / s + z;
  vec4 a = abs(v);
  vec4 f = floor(a);
  vec4 rounded = sign(v) * (f + step(vec4(0.5), a - f)) - z;
  return clamp(rounded, vec4(lo), vec4(hi)) * s;
}
// A float partition input that only QUANTIZE reads, rounded where the
// upload converts it (delegate/graph/quantization.h, "QUANTIZE of an
// input"): TFLite's vector path, x * inv_s (1 / s computed in float, as the
// kernel does) rounded to even and clamped to [lo, hi] steps, in real
// values. GLSL ES rounds highp products correctly, so this is the CPU's
// product; the tail TFLite rounds otherwise arrives on the grid already,
// and values on the grid are fixed points of it. A NaN product (x NaN, or
// 0 * an infinite 1 / s) goes to the zero point, as on the CPU.
vec4 ew_quantize_input(vec4 x, float inv_s, float s, float lo, float hi) {
  vec4 scaled = x * inv_s;
  vec4 q = clamp(roundEven(scaled), vec4(lo), vec4(hi)) * s;
  return mix(q, vec4(0.0), isnan(scaled));
}
// The same without the rounding (quantization_simulator=false): the range
// TFLite's integer kernels saturate to.
vec4 ew_quant_clamp(vec4 x, float lo, float hi) { return clamp(x, vec4(lo), vec4(hi)); }
vec4 ew_leaky_relu(vec4 x, float alpha) {
  return mix(x * alpha, x, greaterThanEqual(x, vec4(0.0)));
}
vec4 ew_abs(vec4 x) { return abs(x); }
vec4 ew_neg(vec4 x) { return -x; }
vec4 ew_square(vec4 x) { return x * x; }
vec4 ew_exp(vec4 x) { return exp(x); }
vec4 ew_sqrt(vec4 x) { return sqrt(x); }
vec4 ew_rsqrt(vec4 x) { return inversesqrt(x); }
// exp() of a large positive x would overflow in the unused branch.
vec4 ew_elu(vec4 x) {
  return mix(exp(min(x, vec4(0.0))) - vec4(1.0), x, greaterThan(x, vec4(0.0)));
}

// The fused activation selected by the kernel's ACT_* define, if any.
vec4 activate(vec4 v) {
#if defined(ACT_RELU)
  return ew_relu(v);
#elif defined(ACT_RELU6)
  return ew_relu6(v);
#elif defined(ACT_RELU_N1_TO_1)
  return ew_relu_n1_to_1(v);
#elif defined(ACT_TANH)
  return ew_tanh(v);
#elif defined(ACT_SIGMOID)
  return ew_sigmoid(v);
#else
  return v;
#endif
}
