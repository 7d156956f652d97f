#version 450
// Raster matrix: each pixel gets its texel of an rgba8 storage image, read in the fragment
// shader.
#extension GL_GOOGLE_include_directive : require
#include "matrix_pixel.glsl"
layout(set = 0, binding = 0, rgba8) readonly uniform image2D img;
layout(location = 0) out uint o_value;

void main() {
    o_value = packUnorm4x8(imageLoad(img, ivec2(gl_FragCoord.xy)));
}
