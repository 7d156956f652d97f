#version 450
// The deferred sample's last pass: a light sharpen of the tone-mapped image into the app's
// output (the centre against its four neighbours).
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D ldr;
layout(set = 0, binding = 1, rgba8) uniform writeonly image2D dst;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    ivec2 size = ivec2(pc.width, pc.height);
    ivec2 q = ivec2(p);
    vec3 c = texelFetch(ldr, q, 0).rgb;
    vec3 n = texelFetch(ldr, clamp(q + ivec2(1, 0), ivec2(0), size - 1), 0).rgb
        + texelFetch(ldr, clamp(q - ivec2(1, 0), ivec2(0), size - 1), 0).rgb
        + texelFetch(ldr, clamp(q + ivec2(0, 1), ivec2(0), size - 1), 0).rgb
        + texelFetch(ldr, clamp(q - ivec2(0, 1), ivec2(0), size - 1), 0).rgb;
    imageStore(dst, q, vec4(clamp(c + (c - n * 0.25) * 0.3, 0.0, 1.0), 1.0));
}
