#version 310 es
// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR over PHWC4 tensors, one
// invocation per output vec4, with TFLite's coordinate rules:
//   source = out * SCALE, or (out + 0.5) * SCALE - 0.5 with HALF_PIXEL
//   (nearest: (out + 0.5) * SCALE, then floor, or round half up with
//   ALIGN_CORNERS), clamped to the input.
// SCALE_H/SCALE_W are computed by the kernel exactly as TFLite computes them
// (in / out, or (in - 1) / (out - 1) with ALIGN_CORNERS), in float.
//
// Bindings: 0 = output, 1 = input (same batch and slices).
//
// @axis BILINEAR NEAREST
// @axis - ALIGN_CORNERS
// @axis - HALF_PIXEL
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64
// @const IN_H=2 IN_W=2 OUT_H=4 OUT_W=4 OUT_S=1 OUT_C=4
// @const SCALE_H=0.5 SCALE_W=0.5

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in0, 1, In0);

#if defined(BILINEAR)
// The source coordinate of output position `o` and its two neighbours,
// clamped to [0, size - 1]. The weight of `hi` is source - lo, with lo
// after clamping: at a clamped edge lo == hi, so the weights still sum to 1.
void source_span(int o, float scale, int size, out int lo, out int hi,
                 out float frac) {
#if defined(HALF_PIXEL)
  float source = (float(o) + 0.5) * scale - 0.5;
#else
  float source = float(o) * scale;
#endif
  lo = max(int(floor(source)), 0);
  hi = min(int(ceil(source)), size - 1);
  frac = source - float(lo);
}
#else
// The nearest source position of output position `o`.
int nearest_source(int o, float scale, int size) {
#if defined(HALF_PIXEL)
  float source = (float(o) + 0.5) * scale;
#else
  float source = float(o) * scale;
#endif
  float whole = floor(source);
#if defined(ALIGN_CORNERS)
  // Round half away from zero (source >= 0); source - whole is exact, which
  // floor(source + 0.5) would not be.
  if (source - whole >= 0.5) whole += 1.0;
#endif
  return max(min(int(whole), size - 1), 0);
}
#endif

void main() {
  int i = int(global_index());
  if (i >= TOTAL) return;
  int ox = i % OUT_W;
  int t = i / OUT_W;
  int oy = t % OUT_H;
  t /= OUT_H;
  int s = t % OUT_S;
  int b = t / OUT_S;
  int plane = (b * OUT_S + s) * IN_H;

#if defined(BILINEAR)
  int y0, y1, x0, x1;
  float fy, fx;
  source_span(oy, SCALE_H, IN_H, y0, y1, fy);
  source_span(ox, SCALE_W, IN_W, x0, x1, fx);
  vec4 top_left = LOAD(in0, (plane + y0) * IN_W + x0);
  vec4 top_right = LOAD(in0, (plane + y0) * IN_W + x1);
  vec4 bottom_left = LOAD(in0, (plane + y1) * IN_W + x0);
  vec4 bottom_right = LOAD(in0, (plane + y1) * IN_W + x1);
  vec4 result = top_left * ((1.0 - fy) * (1.0 - fx)) +
                bottom_left * (fy * (1.0 - fx)) +
                top_right * ((1.0 - fy) * fx) + bottom_right * (fy * fx);
#else
  int y = nearest_source(oy, SCALE_H, IN_H);
  int x = nearest_source(ox, SCALE_W, IN_W);
  vec4 result = LOAD(in0, (plane + y) * IN_W + x);
#endif
  STORE(out0, i, zero_padded(result, s, OUT_C));
}
