#version 450
// The deferred sample's forward transparency: glass lit by the sun, the rim light and the sky,
// more opaque at grazing angles, written premultiplied (blend ONE, ONE_MINUS_SRC_ALPHA) into a
// layer the tone mapping puts over the lit scene. The faces turned away are dropped, so a
// convex mesh blends each pixel once whatever order its triangles come in.
#extension GL_GOOGLE_include_directive : require
#include "deferred_scene.glsl"
layout(location = 0) in vec3 v_world;
layout(location = 1) in vec3 v_normal;
layout(location = 2) flat in vec4 v_color;
layout(location = 3) flat in vec2 v_material;
layout(location = 0) out vec4 o_color;

void main() {
    vec3 n = normalize(v_normal);
    vec3 v = normalize(CAM_POS - v_world);
    float facing = dot(n, v);
    if (facing <= 0.0) {
        discard;
    }
    vec3 c = shade(v_color.rgb, 0.1, n, v, SUN_DIR, SUN_COLOR)
        + shade(v_color.rgb, 0.1, n, v, RIM_DIR, RIM_COLOR)
        + v_color.rgb * 0.25;
    float alpha = mix(v_color.a, 1.0, pow(1.0 - facing, 3.0));
    o_color = vec4(c * alpha, alpha);
}
