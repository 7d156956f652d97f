#version 450
// Raster matrix: points whose place and value come from fixed-function inputs only.
// mode 0 (or any other): pixel gl_VertexIndex, value gl_VertexIndex (64 plain points);
// mode 1: an index buffer's value v: pixel v >> 16, value v;
// mode 2: indirect draw arguments: pixel gl_VertexIndex % 64, value gl_VertexIndex +
//         (gl_InstanceIndex << 24).
#extension GL_GOOGLE_include_directive : require
#include "matrix_points.glsl"
layout(location = 0) flat out uint v_value;

void main() {
    uint vi = uint(gl_VertexIndex);
    uint slot = vi;
    uint value = vi;
    if (pc.mode == 1u) {
        slot = vi >> 16;
    } else if (pc.mode == 2u) {
        slot = vi % 64u;
        value = vi + (uint(gl_InstanceIndex) << 24);
    }
    v_value = value;
    place(slot);
}
