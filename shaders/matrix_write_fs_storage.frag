#version 450
// Raster matrix: the fragment shader copies word i of one storage buffer to another (pixel i)
// and writes 0 to its r32ui target.
#extension GL_GOOGLE_include_directive : require
#include "matrix_pixel.glsl"
layout(set = 0, binding = 0, std430) readonly buffer Src { uint d[64]; } src;
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint d[64]; } dst;
layout(location = 0) out uint o_value;

void main() {
    uint i = pixel_slot();
    dst.d[i] = src.d[i];
    o_value = 0u;
}
