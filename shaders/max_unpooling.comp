#version 310 es
// MediaPipe's MaxUnpooling2D over PHWC4 tensors, written as a gather: one
// invocation per output vec4.
//
// Bindings: 0 = output, 1 = pooled values, 2 = argmax indices (floats, as
// MaxPoolingWithArgmax2D writes them: ky * FILTER_W + kx + 0.1).
// The op scatters each pooled value to (in * STRIDE - PAD + (ky, kx)) of its
// window, later windows (row-major) overwriting earlier ones, zero elsewhere.
// Here each output position visits the windows that cover it in that same
// order and keeps the last one whose index names it. An index outside its
// own window (never produced by MaxPoolingWithArgmax2D) is ignored.
//
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64
// @const IN_H=2 IN_W=2 OUT_H=4 OUT_W=4 OUT_S=1 OUT_C=4
// @const FILTER_H=2 FILTER_W=2 STRIDE_H=2 STRIDE_W=2 PAD_H=0 PAD_W=0

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(values, 1, Values);
TENSOR_IN(indices, 2, Indices);

// The first window (along one axis) that covers padded position `p`: the
// smallest n >= 0 with p - n * stride < window.
int first_window(int p, int window, int stride) {
  int past = p - window + 1;
  return past <= 0 ? 0 : (past + stride - 1) / stride;
}

void main() {
  int i = int(global_index());
  if (i >= TOTAL) return;
  int ox = i % OUT_W;
  int t = i / OUT_W;
  int oy = t % OUT_H;
  t /= OUT_H;
  int s = t % OUT_S;
  int b = t / OUT_S;

  int py = oy + PAD_H;
  int px = ox + PAD_W;
  int iy_first = first_window(py, FILTER_H, STRIDE_H);
  int ix_first = first_window(px, FILTER_W, STRIDE_W);
  int iy_end = min(IN_H - 1, py / STRIDE_H) + 1;
  int ix_end = min(IN_W - 1, px / STRIDE_W) + 1;
  int plane = (b * OUT_S + s) * IN_H;
  vec4 result = vec4(0.0);
  // At most ceil(FILTER / STRIDE) windows cover a position along an axis:
  // constant loop bounds (llvmpipe pays per dynamic iteration), windows
  // past the input masked out after a clamped load.
  for (int n = 0; n < (FILTER_H + STRIDE_H - 1) / STRIDE_H; ++n) {
    int iy = iy_first + n;
    bool row_covers = iy < iy_end;
    int row = (plane + min(iy, IN_H - 1)) * IN_W;
    int ky = py - iy * STRIDE_H;
    for (int m = 0; m < (FILTER_W + STRIDE_W - 1) / STRIDE_W; ++m) {
      int ix = ix_first + m;
      int x = min(ix, IN_W - 1);
      int here = ky * FILTER_W + (px - ix * STRIDE_W);
      // int() truncates toward zero, like the CPU op's float-to-int cast.
      bvec4 chosen = (row_covers && ix < ix_end)
                         ? equal(ivec4(LOAD(indices, row + x)), ivec4(here))
                         : bvec4(false);
      result = mix(result, LOAD(values, row + x), chosen);
    }
  }
  STORE(out0, i, zero_padded(result, s, OUT_C));
}
