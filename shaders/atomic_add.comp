#version 450
// Adds `amount` to counters[i % count] with atomicAdd, one invocation per add: the unordered
// atomic writes of the GPU tests.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer Counters { uint counters[]; };
layout(push_constant) uniform Push { uint count; uint amount; } pc;

void main() {
    atomicAdd(counters[gl_GlobalInvocationID.x % pc.count], pc.amount);
}
