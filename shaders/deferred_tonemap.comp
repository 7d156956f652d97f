#version 450
// The deferred sample's tone mapping: the lit HDR image under the resolved transparency layer
// (premultiplied), plus bloom, ACES-fitted curve, sRGB-like gamma, into the 8-bit output.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D hdr;
layout(set = 0, binding = 1) uniform sampler2D bloom;
layout(set = 0, binding = 2) uniform sampler2D transparent;
layout(set = 0, binding = 3, rgba8) uniform writeonly image2D ldr;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    vec2 uv = (vec2(p) + 0.5) / vec2(pc.width, pc.height);
    vec4 glass = texelFetch(transparent, ivec2(p), 0);
    vec3 c = texelFetch(hdr, ivec2(p), 0).rgb * (1.0 - glass.a) + glass.rgb;
    c += textureLod(bloom, uv, 0.0).rgb * 0.35;
    c = clamp(c * (2.51 * c + 0.03) / (c * (2.43 * c + 0.59) + 0.14), 0.0, 1.0);
    imageStore(ldr, ivec2(p), vec4(pow(c, vec3(1.0 / 2.2)), 1.0));
}
