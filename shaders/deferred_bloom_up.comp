#version 450
// The deferred sample's bloom upsample: the lower level, tent-filtered up to this size, plus
// the downsampled level of this size.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D low;
layout(set = 0, binding = 1) uniform sampler2D skip;
layout(set = 0, binding = 2, rgba16f) uniform writeonly image2D dst;
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint param; } pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    vec2 uv = (vec2(p) + 0.5) / vec2(pc.width, pc.height);
    vec2 texel = 0.5 / vec2(textureSize(low, 0));
    vec3 c = textureLod(low, uv, 0.0).rgb * 4.0;
    c += textureLod(low, uv + vec2(-texel.x, -texel.y), 0.0).rgb;
    c += textureLod(low, uv + vec2(texel.x, -texel.y), 0.0).rgb;
    c += textureLod(low, uv + vec2(-texel.x, texel.y), 0.0).rgb;
    c += textureLod(low, uv + vec2(texel.x, texel.y), 0.0).rgb;
    c = c / 8.0 + texelFetch(skip, ivec2(p), 0).rgb;
    imageStore(dst, ivec2(p), vec4(c, 1.0));
}
