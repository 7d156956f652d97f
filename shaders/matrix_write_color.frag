#version 450
// Raster matrix: writes word i of a storage buffer (RGBA8 bytes) as pixel i's colour; with
// push constant `mode` 3 (plain points for matrix_fixed.vert), pixels on the diagonal are discarded (they keep the clear colour).
#extension GL_GOOGLE_include_directive : require
#include "matrix_pixel.glsl"
layout(set = 0, binding = 0, std430) readonly buffer Src { uint d[64]; } src;
layout(location = 0) out vec4 o_color;

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    if (pc.mode == 3u && p.x == p.y) {
        discard;
    }
    o_color = unpackUnorm4x8(src.d[pixel_slot()]);
}
