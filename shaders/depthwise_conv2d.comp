#version 310 es
// DEPTHWISE_CONV_2D over PHWC4 tensors. Each invocation computes a block of
// BLOCK_W x BLOCK_H output pixels of one channel slice, keeping the block in
// registers.
//
// FAST_3X3 (3x3 window, dilation 1, depth multiplier 1): the invocation
// walks the input rows its block's windows cover, loads each row segment
// once and feeds every output of the block that reads it, so a loaded vec4
// serves up to 9 FMAs instead of 1 (llvmpipe pays per load, not per FMA;
// ../shared/research/llvmpipe.md). The 9 weights stay in registers.
// With DILATION_H/W > 1 in FAST_3X3 (stride 1; the kernel defines them only
// then): a block is BLOCK_W x BLOCK_H outputs DILATION apart, which read
// input columns and rows DILATION apart too, so the same window slides over
// them (atrous layers, e.g. DeepLab's, keep the reuse; block x index = phase
// + DILATION_W * block within that phase, likewise y).
// Otherwise (any window, dilation, multiplier) each output gathers its taps;
// with MULTIPLIER > 1 output channel c reads input channel c / MULTIPLIER,
// so each lane comes from its own input vec4.
//
// SLICES_ON_X = 1 puts slices on x and blocks on y: small maps have more
// slices than blocks, and llvmpipe vectorizes x. It is a uniform like the
// shapes, so both orientations of a block shape share one program.
//
// Weights (binding 2): [out slice][tap] vec4. Bias (binding 3): [out slice]
// vec4. Bindings: 0 = output, 1 = input.
//
// EPILOGUE(x,index,slice) (delegate/passes/fusion.h): an elementwise step fused into
// the store, with its tensor operand, if any, at binding 4 (EPILOGUE_IN).
//
// Shapes are uniforms (egl/shader_source.h): layers with the same block,
// window, stride and activation share one program; block, window, stride,
// dilation and multiplier stay compile-time constants (the unrolled loops
// over the block need them). The block index is split with div_mod() (no
// integer division by a uniform, which llvmpipe scalarizes).
//
// @axis - FAST_3X3
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID
// @const LOCAL_X=8 LOCAL_Y=1 LOCAL_Z=1 BLOCK_W=4 BLOCK_H=2 KERNEL_H=3
// @const KERNEL_W=3 STRIDE_H=1 STRIDE_W=1 DILATION_H=1 DILATION_W=1
// @const MULTIPLIER=1
// @uniform BLOCKS_X=2 BLOCKS_Y=2 BLOCKS=4 OUT_S=2 OUT_C=8 OUT_H=4 OUT_W=8
// @uniform IN_S=2 IN_H=4 IN_W=8 PAD_TOP=1 PAD_LEFT=1 SLICES_ON_X=0
// @axis - EPILOGUE_IN
// @const EPILOGUE(x,index,slice)=(x)

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

TENSOR_OUT(out0, 0, Out0);
TENSOR_IN(in0, 1, In0);
TENSOR_IN(weights, 2, Weights);
TENSOR_IN(bias, 3, Bias);
#if defined(EPILOGUE_IN)
TENSOR_IN(epilogue_in, 4, EpilogueIn);
#endif
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif

#define BLOCK (BLOCK_W * BLOCK_H)
#define IN_HW (IN_H * IN_W)

#if !defined(FAST_3X3)
// The input vec4 an output slice reads at input pixel `pixel`: `planes` are
// the start of each lane's input channel plane and `lanes` the channel's
// lane in its vec4 (with MULTIPLIER > 1 output channel c reads input
// channel c / MULTIPLIER, so each lane comes from its own input vec4).
vec4 fetch(ivec4 planes, ivec4 lanes, int pixel) {
#if MULTIPLIER == 1
  return LOAD(in0, planes.x + pixel);
#else
  vec4 v;
  for (int lane = 0; lane < 4; ++lane) {
    v[lane] = LOAD(in0, planes[lane] + pixel)[lanes[lane]];
  }
  return v;
#endif
}
#endif

