#version 450
// The deferred sample's light culling: per 16x16 tile, the point lights whose range reaches
// the box around the tile's surfaces. Tile i holds a count, then up to POINT_LIGHTS indices.
#extension GL_GOOGLE_include_directive : require
#include "deferred_scene.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D depth;
layout(set = 0, binding = 1, std430) writeonly buffer Tiles { uint tiles[]; };
// The frame number, which the host writes: the recorded commands stay the same frame after
// frame, so they can be submitted again (the push constant's `frame` is unused).
layout(set = 0, binding = 2, std430) readonly buffer HostFrame { uint frame; } host;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

void main() {
    uvec2 tile = gl_GlobalInvocationID.xy;
    uvec2 tiles_xy = (uvec2(pc.width, pc.height) + 15u) / 16u;
    if (tile.x >= tiles_xy.x || tile.y >= tiles_xy.y) {
        return;
    }
    uvec2 size = uvec2(pc.width, pc.height);
    vec3 lo = vec3(FAR);
    vec3 hi = vec3(-FAR);
    for (uint y = 0u; y < 16u; y++) {
        for (uint x = 0u; x < 16u; x++) {
            uvec2 p = tile * 16u + uvec2(x, y);
            if (p.x >= size.x || p.y >= size.y) {
                continue;
            }
            float t = scene_distance(texelFetch(depth, ivec2(p), 0).r, p, size);
            if (t < 1e20) {
                vec3 w = world_at(p, size, t);
                lo = min(lo, w);
                hi = max(hi, w);
            }
        }
    }
    uint base = (tile.y * tiles_xy.x + tile.x) * (POINT_LIGHTS + 1u);
    uint count = 0u;
    for (uint i = 0u; i < POINT_LIGHTS; i++) {
        vec3 pos, color;
        point_light(i, host.frame, pos, color);
        vec3 nearest = clamp(pos, lo, hi);
        if (hi.x >= lo.x && distance(nearest, pos) < POINT_RADIUS) {
            tiles[base + 1u + count] = i;
            count++;
        }
    }
    for (uint i = count; i < POINT_LIGHTS; i++) {
        tiles[base + 1u + i] = 0u;
    }
    tiles[base] = count;
}
