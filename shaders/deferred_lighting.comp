#version 450
// The deferred sample's lighting: sun and rim light through their shadow masks, the tile's point
// lights, sky ambient through the SSAO, emissive surfaces; the sky where nothing was hit.
#extension GL_GOOGLE_include_directive : require
#include "deferred_scene.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D depth;
layout(set = 0, binding = 1) uniform sampler2D albedos;
layout(set = 0, binding = 2) uniform sampler2D normals;
layout(set = 0, binding = 3) uniform sampler2D materials;
layout(set = 0, binding = 4) uniform sampler2D mask_sun;
layout(set = 0, binding = 5) uniform sampler2D mask_rim;
layout(set = 0, binding = 6) uniform sampler2D ssao;
layout(set = 0, binding = 7, std430) readonly buffer Tiles { uint tiles[]; };
layout(set = 0, binding = 8, rgba16f) uniform writeonly image2D hdr;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

vec3 sky(vec3 rd) {
    vec3 c = mix(vec3(0.55, 0.62, 0.75), vec3(0.12, 0.25, 0.6), clamp(rd.y * 1.6, 0.0, 1.0));
    float sun = pow(max(dot(rd, SUN_DIR), 0.0), 800.0);
    return c + SUN_COLOR * sun * 4.0;
}

vec3 shade(vec3 albedo, vec3 material, vec3 n, vec3 v, vec3 l, vec3 color) {
    float ndl = max(dot(n, l), 0.0);
    vec3 h = normalize(l + v);
    float shininess = mix(128.0, 8.0, material.x);
    vec3 f0 = mix(vec3(0.04), albedo, material.y);
    vec3 spec = f0 * pow(max(dot(n, h), 0.0), shininess) * (shininess + 8.0) / 25.0;
    return (albedo * (1.0 - material.y) + spec) * color * ndl;
}

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    uvec2 size = uvec2(pc.width, pc.height);
    vec3 rd = camera_ray(p, size);
    float t = texelFetch(depth, ivec2(p), 0).r;
    if (t >= 1e20) {
        imageStore(hdr, ivec2(p), vec4(sky(rd), 1.0));
        return;
    }
    vec3 w = CAM_POS + rd * t;
    vec3 albedo = texelFetch(albedos, ivec2(p), 0).rgb;
    vec3 n = normalize(texelFetch(normals, ivec2(p), 0).xyz);
    vec3 material = texelFetch(materials, ivec2(p), 0).rgb;
    vec2 lit = vec2(texelFetch(mask_sun, ivec2(p), 0).r, texelFetch(mask_rim, ivec2(p), 0).r);
    float ao = texelFetch(ssao, ivec2(p), 0).r;
    vec3 v = -rd;
    vec3 c = shade(albedo, material, n, v, SUN_DIR, SUN_COLOR) * lit.r;
    c += shade(albedo, material, n, v, RIM_DIR, RIM_COLOR) * lit.g;
    uvec2 tile = p / 16u;
    uint base = (tile.y * ((size.x + 15u) / 16u) + tile.x) * (POINT_LIGHTS + 1u);
    uint count = min(tiles[base], POINT_LIGHTS);
    for (uint i = 0u; i < count; i++) {
        vec3 pos, color;
        point_light(tiles[base + 1u + i], pc.frame, pos, color);
        vec3 l = pos - w;
        float d = length(l);
        float falloff = clamp(1.0 - d / POINT_RADIUS, 0.0, 1.0);
        c += shade(albedo, material, n, v, l / d, color) * falloff * falloff;
    }
    vec3 ambient = mix(vec3(0.12, 0.11, 0.1), vec3(0.2, 0.26, 0.38), n.y * 0.5 + 0.5);
    c += albedo * ambient * ao;
    c += albedo * material.z * 6.0;
    imageStore(hdr, ivec2(p), vec4(c, 1.0));
}
