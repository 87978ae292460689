#version 310 es
// 2-D pooling over PHWC4 tensors, one invocation per output vec4: AVERAGE,
// MAX, and MAX_ARGMAX (MediaPipe's MaxPoolingWithArgmax2D, which also writes
// where in the window each maximum was found).
//
// Bindings: 0 = output; MAX_ARGMAX: 1 = indices output, 2 = input; others:
// 1 = input. The input has the output's batch and slice count.
// Windows start at (out * STRIDE - PAD) and are clipped to the input, so
// padded positions never take part: AVERAGE divides by the number of valid
// positions (TFLite's rule), MAX ignores them. MAX_ARGMAX writes the index
// ky * FILTER_W + kx of the first strict maximum in row-major window order,
// counted from the unclipped window's corner, plus 0.1 so that a float
// truncation reading it back cannot fall to the integer below.
//
// @axis POOL_AVERAGE POOL_MAX POOL_MAX_ARGMAX
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64
// @const IN_H=8 IN_W=8 OUT_H=4 OUT_W=4 OUT_S=1 OUT_C=4
// @const FILTER_H=2 FILTER_W=2 STRIDE_H=2 STRIDE_W=2 PAD_H=0 PAD_W=0

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
#if defined(POOL_MAX_ARGMAX)
TENSOR_OUT(indices, 1, Indices);
TENSOR_IN(in0, 2, In0);
#else
TENSOR_IN(in0, 1, In0);
#endif

// The most negative finite float: the CPU kernels start their maximum there.
const float kLowest = -3.402823466e38;

void main() {
  int i = int(global_index());
  if (i >= TOTAL) return;
  int ox = i % OUT_W;
  int t = i / OUT_W;
  int oy = t % OUT_H;
  t /= OUT_H;
  int s = t % OUT_S;
  int b = t / OUT_S;

  int x0 = ox * STRIDE_W - PAD_W;
  int y0 = oy * STRIDE_H - PAD_H;
  int kx_begin = max(0, -x0);
  int kx_end = min(FILTER_W, IN_W - x0);
  int ky_begin = max(0, -y0);
  int ky_end = min(FILTER_H, IN_H - y0);
  int plane = (b * OUT_S + s) * IN_H;

  // The loops run over the whole window with constant bounds (the compiler
  // can unroll small windows; llvmpipe pays per dynamic loop iteration);
  // positions outside the input load a clamped neighbour and are masked.
#if defined(POOL_AVERAGE)
  vec4 sum = vec4(0.0);
#else
  vec4 result = vec4(kLowest);
#endif
#if defined(POOL_MAX_ARGMAX)
  vec4 where = vec4(0.0);
#endif
  for (int ky = 0; ky < FILTER_H; ++ky) {
    int y = y0 + ky;
    bool row_inside = y >= 0 && y < IN_H;
    int row = (plane + clamp(y, 0, IN_H - 1)) * IN_W;
    for (int kx = 0; kx < FILTER_W; ++kx) {
      int x = x0 + kx;
      bool inside = row_inside && x >= 0 && x < IN_W;
      vec4 v = LOAD(in0, row + clamp(x, 0, IN_W - 1));
#if defined(POOL_AVERAGE)
      sum += inside ? v : vec4(0.0);
#elif defined(POOL_MAX_ARGMAX)
      bvec4 larger = greaterThan(inside ? v : vec4(kLowest), result);
      where = mix(where, vec4(float(ky * FILTER_W + kx)), larger);
      result = mix(result, v, larger);
#else
      result = inside ? max(result, v) : result;
#endif
    }
  }
#if defined(POOL_AVERAGE)
  int count = max(1, (ky_end - ky_begin) * (kx_end - kx_begin));
  vec4 result = sum / float(count);
#endif
  STORE(out0, i, zero_padded(activate(result), s, OUT_C));
#if defined(POOL_MAX_ARGMAX)
  STORE(indices, i, zero_padded(where + vec4(0.1), s, OUT_C));
#endif
}
