#version 450
// The deferred sample's SSAO blur: a 5x5 box filter.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D raw;
layout(set = 0, binding = 1, r32f) uniform writeonly image2D blurred;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    ivec2 size = ivec2(pc.width, pc.height);
    float sum = 0.0;
    for (int y = -2; y <= 2; y++) {
        for (int x = -2; x <= 2; x++) {
            sum += texelFetch(raw, clamp(ivec2(p) + ivec2(x, y), ivec2(0), size - 1), 0).r;
        }
    }
    imageStore(blurred, ivec2(p), vec4(sum / 25.0));
}
