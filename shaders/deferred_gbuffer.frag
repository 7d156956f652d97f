#version 450
// The deferred sample's G-buffer: albedo and roughness (rgba8), world normal and emissive
// strength (rgba16f). Depth is the depth attachment's.
#extension GL_GOOGLE_include_directive : require
#include "deferred_scene.glsl"
layout(location = 0) in vec3 v_world;
layout(location = 1) in vec3 v_normal;
layout(location = 2) flat in vec4 v_color;
layout(location = 3) flat in vec2 v_material;
layout(location = 0) out vec4 o_albedo;
layout(location = 1) out vec4 o_normal;

void main() {
    vec3 albedo = v_color.rgb;
    if ((uint(v_material.y) & FLAG_CHECKER) != 0u) {
        albedo = checker(v_world);
    }
    o_albedo = vec4(albedo, v_color.a);
    o_normal = vec4(normalize(v_normal), v_material.x);
}
