#version 450
// The deferred sample's UI overlay: rectangles given in pixels (x, y, width, height) from the
// top-left corner, six vertices each (`vkCmdDraw(6 * RECTS)`, no vertex buffer): a translucent
// panel, a frame around it and three bars.
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint view; } pc;
layout(location = 0) flat out vec4 v_color;

const int RECTS = 8;
const vec4 RECT[RECTS] = vec4[](
    vec4(8.0, 8.0, 112.0, 44.0),
    vec4(8.0, 8.0, 112.0, 1.0),
    vec4(8.0, 51.0, 112.0, 1.0),
    vec4(8.0, 8.0, 1.0, 44.0),
    vec4(119.0, 8.0, 1.0, 44.0),
    vec4(16.0, 16.0, 84.0, 6.0),
    vec4(16.0, 27.0, 60.0, 6.0),
    vec4(16.0, 38.0, 96.0, 6.0)
);
const vec4 COLOR[RECTS] = vec4[](
    vec4(0.04, 0.05, 0.09, 0.6),
    vec4(0.9, 0.9, 0.95, 0.8),
    vec4(0.9, 0.9, 0.95, 0.8),
    vec4(0.9, 0.9, 0.95, 0.8),
    vec4(0.9, 0.9, 0.95, 0.8),
    vec4(0.95, 0.45, 0.15, 0.9),
    vec4(0.25, 0.8, 0.35, 0.9),
    vec4(0.2, 0.55, 1.0, 0.9)
);
const vec2 CORNER[6] = vec2[](
    vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(0.0, 1.0),
    vec2(1.0, 0.0), vec2(1.0, 1.0), vec2(0.0, 1.0)
);

void main() {
    int i = gl_VertexIndex / 6;
    vec4 r = RECT[i];
    vec2 px = r.xy + r.zw * CORNER[gl_VertexIndex % 6];
    gl_Position = vec4(px / vec2(pc.width, pc.height) * 2.0 - 1.0, 0.0, 1.0);
    v_color = COLOR[i];
}
