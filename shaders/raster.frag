#version 450
// The interpolated vertex colour, unchanged (flat colours per primitive stay exact).
layout(location = 0) in vec4 v_color;
layout(location = 0) out vec4 o_color;

void main() {
    o_color = v_color;
}
