#version 450
// The deferred sample's screen-space ambient occlusion: per pixel, the share of 12 points in
// the hemisphere over the surface that the depth buffer does not hide (camera distances from
// the rasterized depth).
#extension GL_GOOGLE_include_directive : require
#include "deferred_scene.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D depth; // the depth attachment (D32)
layout(set = 0, binding = 1) uniform sampler2D normals;
layout(set = 0, binding = 2, r32f) uniform writeonly image2D ao;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

uint hash(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    uvec2 size = uvec2(pc.width, pc.height);
    float t = scene_distance(texelFetch(depth, ivec2(p), 0).r, p, size);
    if (t >= 1e20) {
        imageStore(ao, ivec2(p), vec4(1.0));
        return;
    }
    vec3 w = world_at(p, size, t);
    vec3 n = texelFetch(normals, ivec2(p), 0).xyz;
    vec3 a = normalize(cross(n, abs(n.y) > 0.9 ? vec3(1.0, 0.0, 0.0) : vec3(0.0, 1.0, 0.0)));
    vec3 b = cross(n, a);
    float rot = float(hash(p.x * 1973u + p.y * 9277u) & 1023u) / 1024.0 * 6.2831853;
    float hidden = 0.0;
    const int N = 12;
    for (int i = 0; i < N; i++) {
        float fi = float(i) + 0.5;
        float phi = fi * 2.3999632 + rot;
        float z = 1.0 - fi / float(N);
        float r = sqrt(1.0 - z * z);
        float len = 0.15 + 0.45 * fract(fi * 0.618034);
        vec3 s = w + (a * cos(phi) * r + b * sin(phi) * r + n * z) * len;
        vec3 q = project(s, size);
        ivec2 c = ivec2(q.xy);
        if (any(lessThan(c, ivec2(0))) || any(greaterThanEqual(c, ivec2(size)))) {
            continue;
        }
        float scene = scene_distance(texelFetch(depth, c, 0).r, uvec2(c), size);
        if (scene < q.z - 0.03 && q.z - scene < 1.0) {
            hidden += 1.0;
        }
    }
    imageStore(ao, ivec2(p), vec4(1.0 - hidden / float(N)));
}
