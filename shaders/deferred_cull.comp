#version 450
// The deferred sample's GPU culling: per opaque instance (`width` of them), the
// VkDrawIndexedIndirectCommand that draws it, with one instance if its bounding sphere meets
// the camera's frustum and none otherwise. The G-buffer pass draws them all with one
// vkCmdDrawIndexedIndirect.
#extension GL_GOOGLE_include_directive : require
#include "deferred_scene.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, std430) readonly buffer Instances { Instance instances[]; };
struct Draw {
    uint index_count;
    uint instance_count;
    uint first_index;
    int vertex_offset;
    uint first_instance;
};
layout(set = 0, binding = 1, std430) writeonly buffer Draws { Draw draws[]; };
// `param`: the output's aspect ratio, as the bits of a float.
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

// Whether the sphere (view-space centre `c`, radius `r`) is outside the plane x = k z.
bool outside(float x, float z, float k, float r) {
    return (x - k * z) / sqrt(1.0 + k * k) > r;
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.width || gl_GlobalInvocationID.y >= pc.height) {
        return;
    }
    Instance inst = instances[i];
    Camera cam = camera();
    vec3 v = inst.pos_yaw.xyz - cam.pos;
    vec3 c = vec3(dot(v, cam.right), dot(v, cam.up), dot(v, cam.fwd));
    // The mesh lies in -1..1 on each axis, scaled by the half extents and turned about y.
    float r = length(inst.scale_emissive.xyz);
    float kx = TAN_HALF_FOV * uintBitsToFloat(pc.param);
    bool culled = c.z + r < NEAR || c.z - r > FAR_Z
        || outside(c.x, c.z, kx, r) || outside(-c.x, c.z, kx, r)
        || outside(c.y, c.z, TAN_HALF_FOV, r) || outside(-c.y, c.z, TAN_HALF_FOV, r);
    draws[i] = Draw(inst.mesh.x, culled ? 0u : 1u, inst.mesh.y, int(inst.mesh.z), i);
}
