#version 310 es
// Transposed convolution (TRANSPOSE_CONV, MediaPipe's
// Convolution2DTransposeBias) over PHWC4 tensors, as a gather: output pixel
// (y, x) sums input pixel (iy, ix) times tap (ky, kx) wherever
// iy * STRIDE_H - PAD_TOP + ky == y (same along x). No scatter, no atomics.
//
// Each invocation computes TILE_ROWS output pixels of one row that share
// their x phase (x = phase + STRIDE_W * n), so every tap is valid or invalid
// for all of them at once and their inputs are consecutive, times
// TILE_SLICES output slices, in registers (as in conv2d.comp). Pixel groups
// are numbered over (batch, row, phase, group): ROW_GROUPS per output row.
//
// Weights (binding 2): [slice group][tap][input slice][TILE_SLICES][4] vec4
// like conv2d.comp; bias (binding 3): one vec4 per output slice.
// Bindings: 0 = output, 1 = input.
//
// EPILOGUE(x,index,slice) (delegate/passes/fusion.h): an elementwise step
// fused into the store (selfie segmentation's LOGISTIC after its last
// layer), with its tensor operand, if any, at binding 4 (EPILOGUE_IN).
//
// @axis - SLICES_ON_X
// @axis - ACT_RELU ACT_RELU6 ACT_RELU_N1_TO_1 ACT_TANH ACT_SIGMOID
// @const LOCAL_X=8 LOCAL_Y=1 LOCAL_Z=1 TILE_ROWS=4 TILE_SLICES=1
// @const PIXEL_GROUPS=8 SLICE_GROUPS=1 GROUPS_PER_PHASE=1 IN_S=1 IN_H=2
// @const IN_W=2 OUT_S=1 OUT_C=1 OUT_H=4 OUT_W=4 KERNEL_H=2 KERNEL_W=2
// @const STRIDE_H=2 STRIDE_W=2 PAD_TOP=0 PAD_LEFT=0
// @axis - EPILOGUE_IN
// @const EPILOGUE(x,index,slice)=(x)
//
// BHWC_OUTPUT (delegate/passes/readback_fusion.h): the output is a model
// output's readback staging, written as TFLite's BHWC floats (OUT_C 1 or 2:
// a float or vec2 per pixel) in place of the layout_convert.comp dispatch
// after this one. The two x phases of a row interleave across invocations
// and a tile's pixels lie GROUPS_PER_PHASE apart, so that neighbouring
// invocations store neighbouring pixels: on NVIDIA the staging is host
// memory, where a warp's scattered stores cross PCIe as partial writes.
// With fp16 storage the floats are not rounded to half first (the unfused
// pair's conversion reads halves): one rounding fewer.
// @axis - BHWC_OUTPUT
//
// BAND_BEGIN, BAND_END: the pixel groups [BAND_BEGIN, BAND_END) of the
// PIXEL_GROUPS, the grid starting at BAND_BEGIN (0 and PIXEL_GROUPS but for
// a fused readback crossing in row bands, runtime_bands.cc: one program,
// each band its own uniform range, as layout_convert.comp's).
// @uniform BAND_BEGIN=0 BAND_END=8
//
// TEXTURE_OUTPUT (below): the output also goes to a bound texture, in place
// of a texture_io.comp dispatch after this one.
// @axis - TEXTURE_OUTPUT
// @const TEXTURE_OUT_UNIT=1 TEXTURE_OUT_W=4 TEXTURE_OUT_C=1 TEXTURE_OUT_FORMAT=0

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

#if defined(BHWC_OUTPUT) && OUT_C == 2
layout(std430, binding = 0) writeonly buffer Out0 { highp vec2 out0[]; };
#elif defined(BHWC_OUTPUT)
FLOATS_OUT(out0, 0, Out0);
#else
TENSOR_OUT(out0, 0, Out0);
#endif
TENSOR_IN(in0, 1, In0);
TENSOR_IN(weights, 2, Weights);
TENSOR_IN(bias, 3, Bias);
#if defined(EPILOGUE_IN)
TENSOR_IN(epilogue_in, 4, EpilogueIn);
#endif
#if !defined(EPILOGUE)
#define EPILOGUE(x, index, slice) (x)
#endif

// TEXTURE_OUTPUT: the output, batch 1 with OUT_C = TEXTURE_OUT_C <= 4
// channels (one slice: vec4 i is pixel i), also goes into an application's
// RGBA texture at image unit TEXTURE_OUT_UNIT, texel (i % TEXTURE_OUT_W,
// i / TEXTURE_OUT_W), as texture_io.comp's TENSOR_TO_TEXTURE would write it
// from the tensor after this dispatch (delegate/runtime/runtime_texture_io.cc):
// lane c = channel c * io_scale[c] + io_offset[c], the lanes past C (0, 0, 1)
// for G, B, A. The value is the one the tensor holds (rounded to half with
// fp16 storage, as that dispatch would read it), so both ways write the same
// texels. TEXTURE_OUT_FORMAT: 0 rgba32f, 1 rgba8, 2 rgba16f (GLES 3.1 needs
// the format on the image variable). Two image uniforms at most (out0 with RGBA textures): within the
// GLES 3.1 minimum of 4.
#if defined(TEXTURE_OUTPUT)
layout(location = 0) uniform highp vec4 io_scale;
layout(location = 1) uniform highp vec4 io_offset;
#if TEXTURE_OUT_FORMAT == 1
layout(rgba8, binding = TEXTURE_OUT_UNIT) writeonly uniform highp image2D io_out_image;
#elif TEXTURE_OUT_FORMAT == 2
layout(rgba16f, binding = TEXTURE_OUT_UNIT) writeonly uniform highp image2D io_out_image;
#else
layout(rgba32f, binding = TEXTURE_OUT_UNIT) writeonly uniform highp image2D io_out_image;
#endif
void texture_out(int i, vec4 v) {
#if STORAGE_FP16
  v = unpack_half4(pack_half4(v));
#endif
  vec4 texel = vec4(0.0, 0.0, 0.0, 1.0);
  for (int c = 0; c < TEXTURE_OUT_C; ++c) texel[c] = v[c] * io_scale[c] + io_offset[c];
  imageStore(io_out_image, tensor_texel(i, TEXTURE_OUT_W), texel);
}
#endif

