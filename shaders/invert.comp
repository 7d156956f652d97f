#version 450
// vk-baton-passes' ComputeDispatch test: reads a sampled image, writes its inverse to a
// storage image, and folds the red channel into a storage buffer.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D src;
layout(set = 0, binding = 1, rgba8) uniform writeonly image2D dst;
layout(set = 0, binding = 2, std430) buffer Sums { uint sums[]; };
layout(push_constant) uniform Push { uint width; uint height; uint bias; } pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    vec4 c = texelFetch(src, ivec2(p), 0);
    imageStore(dst, ivec2(p), vec4(1.0) - c);
    uint i = p.y * pc.width + p.x;
    sums[i] = sums[i] * 2u + uint(c.r * 255.0 + 0.5) + pc.bias;
}
