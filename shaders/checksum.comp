#version 450
// Checksums a buffer of uints for the streaming_upload sample: every workgroup of 256 sums
// `data[j] ^ (j * 0x9E3779B9)` (wrapping) over a grid-strided share of the words and writes its
// partial sum to `partials[first + workgroup]`. The host adds the partials (wrapping).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0, std430) readonly buffer Data { uint data[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Partials { uint partials[]; };
layout(push_constant) uniform Push { uint words; uint first; } pc;

shared uint sums[256];

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    uint s = 0u;
    for (uint j = gl_GlobalInvocationID.x; j < pc.words; j += stride) {
        s += data[j] ^ (j * 0x9E3779B9u);
    }
    uint l = gl_LocalInvocationID.x;
    sums[l] = s;
    barrier();
    for (uint w = 128u; w > 0u; w >>= 1) {
        if (l < w) {
            sums[l] += sums[l + w];
        }
        barrier();
    }
    if (l == 0u) {
        partials[pc.first + gl_WorkGroupID.x] = sums[0];
    }
}
