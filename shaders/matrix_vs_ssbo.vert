#version 450
// Raster matrix: point i carries word i of a storage buffer, read in the vertex shader.
#extension GL_GOOGLE_include_directive : require
#include "matrix_points.glsl"
layout(set = 0, binding = 0, std430) readonly buffer Data { uint d[64]; } data;
layout(location = 0) flat out uint v_value;

void main() {
    uint i = uint(gl_VertexIndex);
    v_value = data.d[i];
    place(i);
}
