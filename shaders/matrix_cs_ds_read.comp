#version 450
// Raster matrix: reads both aspects of an 8x8 depth/stencil image (a view of each,
// texelFetch) into a buffer: word k << 8 | stencil for a depth k / 256.
#extension GL_EXT_samplerless_texture_functions : require
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform texture2D depth;
layout(set = 0, binding = 1) uniform utexture2D stencil;
layout(set = 0, binding = 2, std430) writeonly buffer Dst { uint d[64]; } dst;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    uint k = uint(texelFetch(depth, p, 0).r * 256.0);
    dst.d[p.y * 8 + p.x] = k << 8 | texelFetch(stencil, p, 0).r;
}
