#version 450
// Raster matrix: pixel i gets word i of a storage buffer, read in the fragment shader.
#extension GL_GOOGLE_include_directive : require
#include "matrix_pixel.glsl"
layout(set = 0, binding = 0, std430) readonly buffer Data { uint d[64]; } data;
layout(location = 0) out uint o_value;

void main() {
    o_value = data.d[pixel_slot()];
}
