#version 310 es
// CONCATENATION of up to 8 PHWC4 inputs along one axis (longer lists are
// split by the kernel into dispatches over disjoint output ranges).
//
// Bindings: 0 = output, 1..NUM_INPUTS = inputs. Input k starts at OFFk and
// spans LENk along the axis: batches (AXIS_B), rows (AXIS_H), columns
// (AXIS_W), whole slices (AXIS_C_SLICES: every input but the last has a
// multiple of 4 channels, so vec4s move whole), or single channels
// (AXIS_C_LANES: offsets not slice-aligned, each lane finds its input).
// This dispatch covers UNIT_COUNT units (batches, rows, columns or output
// slices) from UNIT_BEGIN; OUT_* is the whole output. The fused activation
// (ACT_*) is applied to every element.
//
// EPILOGUE(x,index,slice) (delegate/passes/fusion.h): an elementwise step
// fused into the store of a dispatch over the whole output (the hair
// stand-in's PRELU after its initial CONCATENATION), with its tensor
// operand, if any, at binding EPILOGUE_BINDING (NUM_INPUTS + 1: EPILOGUE_IN).
// @axis - EPILOGUE_IN
// @const EPILOGUE_BINDING=9 EPILOGUE(x,index,slice)=(x)
//
// POOL_FIRST (delegate/passes/pool_fusion.h; AXIS_C_SLICES): input 0 is a
// max pooling's input, pooled here over POOL_K x POOL_K windows that tile it
// (filter = stride, no padding) as shaders/pooling.comp pools it: from the
// lowest float, max() with POOL_MAX_OP 1 (POOL_MAX), else the first strict
// maximum (POOL_MAX_ARGMAX).
// @axis - POOL_FIRST
// @const POOL_K=2 POOL_MAX_OP=0
//
// @axis AXIS_B AXIS_H AXIS_W AXIS_C_SLICES AXIS_C_LANES
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64 NUM_INPUTS=8
// @const UNIT_BEGIN=0 UNIT_COUNT=1
// @const OUT_B=1 OUT_H=4 OUT_W=4 OUT_S=1 OUT_C=4
// @const OFF0=0 OFF1=1 OFF2=2 OFF3=3 OFF4=4 OFF5=5 OFF6=6 OFF7=7
// @const LEN0=1 LEN1=1 LEN2=1 LEN3=1 LEN4=1 LEN5=1 LEN6=1 LEN7=1

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
#if NUM_INPUTS > 0
TENSOR_IN(in0, 1, In0);
#endif
#if NUM_INPUTS > 1
TENSOR_IN(in1, 2, In1);
#endif
#if NUM_INPUTS > 2
TENSOR_IN(in2, 3, In2);
#endif
#if NUM_INPUTS > 3
TENSOR_IN(in3, 4, In3);
#endif
#if NUM_INPUTS > 4
TENSOR_IN(in4, 5, In4);
#endif
#if NUM_INPUTS > 5
TENSOR_IN(in5, 6, In5);
#endif
#if NUM_INPUTS > 6
TENSOR_IN(in6, 7, In6);
#endif
#if NUM_INPUTS > 7
TENSOR_IN(in7, 8, In7);
#endif
#if defined(EPILOGUE_IN)
TENSOR_IN(epilogue_in, EPILOGUE_BINDING, EpilogueIn);
#endif
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif

int index4(int b, int s, int h, int w, int slices, int height, int width) {
  return ((b * slices + s) * height + h) * width + w;
}

// Index in an input spanning `len` along the axis, of the element at
// (b, s, h, w) with the axis coordinate already made relative (`a`).
int input_index(int b, int s, int h, int w, int a, int len) {
#if defined(AXIS_B)
  return index4(a, s, h, w, OUT_S, OUT_H, OUT_W);
#elif defined(AXIS_H)
  return index4(b, s, a, w, OUT_S, len, OUT_W);
#elif defined(AXIS_W)
  return index4(b, s, h, a, OUT_S, OUT_H, len);
#else
  return index4(b, a, h, w, len, OUT_H, OUT_W);
#endif
}

