#version 450
// Raster matrix: copies an 8x8 stencil aspect (a view of it, texelFetch) into a buffer.
#extension GL_EXT_samplerless_texture_functions : require
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform utexture2D img;
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint d[64]; } dst;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    dst.d[p.y * 8 + p.x] = texelFetch(img, p, 0).r;
}
