// The raster matrix's shared fragment code: the slot of the pixel being shaded (8x8 targets),
// and the push constants of matrix_points.glsl.
layout(push_constant) uniform Push { uint mode; uint depth; uint pad0; uint pad1; } pc;

uint pixel_slot() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    return uint(p.y) * 8u + uint(p.x);
}

uint pack_texel(vec4 t) {
    return pc.depth == 1u ? floatBitsToUint(t.r) : packUnorm4x8(t);
}
