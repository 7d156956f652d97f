#version 450
// Raster matrix: copies 64 words from one storage buffer to another.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) readonly buffer Src { uint d[64]; } src;
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint d[64]; } dst;

void main() {
    uint i = gl_GlobalInvocationID.x;
    dst.d[i] = src.d[i];
}
