#version 450
// Raster matrix: point i carries texel i of an rgba8 storage image, read in the vertex shader.
#extension GL_GOOGLE_include_directive : require
#include "matrix_points.glsl"
layout(set = 0, binding = 0, rgba8) readonly uniform image2D img;
layout(location = 0) flat out uint v_value;

void main() {
    uint i = uint(gl_VertexIndex);
    v_value = packUnorm4x8(imageLoad(img, ivec2(int(i % 8u), int(i / 8u))));
    place(i);
}
