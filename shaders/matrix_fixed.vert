#version 450
// Raster matrix: points whose place and value come from fixed-function inputs only
// (`fixed_slot` in matrix_points.glsl), for matrix_flat.frag, which reads the value.
#extension GL_GOOGLE_include_directive : require
#include "matrix_points.glsl"
layout(location = 0) flat out uint v_value;

void main() {
    uint value;
    place(fixed_slot(value));
    v_value = value;
}
