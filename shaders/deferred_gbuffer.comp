#version 450
// The deferred sample's G-buffer: per pixel, the camera distance of the nearest surface (FAR
// for the sky), its albedo, normal and material. Ray-cast against the analytic scene.
#extension GL_GOOGLE_include_directive : require
#include "deferred_scene.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r32f) uniform writeonly image2D depth;
layout(set = 0, binding = 1, rgba8) uniform writeonly image2D albedo_out;
layout(set = 0, binding = 2, rgba16f) uniform writeonly image2D normal_out;
layout(set = 0, binding = 3, rgba8) uniform writeonly image2D material_out;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    uvec2 size = uvec2(pc.width, pc.height);
    vec3 rd = camera_ray(p, size);
    vec3 n;
    int id;
    float t = trace(CAM_POS, rd, n, id);
    vec3 albedo = vec3(0.0);
    vec3 material = vec3(0.0);
    if (id >= 0) {
        surface(id, CAM_POS + rd * t, albedo, material);
    }
    imageStore(depth, ivec2(p), vec4(t));
    imageStore(albedo_out, ivec2(p), vec4(albedo, 1.0));
    imageStore(normal_out, ivec2(p), vec4(n, 0.0));
    imageStore(material_out, ivec2(p), vec4(material, 1.0));
}
