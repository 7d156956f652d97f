#version 450
// Raster matrix: point i carries word i of a uniform buffer, read in the vertex shader.
#extension GL_GOOGLE_include_directive : require
#include "matrix_points.glsl"
layout(set = 0, binding = 0, std140) uniform Data { uvec4 d[16]; } data;
layout(location = 0) flat out uint v_value;

void main() {
    uint i = uint(gl_VertexIndex);
    v_value = data.d[i / 4u][i % 4u];
    place(i);
}
