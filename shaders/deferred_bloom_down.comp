#version 450
// The deferred sample's bloom downsample: each texel averages a 4x4 block of the source with 4
// bilinear taps; with `param` = 1 (the first step, from the HDR image) only what exceeds 1.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D src;
layout(set = 0, binding = 1, rgba16f) uniform writeonly image2D dst;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    vec2 uv = (vec2(p) + 0.5) / vec2(pc.width, pc.height);
    vec2 texel = 1.0 / vec2(textureSize(src, 0));
    vec3 c = vec3(0.0);
    for (int i = 0; i < 4; i++) {
        vec2 o = vec2((i & 1) == 0 ? -1.0 : 1.0, (i & 2) == 0 ? -1.0 : 1.0) * texel;
        vec3 s = textureLod(src, uv + o, 0.0).rgb;
        c += pc.param == 1u ? max(s - vec3(1.0), vec3(0.0)) : s;
    }
    imageStore(dst, ivec2(p), vec4(c * 0.25, 1.0));
}
