#version 450
// The deferred sample's screen-space shadow mask of directional light `param` (0: sun, 1:
// rim): per pixel, how lit it is, 3x3 percentage-closer filtered from the light's shadow map.
// One light at a time, so that the next shadow map can take this one's memory.
#extension GL_GOOGLE_include_directive : require
#include "deferred_scene.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D depth;
layout(set = 0, binding = 1) uniform sampler2D shadow_map;
layout(set = 0, binding = 2, r32f) uniform writeonly image2D mask;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    uvec2 size = uvec2(pc.width, pc.height);
    float t = texelFetch(depth, ivec2(p), 0).r;
    float lit = 1.0;
    vec3 w = world_at(p, size, min(t, 1e6));
    vec3 right, up, fwd;
    light_frame(pc.param, right, up, fwd);
    vec2 uv = vec2(dot(w, right), dot(w, up)) / SHADOW_EXTENT * 0.5 + 0.5;
    // Outside the map (and the sky) nothing casts a shadow.
    if (t < 1e20 && all(greaterThanEqual(uv, vec2(0.0))) && all(lessThanEqual(uv, vec2(1.0)))) {
        ivec2 map_size = textureSize(shadow_map, 0);
        float d = dot(w, fwd) + SHADOW_BACK;
        // The surface normal is not needed here: a bias that grows at grazing views.
        float bias = 0.02 + 0.05 * (1.0 - max(dot(-camera_ray(p, size), -fwd), 0.0));
        float sum = 0.0;
        for (int y = -1; y <= 1; y++) {
            for (int x = -1; x <= 1; x++) {
                ivec2 c = clamp(ivec2(uv * vec2(map_size)) + ivec2(x, y), ivec2(0), map_size - 1);
                sum += d - bias > texelFetch(shadow_map, c, 0).r ? 0.0 : 1.0;
            }
        }
        lit = sum / 9.0;
    }
    imageStore(mask, ivec2(p), vec4(lit));
}
