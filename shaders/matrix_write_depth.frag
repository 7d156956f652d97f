#version 450
// Raster matrix: writes word i of a storage buffer as pixel i's depth: the float whose bits it
// is (mode 0), or k / 256 for a word k << 8 | stencil (mode 4; matrix_fixed.vert draws plain
// points in both).
#extension GL_GOOGLE_include_directive : require
#include "matrix_pixel.glsl"
layout(set = 0, binding = 0, std430) readonly buffer Src { uint d[64]; } src;

void main() {
    uint w = src.d[pixel_slot()];
    gl_FragDepth = pc.mode == 4u ? float(w >> 8) / 256.0 : uintBitsToFloat(w);
}
