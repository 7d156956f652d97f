#version 460
// The 8x8 grid of rays of ray_trace.rgen, one per invocation, traced with a ray query against
// the top-level structure at binding 0: hits[y * 8 + x] is 0 for a miss and 0x100 | the
// instance's custom index for a hit.
#extension GL_EXT_ray_query : require
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
layout(set = 0, binding = 1) writeonly buffer Hits { uint hits[]; };

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    vec3 origin = vec3((vec2(p) + 0.5) / 8.0, -1.0);
    rayQueryEXT rq;
    rayQueryInitializeEXT(rq, tlas, gl_RayFlagsOpaqueEXT, 0xFF, origin, 0.0, vec3(0.0, 0.0, 1.0), 10.0);
    while (rayQueryProceedEXT(rq)) {
    }
    uint result = 0u;
    if (rayQueryGetIntersectionTypeEXT(rq, true) == gl_RayQueryCommittedIntersectionTriangleEXT) {
        result = 0x100u | uint(rayQueryGetIntersectionInstanceCustomIndexEXT(rq, true));
    }
    hits[p.y * 8u + p.x] = result;
}
