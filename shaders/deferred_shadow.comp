#version 450
// The deferred sample's shadow map of directional light `param`: per texel, the distance along
// the light's direction to the first surface (FAR if none), orthographic over the scene.
#extension GL_GOOGLE_include_directive : require
#include "deferred_scene.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r32f) uniform writeonly image2D map;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    vec3 right, up, fwd;
    light_frame(pc.param, right, up, fwd);
    vec2 uv = (vec2(p) + 0.5) / vec2(pc.width, pc.height) * 2.0 - 1.0;
    vec3 ro = right * uv.x * SHADOW_EXTENT + up * uv.y * SHADOW_EXTENT - fwd * SHADOW_BACK;
    vec3 n;
    int id;
    float t = trace(ro, fwd, n, id);
    imageStore(map, ivec2(p), vec4(t));
}
