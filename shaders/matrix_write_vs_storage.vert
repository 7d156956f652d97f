#version 450
// Raster matrix: the vertex shader of point i copies word i of one storage buffer to another.
#extension GL_GOOGLE_include_directive : require
#include "matrix_points.glsl"
layout(set = 0, binding = 0, std430) readonly buffer Src { uint d[64]; } src;
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint d[64]; } dst;
layout(location = 0) flat out uint v_value;

void main() {
    uint i = uint(gl_VertexIndex);
    dst.d[i] = src.d[i];
    v_value = 0u;
    place(i);
}
