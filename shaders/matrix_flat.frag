#version 450
// Raster matrix: writes the point's value to an r32ui target.
layout(location = 0) flat in uint v_value;
layout(location = 0) out uint o_value;

void main() {
    o_value = v_value;
}
