#version 450
// Raster matrix: pixel i gets word i of a uniform buffer, read in the fragment shader.
#extension GL_GOOGLE_include_directive : require
#include "matrix_pixel.glsl"
layout(set = 0, binding = 0, std140) uniform Data { uvec4 d[16]; } data;
layout(location = 0) out uint o_value;

void main() {
    uint i = pixel_slot();
    o_value = data.d[i / 4u][i % 4u];
}
