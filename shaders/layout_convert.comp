#version 310 es
// Converts tensors between TFLite's BHWC float layout (staging buffers the
// CPU reads and writes) and the PHWC4 layout the kernels use, on the GPU.
//
// TO_PHWC4: binding 0 = PHWC4 output, binding 1 = BHWC floats.
// TO_BHWC:  binding 0 = BHWC floats,  binding 1 = PHWC4 input.
// TO_PHWC4: one invocation per PHWC4 vec4 (B x S x H x W of them, TOTAL in
// all); the padded lanes of the last slice are written as zero.
// TO_BHWC: one invocation per PHWC4 vec4 like TO_PHWC4, or with PER_FLOAT
// one per BHWC float (TOTAL = B x H x W x C), so that a warp's stores are
// one contiguous run: on NVIDIA the staging buffer lives in host memory, and
// 4 float stores per invocation crossed PCIe as partial writes (deeplabv3's
// 257x257x21 output took 2.55 ms that way on an H200). llvmpipe prefers the
// vec4 form (4.1 vs 7.1 ms there): DeviceProfile::per_float_readback.
//
// INPUT_QUANT(x) (TO_PHWC4): applied to each converted vec4 (padded lanes
// are zero and stay zero): a float input that only QUANTIZE reads, rounded to
// its grid as TFLite's QUANTIZE would (ew_quantize_input).
//
// STAGED_BYTES (TO_PHWC4): the staging holds a uint8/int8 input's raw bytes,
// packed 4 per uint (WORDS_IN), dequantized here as TFLite's DEQUANTIZE
// computes it: float(q - zero_point) * scale, in fp32 (staged_value()).
//
// BAND_BEGIN, BAND_END: the invocations [BAND_BEGIN, BAND_END) of the
// TOTAL run, the grid starting at BAND_BEGIN (0 and TOTAL but for a large
// transfer done in row bands, runtime_bands.cc: one program, each band its
// own uniform range; a band of rows is one run of j in either order).
//
// @axis TO_PHWC4 TO_BHWC
// @axis - PER_FLOAT
// @axis - STAGED_BYTES
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64 B=1 H=4 W=4 C=6 S=2
// @uniform BAND_BEGIN=0 BAND_END=64
// @const INPUT_QUANT(x)=(x)
// @const STAGED_SCALE=0.5 STAGED_ZERO_POINT=3 STAGED_FLIP=128u

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

#if !defined(INPUT_QUANT)
#define INPUT_QUANT(x) (x)
#endif
#if defined(TO_PHWC4)
TENSOR_OUT(phwc4, 0, Phwc4);
#if defined(STAGED_BYTES)
WORDS_IN(bhwc, 1, Bhwc);
// STAGED_FLIP is 128u for int8 (its bit pattern ^ 128 is q + 128, and
// STAGED_ZERO_POINT is then zero_point + 128), 0u for uint8: one expression
// for both, exact (|q - zero_point| <= 255).
float staged_value(int i) {
  return float(int(LOAD_BYTE(bhwc, i) ^ STAGED_FLIP) - STAGED_ZERO_POINT) * STAGED_SCALE;
}
#else
FLOATS_IN(bhwc, 1, Bhwc);
float staged_value(int i) { return LOAD_FLOAT(bhwc, i); }
#endif
#else
FLOATS_OUT(bhwc, 0, Bhwc);
TENSOR_IN(phwc4, 1, Phwc4);
#endif

void main() {
  int j = int(global_index()) + BAND_BEGIN;
  if (j >= BAND_END) return;
#if !defined(PER_FLOAT) || defined(TO_PHWC4)  // PER_FLOAT: readbacks only
  // Invocations run in BHWC order (slice fastest), so neighbours touch
  // neighbouring BHWC floats: in PHWC4 order every slice would stream the
  // whole BHWC buffer at a stride of C floats (measured on llvmpipe,
  // 1x256x256x32: 22-34 ms per conversion that way).
  int s = j % S;
  int t = j / S;
  int w = t % W;
  t /= W;
  int h = t % H;
  int b = t / H;
  int i = ((b * S + s) * H + h) * W + w;  // the PHWC4 vec4
  int base = ((b * H + h) * W + w) * C + s * 4;
  int lanes = min(4, C - s * 4);
#if defined(TO_PHWC4)
  vec4 v = vec4(0.0);
  for (int k = 0; k < lanes; ++k) v[k] = staged_value(base + k);
  STORE(phwc4, i, INPUT_QUANT(v));
#else
  vec4 v = LOAD(phwc4, i);
  for (int k = 0; k < lanes; ++k) STORE_FLOAT(bhwc, base + k, v[k]);
#endif
#else  // PER_FLOAT, TO_BHWC only
  int c = j % C;
  int t = j / C;
  int w = t % W;
  t /= W;
  int h = t % H;
  int b = t / H;
  int i = ((b * S + c / 4) * H + h) * W + w;  // the PHWC4 vec4 holding it
  STORE_FLOAT(bhwc, j, LOAD(phwc4, i)[c % 4]);
#endif
}
