#version 450
// Copies the stencil aspect of an 8x8 image, read through a combined image sampler
// (texelFetch), into a buffer.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform usampler2D stencil;
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint d[64]; } dst;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    dst.d[p.y * 8 + p.x] = texelFetch(stencil, p, 0).r;
}
