#version 450
// Raster matrix: adds one step of 8-bit red per fragment that passes the depth test.
layout(location = 0) out vec4 o_color;

void main() {
    o_color = vec4(1.0 / 255.0, 0.0, 0.0, 0.0);
}
