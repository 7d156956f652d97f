#version 450
// Raster matrix: point gl_VertexIndex carries its vertex attribute (a uint) as its value.
#extension GL_GOOGLE_include_directive : require
#include "matrix_points.glsl"
layout(location = 0) in uint a_value;
layout(location = 0) flat out uint v_value;

void main() {
    v_value = a_value;
    place(uint(gl_VertexIndex));
}
