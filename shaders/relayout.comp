#version 310 es
// Data movement between PHWC4 tensors: every output element is copied from
// one input element (or is a pad value). One invocation per output vec4.
//
// Bindings: 0 = output, 1 = input.
// How an output coordinate o = (b, h, w, c) finds its source p:
//   MODE_AFFINE          p[k] = BEGIN[k] + STRIDE[k] * o[SRC_AXIS[k]]
//                        (TRANSPOSE, SLICE, STRIDED_SLICE, SPLIT, PAD);
//                        STRIDE 0 pins an axis the input does not have
//   MODE_FLAT            same position in BHWC element order (RESHAPE)
//   MODE_DEPTH_TO_SPACE  / MODE_SPACE_TO_DEPTH with block size BLOCK
// A source outside the input is padding: PAD_CONSTANT gives PAD_VALUE,
// PAD_REFLECT / PAD_SYMMETRIC mirror it back inside (MIRROR_PAD).
// VEC4_COPY: the kernel proved that channels map straight through with a
// slice-aligned offset, so a whole vec4 moves with one load.
//
// @axis MODE_AFFINE MODE_FLAT MODE_DEPTH_TO_SPACE MODE_SPACE_TO_DEPTH
// @axis - PAD_CONSTANT PAD_REFLECT PAD_SYMMETRIC
// @axis - VEC4_COPY
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64
// @const OUT_B=1 OUT_H=4 OUT_W=4 OUT_S=1 OUT_C=4
// @const IN_B=1 IN_H=4 IN_W=4 IN_S=1 IN_C=4
// @const SRC_AXIS=ivec4(0,1,2,3) BEGIN=ivec4(0,0,0,0) STRIDE=ivec4(1,1,1,1)
// @const PAD_VALUE=0.0 BLOCK=2

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in0, 1, In0);

// p = (b, h, w, c) of the input.
int input_vec4_index(ivec4 p) {
  return ((p.x * IN_S + p.w / 4) * IN_H + p.y) * IN_W + p.z;
}

ivec4 source_of(ivec4 o) {
#if defined(MODE_AFFINE)
  ivec4 picked = ivec4(o[SRC_AXIS.x], o[SRC_AXIS.y], o[SRC_AXIS.z], o[SRC_AXIS.w]);
  return BEGIN + STRIDE * picked;
#elif defined(MODE_FLAT)
  int linear = ((o.x * OUT_H + o.y) * OUT_W + o.z) * OUT_C + o.w;
  ivec4 p;
  p.w = linear % IN_C;
  linear /= IN_C;
  p.z = linear % IN_W;
  linear /= IN_W;
  p.y = linear % IN_H;
  p.x = linear / IN_H;
  return p;
#elif defined(MODE_DEPTH_TO_SPACE)
  return ivec4(o.x, o.y / BLOCK, o.z / BLOCK,
               ((o.y % BLOCK) * BLOCK + o.z % BLOCK) * OUT_C + o.w);
#elif defined(MODE_SPACE_TO_DEPTH)
  int block = o.w / IN_C;
  return ivec4(o.x, o.y * BLOCK + block / BLOCK, o.z * BLOCK + block % BLOCK,
               o.w % IN_C);
#endif
}

bool inside_input(ivec4 p) {
  return all(greaterThanEqual(p, ivec4(0))) &&
         all(lessThan(p, ivec4(IN_B, IN_H, IN_W, IN_C)));
}

// Mirrors a padded coordinate back into [0, n) (one reflection suffices:
// TFLite limits MIRROR_PAD paddings to the dimension size).
int mirrored(int x, int n) {
#if defined(PAD_REFLECT)
  if (x < 0) x = -x;
  if (x >= n) x = 2 * (n - 1) - x;
#elif defined(PAD_SYMMETRIC)
  if (x < 0) x = -x - 1;
  if (x >= n) x = 2 * n - 1 - x;
#endif
  return x;
}

ivec4 mirrored4(ivec4 p) {
  return ivec4(mirrored(p.x, IN_B), mirrored(p.y, IN_H), mirrored(p.z, IN_W),
               mirrored(p.w, IN_C));
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

  vec4 v = vec4(0.0);
#if defined(VEC4_COPY)
  ivec4 p = source_of(ivec4(b, h, w, s * 4));
#if defined(PAD_CONSTANT)
  v = inside_input(p) ? LOAD(in0, input_vec4_index(p)) : vec4(PAD_VALUE);
#else
  v = LOAD(in0, input_vec4_index(mirrored4(p)));
#endif
#else
  for (int lane = 0; lane < 4; ++lane) {
    int c = s * 4 + lane;
    if (c >= OUT_C) break;
    ivec4 p = source_of(ivec4(b, h, w, c));
#if defined(PAD_CONSTANT)
    if (!inside_input(p)) {
      v[lane] = PAD_VALUE;
      continue;
    }
#else
    p = mirrored4(p);
#endif
    v[lane] = LOAD(in0, input_vec4_index(p))[p.w % 4];
  }
#endif
  STORE(out0, i, zero_padded(v, s, OUT_C));
}
