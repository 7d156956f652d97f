#version 450
// Raster matrix: the points of matrix_fixed.vert without their value, for fragment shaders
// that read no input: a vertex output the fragment shader does not read draws a performance
// warning (UNASSIGNED-CoreValidation-Shader-OutputNotConsumed) from older layers.
#extension GL_GOOGLE_include_directive : require
#include "matrix_points.glsl"

void main() {
    uint value;
    place(fixed_slot(value));
}
