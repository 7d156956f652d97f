#version 450
// Raster matrix: copies an 8x8 sampled image into a buffer (texelFetch): RGBA8 packed, or a
// depth float's bits (push constant `depth`).
#extension GL_EXT_samplerless_texture_functions : require
layout(local_size_x = 8, local_size_y = 8) in;
layout(push_constant) uniform Push { uint mode; uint depth; uint pad0; uint pad1; } pc;
layout(set = 0, binding = 0) uniform texture2D img;
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint d[64]; } dst;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    vec4 t = texelFetch(img, p, 0);
    dst.d[p.y * 8 + p.x] = pc.depth == 1u ? floatBitsToUint(t.r) : packUnorm4x8(t);
}
