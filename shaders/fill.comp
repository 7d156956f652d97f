#version 450
// Writes data[i] = i * 3 + seed into a storage buffer, one invocation per element.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) writeonly buffer Data { uint data[]; };
layout(push_constant) uniform Push { uint count; uint seed; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.count) {
        data[i] = i * 3u + pc.seed;
    }
}