#define TAKE_VEC4(name, off, len) \
  if (a >= off && a < off + len) v = LOAD(name, input_index(b, s, h, w, a - off, len));
#define TAKE_LANE(name, off, len)                                            \
  if (c >= off && c < off + len) {                                           \
    int cc = c - off;                                                        \
    v[lane] = LOAD(name, index4(b, cc / 4, h, w, (len + 3) / 4, OUT_H, OUT_W))[cc % 4]; \
  }

#if !defined(POOL_MAX_OP)
#define POOL_MAX_OP 0
#endif
#if POOL_MAX_OP
#define POOL_STEP(m, v) max(m, v)
#else
#define POOL_STEP(m, v) mix(m, v, greaterThan(v, m))
#endif
#define TAKE_POOLED(name, off, len)                                           \
  if (a >= off && a < off + len) {                                            \
    v = vec4(-3.402823466e38);                                                \
    for (int ky = 0; ky < POOL_K; ++ky) {                                     \
      for (int kx = 0; kx < POOL_K; ++kx) {                                   \
        vec4 p = LOAD(name, index4(b, a - off, h * POOL_K + ky, w * POOL_K + kx, \
                                   len, OUT_H * POOL_K, OUT_W * POOL_K));     \
        v = POOL_STEP(v, p);                                                  \
      }                                                                       \
    }                                                                         \
  }

void main() {
  int i = int(global_index());
  if (i >= TOTAL) return;
  // Decode i over the dispatch's range: the axis dimension is UNIT_COUNT.
#if defined(AXIS_B)
  const ivec4 range = ivec4(UNIT_COUNT, OUT_S, OUT_H, OUT_W);
#elif defined(AXIS_H)
  const ivec4 range = ivec4(OUT_B, OUT_S, UNIT_COUNT, OUT_W);
#elif defined(AXIS_W)
  const ivec4 range = ivec4(OUT_B, OUT_S, OUT_H, UNIT_COUNT);
#else
  const ivec4 range = ivec4(OUT_B, UNIT_COUNT, OUT_H, OUT_W);
#endif
  int w = i % range.w;
  int t = i / range.w;
  int h = t % range.z;
  t /= range.z;
  int s = t % range.y;
  int b = t / range.y;
#if defined(AXIS_B)
  b += UNIT_BEGIN;
  int a = b;
#elif defined(AXIS_H)
  h += UNIT_BEGIN;
  int a = h;
#elif defined(AXIS_W)
  w += UNIT_BEGIN;
  int a = w;
#else
  s += UNIT_BEGIN;
  int a = s;
#endif

  vec4 v = vec4(0.0);
#if defined(AXIS_C_LANES)
  for (int lane = 0; lane < 4; ++lane) {
    int c = s * 4 + lane;
#define TAKE TAKE_LANE
#else
  {
#define TAKE TAKE_VEC4
#endif
#if defined(POOL_FIRST)
    TAKE_POOLED(in0, OFF0, LEN0)
#elif NUM_INPUTS > 0
    TAKE(in0, OFF0, LEN0)
#endif
#if NUM_INPUTS > 1
    TAKE(in1, OFF1, LEN1)
#endif
#if NUM_INPUTS > 2
    TAKE(in2, OFF2, LEN2)
#endif
#if NUM_INPUTS > 3
    TAKE(in3, OFF3, LEN3)
#endif
#if NUM_INPUTS > 4
    TAKE(in4, OFF4, LEN4)
#endif
#if NUM_INPUTS > 5
    TAKE(in5, OFF5, LEN5)
#endif
#if NUM_INPUTS > 6
    TAKE(in6, OFF6, LEN6)
#endif
#if NUM_INPUTS > 7
    TAKE(in7, OFF7, LEN7)
#endif
  }
  int out_index = index4(b, s, h, w, OUT_S, OUT_H, OUT_W);
  STORE(out0, out_index, zero_padded(EPILOGUE(activate(v), out_index, s), s, OUT_C));
}