#define TILE (TILE_ROWS * TILE_SLICES)
#define ROW_GROUPS (STRIDE_W * GROUPS_PER_PHASE)

void main() {
#if defined(SLICES_ON_X)
  int group = int(gl_GlobalInvocationID.x);
  int pixel_group = int(gl_GlobalInvocationID.y) + BAND_BEGIN;
#else
  int group = int(gl_GlobalInvocationID.y);
  int pixel_group = int(gl_GlobalInvocationID.x) + BAND_BEGIN;
#endif
  if (group >= SLICE_GROUPS || pixel_group >= min(BAND_END, PIXEL_GROUPS)) return;
  int row = pixel_group / ROW_GROUPS;  // batch * OUT_H + y
  int b = row / OUT_H;
  int y = row % OUT_H;
#if defined(BHWC_OUTPUT)
  // Pixel p of the tile is n = first_n + p * PIXEL_STEP of its phase.
  int phase = (pixel_group % ROW_GROUPS) % STRIDE_W;
  int first_n = (pixel_group % ROW_GROUPS) / STRIDE_W;
#define PIXEL_STEP GROUPS_PER_PHASE
#else
  int phase = (pixel_group % ROW_GROUPS) / GROUPS_PER_PHASE;
  int first_n = (pixel_group % GROUPS_PER_PHASE) * TILE_ROWS;
#define PIXEL_STEP 1
#endif

  vec4 acc[TILE];
  for (int i = 0; i < TILE; ++i) acc[i] = vec4(0.0);

  for (int ky = 0; ky < KERNEL_H; ++ky) {
    // Offsets keep the operands of / and % non-negative.
    int ty = y + PAD_TOP - ky + STRIDE_H * KERNEL_H;
    int iy = ty / STRIDE_H - KERNEL_H;
    if (ty % STRIDE_H != 0 || iy < 0 || iy >= IN_H) continue;
    for (int kx = 0; kx < KERNEL_W; ++kx) {
      int tx = phase + PAD_LEFT - kx + STRIDE_W * KERNEL_W;
      if (tx % STRIDE_W != 0) continue;
      int ix0 = tx / STRIDE_W - KERNEL_W + first_n;
      int base[TILE_ROWS];
      bool inside[TILE_ROWS];
      for (int p = 0; p < TILE_ROWS; ++p) {
        int ix = ix0 + p * PIXEL_STEP;
        inside[p] = ix >= 0 && ix < IN_W;
        base[p] = inside[p] ? (b * IN_S * IN_H + iy) * IN_W + ix : 0;
      }
      int w_index = ((group * KERNEL_H + ky) * KERNEL_W + kx) * IN_S *
                    TILE_SLICES * 4;
      for (int s = 0; s < IN_S; ++s) {
        vec4 x[TILE_ROWS];
        for (int p = 0; p < TILE_ROWS; ++p) {
          x[p] = inside[p] ? LOAD(in0, base[p] + s * IN_H * IN_W) : vec4(0.0);
        }
        for (int o = 0; o < TILE_SLICES; ++o) {
          vec4 w0 = LOAD(weights, w_index);
          vec4 w1 = LOAD(weights, w_index + 1);
          vec4 w2 = LOAD(weights, w_index + 2);
          vec4 w3 = LOAD(weights, w_index + 3);
          w_index += 4;
          for (int p = 0; p < TILE_ROWS; ++p) {
            acc[p * TILE_SLICES + o] +=
                w0 * x[p].x + w1 * x[p].y + w2 * x[p].z + w3 * x[p].w;
          }
        }
      }
    }
  }

  for (int o = 0; o < TILE_SLICES; ++o) {
    int slice = group * TILE_SLICES + o;
    if (slice >= OUT_S) break;
    vec4 bias_value = LOAD(bias, slice);
    for (int p = 0; p < TILE_ROWS; ++p) {
      int x = phase + STRIDE_W * (first_n + p * PIXEL_STEP);
      if (x >= OUT_W) break;
      int index = ((b * OUT_S + slice) * OUT_H + y) * OUT_W + x;
      vec4 value = zero_padded(EPILOGUE(activate(acc[p * TILE_SLICES + o] + bias_value),
                                        index, slice),
                               slice, OUT_C);
#if defined(BHWC_OUTPUT)
      int pixel = (b * OUT_H + y) * OUT_W + x;  // OUT_S == 1
#if OUT_C == 2
      out0[pixel] = value.xy;
#else
      STORE_FLOAT(out0, pixel, value.x);
#endif
#else
      STORE(out0, index, value);
#endif
#if defined(TEXTURE_OUTPUT)
      texture_out(index, value);
#endif
    }
  }
}
