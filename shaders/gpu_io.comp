#version 310 es
// Moves a bound partition input or output between an application's GL
// buffer (float32, in TFLite's BHWC order or the delegate's PHWC4) and the
// delegate's own storage of the tensor, on the GPU: the conversions of
// buffers bound with TfLiteGlesDelegateBindBuffer where the application's
// buffer cannot simply stand in for the delegate's (gpu_binding.h).
//
// One invocation per PHWC4 vec4 (B x S x H x W of them, TOTAL in all), in
// BHWC order (slice fastest) so that neighbours touch neighbouring BHWC
// floats, as layout_convert.comp does. Padded lanes of the last slice are
// written as zero either way: an application's PHWC4 buffer may hold
// anything there, and a NaN must not reach a kernel's sums.
//
// APP_BHWC_TO_TENSOR:  binding 0 = the tensor (TENSOR_OUT), 1 = app BHWC.
// APP_PHWC4_TO_TENSOR: binding 0 = the tensor (TENSOR_OUT), 1 = app PHWC4.
// APP_PHWC4_TO_BHWC:   binding 0 = BHWC floats (staging), 1 = app PHWC4.
// TENSOR_TO_APP_BHWC:  binding 0 = app BHWC, 1 = the tensor (TENSOR_IN).
// TENSOR_TO_APP_PHWC4: binding 0 = app PHWC4, 1 = the tensor (TENSOR_IN).
// Application buffers are float32. One read from them goes through a
// samplerBuffer view (R32F for BHWC, RGBA32F for PHWC4) where the device
// reads staging buffers that way (READ_TEXBUF or STAGING_TEXBUF: SSBO loads
// cost llvmpipe many times more), unless APP_SSBO says the view would exceed
// GL_MAX_TEXTURE_BUFFER_SIZE; writes to them are plain SSBO stores.
//
// @axis APP_BHWC_TO_TENSOR APP_PHWC4_TO_TENSOR APP_PHWC4_TO_BHWC TENSOR_TO_APP_BHWC TENSOR_TO_APP_PHWC4
// @axis - APP_SSBO
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64 B=1 H=4 W=4 C=6 S=2

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

#if (READ_TEXBUF || STAGING_TEXBUF) && !defined(APP_SSBO)
#define APP_IN_FLOATS layout(binding = 1) uniform highp samplerBuffer app
#define APP_IN_VEC4S layout(binding = 1) uniform highp samplerBuffer app
#define APP_FLOAT(i) texelFetch(app, i).x
#define APP_VEC4(i) texelFetch(app, i)
#else
#define APP_IN_FLOATS layout(std430, binding = 1) readonly buffer App { float app[]; }
#define APP_IN_VEC4S layout(std430, binding = 1) readonly buffer App { vec4 app[]; }
#define APP_FLOAT(i) app[i]
#define APP_VEC4(i) app[i]
#endif

#if defined(APP_BHWC_TO_TENSOR)
TENSOR_OUT(tensor, 0, Tensor);
APP_IN_FLOATS;
#elif defined(APP_PHWC4_TO_TENSOR)
TENSOR_OUT(tensor, 0, Tensor);
APP_IN_VEC4S;
#elif defined(APP_PHWC4_TO_BHWC)
layout(std430, binding = 0) writeonly buffer Staging { float staging[]; };
APP_IN_VEC4S;
#elif defined(TENSOR_TO_APP_BHWC)
layout(std430, binding = 0) writeonly buffer App { float app[]; };
TENSOR_IN(tensor, 1, Tensor);
#else  // TENSOR_TO_APP_PHWC4
layout(std430, binding = 0) writeonly buffer App { vec4 app[]; };
TENSOR_IN(tensor, 1, Tensor);
#endif

void main() {
  int j = int(global_index());
  if (j >= TOTAL) return;
  int s = j % S;
  int t = j / S;
  int w = t % W;
  t /= W;
  int h = t % H;
  int b = t / H;
  int i = ((b * S + s) * H + h) * W + w;  // the PHWC4 vec4
  int base = ((b * H + h) * W + w) * C + s * 4;  // its first BHWC float
  int lanes = min(4, C - s * 4);
  vec4 v = vec4(0.0);
#if defined(APP_BHWC_TO_TENSOR)
  for (int k = 0; k < lanes; ++k) v[k] = APP_FLOAT(base + k);
  STORE(tensor, i, v);
#elif defined(APP_PHWC4_TO_TENSOR)
  vec4 a = APP_VEC4(i);
  for (int k = 0; k < lanes; ++k) v[k] = a[k];
  STORE(tensor, i, v);
#elif defined(APP_PHWC4_TO_BHWC)
  vec4 a = APP_VEC4(i);
  for (int k = 0; k < lanes; ++k) staging[base + k] = a[k];
#elif defined(TENSOR_TO_APP_BHWC)
  v = LOAD(tensor, i);
  for (int k = 0; k < lanes; ++k) app[base + k] = v[k];
#else
  vec4 a = LOAD(tensor, i);
  for (int k = 0; k < lanes; ++k) v[k] = a[k];
  app[i] = v;
#endif
}
