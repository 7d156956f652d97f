#version 450
// The deferred sample's lighting, on the async compute queue: the sun through its shadow map
// (3x3 percentage-closer filtered), the rim light, the tile's point lights, sky ambient through
// the SSAO, emissive surfaces; the sky where the depth buffer holds its clear value.
#extension GL_GOOGLE_include_directive : require
#include "deferred_scene.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D depth;
layout(set = 0, binding = 1) uniform sampler2D albedos;
layout(set = 0, binding = 2) uniform sampler2D normals;
layout(set = 0, binding = 3) uniform sampler2D shadow_map;
layout(set = 0, binding = 4) uniform sampler2D ssao;
layout(set = 0, binding = 5, std430) readonly buffer Tiles { uint tiles[]; };
layout(set = 0, binding = 6, rgba16f) uniform writeonly image2D hdr;
// The frame number, which the host writes: the recorded commands stay the same frame after
// frame, so they can be submitted again (the push constant's `frame` is unused).
layout(set = 0, binding = 7, std430) readonly buffer HostFrame { uint frame; } host;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

vec3 sky(vec3 rd) {
    vec3 c = mix(vec3(0.55, 0.62, 0.75), vec3(0.12, 0.25, 0.6), clamp(rd.y * 1.6, 0.0, 1.0));
    float sun = pow(max(dot(rd, SUN_DIR), 0.0), 800.0);
    return c + SUN_COLOR * sun * 4.0;
}

// How lit world point `w` (normal `n`) is by the sun: 0 in shadow, 1 lit.
float sun_visibility(vec3 w, vec3 n) {
    // Offset along the normal, more where the sun grazes: no self-shadowing acne.
    vec3 s = light_space(w + n * (0.02 + 0.04 * (1.0 - max(dot(n, SUN_DIR), 0.0))));
    vec2 uv = s.xy * 0.5 + 0.5;
    // Outside the map nothing casts a shadow.
    if (any(lessThan(uv, vec2(0.0))) || any(greaterThan(uv, vec2(1.0)))) {
        return 1.0;
    }
    ivec2 size = textureSize(shadow_map, 0);
    float bias = 0.01 / (2.0 * SHADOW_BACK);
    float sum = 0.0;
    for (int y = -1; y <= 1; y++) {
        for (int x = -1; x <= 1; x++) {
            ivec2 c = clamp(ivec2(uv * vec2(size)) + ivec2(x, y), ivec2(0), size - 1);
            sum += s.z - bias > texelFetch(shadow_map, c, 0).r ? 0.0 : 1.0;
        }
    }
    return sum / 9.0;
}

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    uvec2 size = uvec2(pc.width, pc.height);
    vec3 rd = camera_ray(p, size);
    float t = scene_distance(texelFetch(depth, ivec2(p), 0).r, p, size);
    if (t >= 1e20) {
        imageStore(hdr, ivec2(p), vec4(sky(rd), 1.0));
        return;
    }
    vec3 w = CAM_POS + rd * t;
    vec4 albedo_rough = texelFetch(albedos, ivec2(p), 0);
    vec3 albedo = albedo_rough.rgb;
    vec4 normal_emissive = texelFetch(normals, ivec2(p), 0);
    vec3 n = normalize(normal_emissive.xyz);
    float ao = texelFetch(ssao, ivec2(p), 0).r;
    vec3 v = -rd;
    vec3 c = shade(albedo, albedo_rough.a, n, v, SUN_DIR, SUN_COLOR) * sun_visibility(w, n);
    c += shade(albedo, albedo_rough.a, n, v, RIM_DIR, RIM_COLOR);
    uvec2 tile = p / 16u;
    uint base = (tile.y * ((size.x + 15u) / 16u) + tile.x) * (POINT_LIGHTS + 1u);
    uint count = min(tiles[base], POINT_LIGHTS);
    for (uint i = 0u; i < count; i++) {
        vec3 pos, color;
        point_light(tiles[base + 1u + i], host.frame, pos, color);
        vec3 l = pos - w;
        float d = length(l);
        float falloff = clamp(1.0 - d / POINT_RADIUS, 0.0, 1.0);
        c += shade(albedo, albedo_rough.a, n, v, l / d, color) * falloff * falloff;
    }
    vec3 ambient = mix(vec3(0.12, 0.11, 0.1), vec3(0.2, 0.26, 0.38), n.y * 0.5 + 0.5);
    c += albedo * ambient * ao;
    c += albedo * normal_emissive.w * 6.0;
    imageStore(hdr, ivec2(p), vec4(c, 1.0));
}
