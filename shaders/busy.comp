#version 450
// Keeps a queue busy for as long as the test asks: data[i] = `rounds` rounds of an integer LCG
// + xorshift started at i, one invocation per element along x, workgroups of 64. The stored
// result keeps the loop from being optimized away. Longer work takes more workgroups along y
// and z, each repeating the same rounds (and storing the same values), not more rounds: llvmpipe
// (lavapipe) ends any invocation's loops after 65535 iterations in all, so rounds past that do
// no work there.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) writeonly buffer Data { uint data[]; };
layout(push_constant) uniform Push { uint count; uint rounds; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) {
        return;
    }
    uint x = i;
    for (uint k = 0u; k < pc.rounds; k++) {
        x = x * 1664525u + 1013904223u;
        x ^= x >> 16;
    }
    data[i] = x;
}
