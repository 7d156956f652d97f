#version 450
// Raster matrix: each pixel gets its texel of a sampled image (texelFetch), read in the
// fragment shader: RGBA8 packed, or a depth float's bits (push constant `depth`).
#extension GL_EXT_samplerless_texture_functions : require
#extension GL_GOOGLE_include_directive : require
#include "matrix_pixel.glsl"
layout(set = 0, binding = 0) uniform texture2D img;
layout(location = 0) out uint o_value;

void main() {
    o_value = pack_texel(texelFetch(img, ivec2(gl_FragCoord.xy), 0));
}
