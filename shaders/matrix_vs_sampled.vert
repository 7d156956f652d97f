#version 450
// Raster matrix: point i carries texel i of a sampled image (texelFetch), read in the vertex
// shader: RGBA8 packed, or a depth float's bits (push constant `depth`).
#extension GL_EXT_samplerless_texture_functions : require
#extension GL_GOOGLE_include_directive : require
#include "matrix_points.glsl"
layout(set = 0, binding = 0) uniform texture2D img;
layout(location = 0) flat out uint v_value;

void main() {
    uint i = uint(gl_VertexIndex);
    vec4 t = texelFetch(img, ivec2(int(i % 8u), int(i / 8u)), 0);
    v_value = pc.depth == 1u ? floatBitsToUint(t.r) : packUnorm4x8(t);
    place(i);
}