void main() {
  bool slices_on_x = SLICES_ON_X != 0;
  int slice = int(slices_on_x ? gl_GlobalInvocationID.x : gl_GlobalInvocationID.y);
  int block = int(slices_on_x ? gl_GlobalInvocationID.y : gl_GlobalInvocationID.x);
  if (slice >= OUT_S || block >= BLOCKS) return;
  ivec2 image_block = div_mod(block, BLOCKS_X * BLOCKS_Y);
  ivec2 block_yx = div_mod(image_block.y, BLOCKS_X);
  int b = image_block.x;
  int by = block_yx.x;
  int bx = block_yx.y;
#if defined(FAST_3X3) && defined(DILATION_W)
#define FAST_DH DILATION_H
#define FAST_DW DILATION_W
  // Output (row, column) of the block's first output: phase + block * span.
  int first_y = by % FAST_DH + (by / FAST_DH) * BLOCK_H * FAST_DH;
  int first_x = bx % FAST_DW + (bx / FAST_DW) * BLOCK_W * FAST_DW;
#else
#define FAST_DH 1
#define FAST_DW 1
  int first_y = by * BLOCK_H;
  int first_x = bx * BLOCK_W;
#endif
  int y0 = first_y * STRIDE_H - PAD_TOP;  // input row of output row 0
  int x0 = first_x * STRIDE_W - PAD_LEFT;

  vec4 bias_value = LOAD(bias, slice);

#if defined(FAST_3X3)
  // A window of three input rows slides down the block's column of output
  // rows: each input row is loaded once (stride 1) and each loaded vec4
  // feeds up to 9 FMAs. Register arrays are indexed only by loop counters
  // of small constant loops the compiler unrolls; the row loop itself stays
  // rolled (llvmpipe turns a dynamically indexed register array into
  // scalar spills, 10-40x slower, measured in docs/perf/log.md).
#define FOOT_W ((BLOCK_W - 1) * STRIDE_W + 3)
  vec4 w[9];
  for (int t = 0; t < 9; ++t) w[t] = LOAD(weights, slice * 9 + t);
  // Everything the loops need from the uniform block is read here, once:
  // after the first store the compiler must assume the block could have
  // changed and would read it again in every iteration.
  int in_w = IN_W;
  int in_h = IN_H;
  int out_w = OUT_W;
  // Output rows / columns of this block (FAST_DH / FAST_DW apart).
  int rows_left = (OUT_H - first_y + FAST_DH - 1) / FAST_DH;
  int columns_left = (out_w - first_x + FAST_DW - 1) / FAST_DW;
  int plane = (b * IN_S + slice) * IN_HW + x0;  // input (y0, x0) is plane + y0 * in_w
  int out_index = ((b * OUT_S + slice) * OUT_H + first_y) * out_w + first_x;
  // zero_padded()'s lane mask, computed once for all stores.
  bvec4 live_lanes = lessThan(ivec4(slice * 4) + ivec4(0, 1, 2, 3), ivec4(OUT_C));
  bool column_inside[FOOT_W];
  for (int c = 0; c < FOOT_W; ++c) {
    column_inside[c] = x0 + c * FAST_DW >= 0 && x0 + c * FAST_DW < in_w;
  }
  vec4 row0[FOOT_W];
  vec4 row1[FOOT_W];
  vec4 row2[FOOT_W];
#define LOAD_ROW(row, y)                                              \
  {                                                                   \
    bool row_inside = (y) >= 0 && (y) < in_h;                         \
    int row_start = plane + (y) * in_w;                               \
    for (int c = 0; c < FOOT_W; ++c) {                                \
      bool inside = row_inside && column_inside[c];                   \
      row[c] = inside ? LOAD(in0, inside ? row_start + c * FAST_DW : 0) : vec4(0.0); \
    }                                                                 \
  }
  LOAD_ROW(row0, y0);
#if STRIDE_H == 1
  LOAD_ROW(row1, y0 + FAST_DH);
#endif
  for (int oy = 0; oy < BLOCK_H; ++oy) {
    if (oy >= rows_left) break;
    int top = y0 + oy * STRIDE_H * FAST_DH;
#if STRIDE_H != 1
    LOAD_ROW(row1, top + 1);
#endif
    LOAD_ROW(row2, top + 2 * FAST_DH);
    for (int ox = 0; ox < BLOCK_W; ++ox) {
      vec4 sum = bias_value;
      for (int kx = 0; kx < 3; ++kx) {
        sum += row0[ox * STRIDE_W + kx] * w[kx] +
               row1[ox * STRIDE_W + kx] * w[3 + kx] +
               row2[ox * STRIDE_W + kx] * w[6 + kx];
      }
      if (ox < columns_left) {
        int index = out_index + ox * FAST_DW;
        STORE(out0, index,
              mix(vec4(0.0), EPILOGUE(activate(sum), index, slice), live_lanes));
      }
    }
    out_index += out_w * FAST_DH;
#if STRIDE_H == 1
    for (int c = 0; c < FOOT_W; ++c) {
      row0[c] = row1[c];
      row1[c] = row2[c];
    }
#else
    for (int c = 0; c < FOOT_W; ++c) row0[c] = row2[c];
#endif
  }
#else
  // As in the 3x3 path, the uniforms the loops need are read once, here.
  int in_h = IN_H;
  int in_w = IN_W;
  ivec4 planes;
  ivec4 lanes;
  for (int lane = 0; lane < 4; ++lane) {
    int c = min(slice * 4 + lane, OUT_C - 1) / MULTIPLIER;
    planes[lane] = (b * IN_S + c / 4) * IN_HW;
    lanes[lane] = c % 4;
  }
  int rows_left = OUT_H - by * BLOCK_H;
  int columns_left = OUT_W - bx * BLOCK_W;
  int out_w = OUT_W;
  int out_index = ((b * OUT_S + slice) * OUT_H + by * BLOCK_H) * out_w + bx * BLOCK_W;
  bvec4 live_lanes = lessThan(ivec4(slice * 4) + ivec4(0, 1, 2, 3), ivec4(OUT_C));
  vec4 acc[BLOCK];
  for (int i = 0; i < BLOCK; ++i) acc[i] = bias_value;
  for (int tap = 0; tap < KERNEL_H * KERNEL_W; ++tap) {
    int ky = tap / KERNEL_W;
    int kx = tap - ky * KERNEL_W;
    vec4 w = LOAD(weights, slice * KERNEL_H * KERNEL_W + tap);
    for (int oy = 0; oy < BLOCK_H; ++oy) {
      int y = y0 + oy * STRIDE_H + ky * DILATION_H;
      for (int ox = 0; ox < BLOCK_W; ++ox) {
        int x = x0 + ox * STRIDE_W + kx * DILATION_W;
        bool inside = y >= 0 && y < in_h && x >= 0 && x < in_w;
        vec4 v = inside ? fetch(planes, lanes, inside ? y * in_w + x : 0)
                        : vec4(0.0);
        acc[oy * BLOCK_W + ox] += v * w;
      }
    }
  }
  for (int oy = 0; oy < BLOCK_H; ++oy) {
    if (oy >= rows_left) break;
    for (int ox = 0; ox < BLOCK_W; ++ox) {
      if (ox >= columns_left) break;
      int index = out_index + ox;
      STORE(out0, index,
            mix(vec4(0.0), EPILOGUE(activate(acc[oy * BLOCK_W + ox]), index, slice),
                live_lanes));
    }
    out_index += out_w;
  }
#endif
}
