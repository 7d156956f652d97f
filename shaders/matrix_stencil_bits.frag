#version 450
// Raster matrix: adds bit `mode` (1 << mode) to the 8-bit red of every fragment that passes
// the stencil test (EQUAL on that bit alone): eight draws rebuild the stencil value in red.
#extension GL_GOOGLE_include_directive : require
#include "matrix_pixel.glsl"
layout(location = 0) out vec4 o_color;

void main() {
    o_color = vec4(float(1u << pc.mode) / 255.0, 0.0, 0.0, 0.0);
}
