#version 310 es
// The example pipeline's own GLES passes (tools/gpu_pipeline_example.cc and
// .py): the application's shaders around the model, not the delegate's.
// The program inserts one #define after this line:
// RESIZE: the photograph (texture unit 0, bilinear) into the model's input
//   texture (image unit 0, rgba8) of the tensor's size: the delegate never
//   resizes, so the application does, on the GPU.
// COMPOSITE: the photograph (unit 0, at its own size) tinted where the mask
//   (unit 1: R = the person's probability, bilinear) is high, into the
//   result (image unit 0, rgba8).
// 64 invocations per workgroup, one image uniform: GLES 3.1 minimums.
precision highp float;
precision highp int;
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(binding = 0) uniform highp sampler2D photo;
#ifdef COMPOSITE
layout(binding = 1) uniform highp sampler2D mask;
#endif
layout(rgba8, binding = 0) writeonly uniform highp image2D result;

void main() {
  ivec2 size = imageSize(result);
  ivec2 xy = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(xy, size))) return;
  vec2 uv = (vec2(xy) + 0.5) / vec2(size);
#ifdef COMPOSITE
  vec3 pixel = texelFetch(photo, xy, 0).rgb;
  float person = texture(mask, uv).r;
  vec3 tint = vec3(0.05, 0.85, 0.75);
  imageStore(result, xy, vec4(mix(pixel, tint, 0.65 * person), 1.0));
#else
  imageStore(result, xy, vec4(texture(photo, uv).rgb, 1.0));
#endif
}
