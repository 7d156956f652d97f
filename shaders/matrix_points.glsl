// The raster matrix's (tests/raster_matrix.rs) shared vertex code: 8x8 targets, one point per
// pixel, pixel `slot` at (slot % 8, slot / 8). Push constants: `mode` picks what a shader with
// several ways of reading does; `depth` says a sampled image is a depth image (its float's
// bits are the value) rather than RGBA8 (packed into a uint).
layout(push_constant) uniform Push { uint mode; uint depth; uint pad0; uint pad1; } pc;

void place(uint slot) {
    vec2 pixel = vec2(float(slot % 8u), float(slot / 8u)) + 0.5;
    gl_Position = vec4(pixel / 4.0 - 1.0, 0.5, 1.0);
    gl_PointSize = 1.0;
}

// The fixed-function points of matrix_fixed.vert and matrix_fixed_place.vert, by `pc.mode`:
// mode 0 (or any other): pixel gl_VertexIndex, value gl_VertexIndex (64 plain points);
// mode 1: an index buffer's value v: pixel v >> 16, value v;
// mode 2: indirect draw arguments: pixel gl_VertexIndex % 64, value gl_VertexIndex +
//         (gl_InstanceIndex << 24).
// Returns the pixel's slot; `value` is the point's value.
uint fixed_slot(out uint value) {
    uint vi = uint(gl_VertexIndex);
    uint slot = vi;
    value = vi;
    if (pc.mode == 1u) {
        slot = vi >> 16;
    } else if (pc.mode == 2u) {
        slot = vi % 64u;
        value = vi + (uint(gl_InstanceIndex) << 24);
    }
    return slot;
}
