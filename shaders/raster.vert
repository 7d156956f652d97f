#version 450
// Position (clip space) and colour per vertex; no transform. The raster tests and the stock
// render pass's example draw with it.
layout(location = 0) in vec3 position;
layout(location = 1) in vec4 color;
layout(location = 0) out vec4 v_color;

void main() {
    v_color = color;
    gl_Position = vec4(position, 1.0);
}
