#version 460
// One ray per invocation of an 8x8 grid over [0,1]^2, from z = -1 towards +z, traced with a
// ray query against the top-level structure at binding 0. hits[y * 8 + x] is 0 for a miss,
// and 0x100 | the instance's custom index for a committed triangle hit.
#extension GL_EXT_ray_query : require

layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
layout(set = 0, binding = 1) writeonly buffer Hits { uint hits[]; };

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    vec3 origin = vec3((vec2(p) + 0.5) / 8.0, -1.0);
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsOpaqueEXT, 0xFF, origin, 0.0, vec3(0.0, 0.0, 1.0), 10.0);
    while (rayQueryProceedEXT(q)) {
    }
    uint v = 0u;
    if (rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionTriangleEXT) {
        v = 0x100u | uint(rayQueryGetIntersectionInstanceCustomIndexEXT(q, true));
    }
    hits[p.y * 8u + p.x] = v;
}
