#version 310 es
// Moves an image between an application's 2D texture and the float32 BHWC
// buffer of a GPU binding (delegate/runtime/gpu_binding.h; TextureProducer
// and TextureSink, delegate/runtime/texture_io.cc), so the pixels never
// visit the CPU (docs/gpu_io.md, "Textures"). One invocation per pixel p,
// texel (x, y) = (p % W, p / W): texel row 0 (the first row glTexImage2D
// takes from memory) is the tensor's first row. Batch 1, C = 1..4 channels;
// no resize, no filtering.
//
// TEXTURE_TO_BHWC: texture unit 1 = the application's texture, read with
//   texelFetch (RGBA8 reads as [0, 1], RGBA16F/RGBA32F as stored); binding 0
//   = the binding's floats, written: channel c of pixel p =
//   texel[io_channels[c]] * io_scale[c] + io_offset[c].
// BHWC_TO_TEXTURE: binding 1 = the binding's floats, read; image unit 0 =
//   the application's texture (IMAGE_RGBA8, IMAGE_RGBA16F or, with neither,
//   rgba32f: GLES 3.1 needs the format on the image variable). Texel lane c
//   = channel c * io_scale[c] + io_offset[c] for c < C; the lanes past C are
//   (0, 0, 1) for G, B, A, as GL expands an R or RG texture (rgba8 stores
//   clamp to [0, 1]).
// The buffers are plain float SSBOs, whatever the delegate's own storage
// (fp16, texture-buffer reads): a binding's buffer is float32 by contract.
// One image uniform and 64 invocations per workgroup: within the GLES 3.1
// minimums (4 image uniforms, 128 invocations).
//
// @axis TEXTURE_TO_BHWC BHWC_TO_TEXTURE
// @axis - IMAGE_RGBA8 IMAGE_RGBA16F
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 W=5 H=3 C=3 TOTAL=15

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

// Plain uniforms rather than constants: a new scale or channel choice
// reuses the compiled program (set with glProgramUniform before each run).
layout(location = 0) uniform highp vec4 io_scale;
layout(location = 1) uniform highp vec4 io_offset;
layout(location = 2) uniform highp ivec4 io_channels;

#if defined(BHWC_TO_TEXTURE)
#if defined(IMAGE_RGBA8)
layout(rgba8, binding = 0) writeonly uniform highp image2D io_image;
#elif defined(IMAGE_RGBA16F)
layout(rgba16f, binding = 0) writeonly uniform highp image2D io_image;
#else
layout(rgba32f, binding = 0) writeonly uniform highp image2D io_image;
#endif
layout(std430, binding = 1) readonly buffer Floats { float floats[]; };
#else
layout(binding = 1) uniform highp sampler2D io_texture;
layout(std430, binding = 0) writeonly buffer Floats { float floats[]; };
#endif

void main() {
  int p = int(global_index());
  if (p >= TOTAL) return;
  // The preamble's texel of index p in rows of W: the same helper places
  // vec4 p of a tensor kept in an RGBA texture (RGBA_TEXTURES), so a
  // <= 4-channel tensor's texture holds this image texel for texel.
  ivec2 xy = tensor_texel(p, W);
#if defined(BHWC_TO_TEXTURE)
  // GL's expansion of a texture with fewer components: (r, g, 0, 1).
  vec4 texel = vec4(0.0, 0.0, 0.0, 1.0);
  for (int c = 0; c < C; ++c) texel[c] = floats[p * C + c] * io_scale[c] + io_offset[c];
  imageStore(io_image, xy, texel);
#else
  vec4 t = texelFetch(io_texture, xy, 0);
  for (int c = 0; c < C; ++c) floats[p * C + c] = t[io_channels[c]] * io_scale[c] + io_offset[c];
#endif
}
