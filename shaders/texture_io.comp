#version 310 es
// Moves an image between an application's 2D texture and the delegate, so
// the pixels never visit the CPU (docs/gpu_io.md, "Textures"). One
// invocation per pixel p, texel (x, y) = (p % W, p / W): texel row 0 (the
// first row glTexImage2D takes from memory) is the tensor's first row.
// Batch 1, C = 1..4 channels (one PHWC4 slice: vec4 p of the tensor is pixel
// p); no resize, no filtering.
//
// In place (delegate/runtime/runtime_texture_io.cc), with the delegate's
// tensor storage (fp32 or fp16, SSBO or texture-buffer reads):
// TEXTURE_TO_TENSOR: binding 0 = the input's PHWC4 tensor, written; texture
//   unit 1 = the application's texture, read with texelFetch (RGBA8 reads as
//   [0, 1], RGBA16F/RGBA32F as stored): channel c of pixel p =
//   texel[io_channels[c]] * io_scale[c] + io_offset[c], lanes past C zero.
//   It stands in for the upload conversion (or for the upload itself, where
//   the tensor is transferred directly).
// TENSOR_TO_TEXTURE: binding 0 = the output's PHWC4 tensor, read; image
//   unit 0 = the application's texture (format below). Stands in for the
//   readback conversion.
// The fallback (TextureProducer / TextureSink, texture_io.cc), with plain
// float SSBOs whatever the delegate's storage (a binding's buffer is float32
// by contract):
// TEXTURE_TO_BHWC: texture unit 1 as above; binding 0 = the BHWC floats.
// BHWC_TO_TEXTURE: binding 1 = the BHWC floats, read; image unit 0 as above.
// Image variants: IMAGE_RGBA8, IMAGE_RGBA16F or, with neither, rgba32f (GLES
// 3.1 needs the format on the image variable). Texel lane c = channel c *
// io_scale[c] + io_offset[c] for c < C; the lanes past C are (0, 0, 1) for
// G, B, A, as GL expands an R or RG texture (rgba8 stores clamp to [0, 1]).
// One image uniform, one sampler, 64 invocations per workgroup: within the
// GLES 3.1 minimums (4 image uniforms, 16 texture units, 128 invocations).
//
// @axis TEXTURE_TO_BHWC BHWC_TO_TEXTURE TEXTURE_TO_TENSOR TENSOR_TO_TEXTURE
// @axis - IMAGE_RGBA8 IMAGE_RGBA16F
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 W=5 H=3 C=3 TOTAL=15

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

// Plain uniforms rather than constants: a new scale or channel choice
// reuses the compiled program (set with glProgramUniform before each run;
// locations: kTextureScaleLocation, gpu_binding.h).
layout(location = 0) uniform highp vec4 io_scale;
layout(location = 1) uniform highp vec4 io_offset;
layout(location = 2) uniform highp ivec4 io_channels;

#if defined(BHWC_TO_TEXTURE) || defined(TENSOR_TO_TEXTURE)
#define WRITES_TEXTURE 1
#if defined(IMAGE_RGBA8)
layout(rgba8, binding = 0) writeonly uniform highp image2D io_image;
#elif defined(IMAGE_RGBA16F)
layout(rgba16f, binding = 0) writeonly uniform highp image2D io_image;
#else
layout(rgba32f, binding = 0) writeonly uniform highp image2D io_image;
#endif
#else
layout(binding = 1) uniform highp sampler2D io_texture;
#endif

#if defined(BHWC_TO_TEXTURE)
layout(std430, binding = 1) readonly buffer Floats { float floats[]; };
#elif defined(TEXTURE_TO_BHWC)
layout(std430, binding = 0) writeonly buffer Floats { float floats[]; };
#elif defined(TENSOR_TO_TEXTURE)
TENSOR_IN(tensor, 0, Tensor);
#else
TENSOR_OUT(tensor, 0, Tensor);
#endif

void main() {
  int p = int(global_index());
  if (p >= TOTAL) return;
  ivec2 xy = tensor_texel(p, W);
#if defined(WRITES_TEXTURE)
  // GL's expansion of a texture with fewer components: (r, g, 0, 1).
  vec4 texel = vec4(0.0, 0.0, 0.0, 1.0);
#if defined(TENSOR_TO_TEXTURE)
  vec4 v = LOAD(tensor, p);
  for (int c = 0; c < C; ++c) texel[c] = v[c] * io_scale[c] + io_offset[c];
#else
  for (int c = 0; c < C; ++c) texel[c] = floats[p * C + c] * io_scale[c] + io_offset[c];
#endif
  imageStore(io_image, xy, texel);
#else
  vec4 t = texelFetch(io_texture, xy, 0);
#if defined(TEXTURE_TO_TENSOR)
  vec4 v = vec4(0.0);
  for (int c = 0; c < C; ++c) v[c] = t[io_channels[c]] * io_scale[c] + io_offset[c];
  STORE(tensor, p, v);
#else
  for (int c = 0; c < C; ++c) floats[p * C + c] = t[io_channels[c]] * io_scale[c] + io_offset[c];
#endif
#endif
}
