#version 450
// The incremental sample's "app-owned" work: img[x, y] = data[y * width + x] * 3 + 1.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, std430) readonly buffer Data { uint data[]; };
layout(set = 0, binding = 1, r32ui) uniform writeonly uimage2D img;

void main() {
    ivec2 size = imageSize(img);
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= size.x || p.y >= size.y) {
        return;
    }
    uint v = data[uint(p.y) * uint(size.x) + uint(p.x)];
    imageStore(img, p, uvec4(v * 3u + 1u));
}
