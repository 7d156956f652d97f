#version 450
// Raster matrix: writes word i of a storage buffer (a float's bits) as pixel i's depth.
#extension GL_GOOGLE_include_directive : require
#include "matrix_pixel.glsl"
layout(set = 0, binding = 0, std430) readonly buffer Src { uint d[64]; } src;

void main() {
    gl_FragDepth = uintBitsToFloat(src.d[pixel_slot()]);
}
