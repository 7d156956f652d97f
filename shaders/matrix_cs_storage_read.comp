#version 450
// Raster matrix: copies an 8x8 rgba8 storage image into a buffer, one packed word per texel.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba8) readonly uniform image2D img;
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint d[64]; } dst;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    dst.d[p.y * 8 + p.x] = packUnorm4x8(imageLoad(img, p));
}
