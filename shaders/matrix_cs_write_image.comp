#version 450
// Raster matrix: writes word i of a storage buffer (RGBA8 bytes) to texel i of an 8x8 rgba8
// storage image.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, std430) readonly buffer Src { uint d[64]; } src;
layout(set = 0, binding = 1, rgba8) writeonly uniform image2D img;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    imageStore(img, p, unpackUnorm4x8(src.d[p.y * 8 + p.x]));
}
