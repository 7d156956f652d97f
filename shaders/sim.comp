#version 450
// A deliberately ALU-heavy step for the async_compute sample: out[i] = mix(in[i] ^ salt) with
// `iters` rounds of an integer LCG + xorshift, one invocation per element, workgroups of 64.
// Integer-only, so the host can recompute the exact result.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) readonly buffer In { uint src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Out { uint dst[]; };
layout(push_constant) uniform Push { uint count; uint iters; uint salt; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) {
        return;
    }
    uint x = src[i] ^ pc.salt;
    for (uint k = 0u; k < pc.iters; k++) {
        x = x * 1664525u + 1013904223u;
        x ^= x >> 16;
    }
    dst[i] = x;
}
