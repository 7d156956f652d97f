#version 450
// Raster matrix: one invocation per workgroup of an indirect dispatch; workgroup w (linear)
// writes n.x | n.y << 8 | n.z << 16 | (w + 1) << 24, n the workgroup counts.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0, std430) writeonly buffer Dst { uint d[64]; } dst;

void main() {
    uvec3 n = gl_NumWorkGroups;
    uvec3 id = gl_WorkGroupID;
    uint w = id.x + id.y * n.x + id.z * n.x * n.y;
    dst.d[w] = n.x | (n.y << 8) | (n.z << 16) | ((w + 1u) << 24);
}
