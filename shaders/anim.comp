#version 450
// The window sample's animation: an integer pattern of the pixel and the frame number, so the
// host can recompute any frame exactly (see `expected_pixel` in examples/window.rs). The frame
// number comes from a buffer the host writes (the sample binds one word per frame in flight),
// so that the recorded dispatch is the same every frame and can be replayed.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D img;
layout(set = 0, binding = 1, std430) readonly buffer Frame { uint frame; };

void main() {
    ivec2 size = imageSize(img);
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= size.x || p.y >= size.y) {
        return;
    }
    uint x = uint(p.x);
    uint y = uint(p.y);
    uint t = frame;
    int dx = p.x - size.x / 2;
    int dy = p.y - size.y / 2;
    uint d2 = uint(dx * dx + dy * dy);
    uint r = ((d2 >> 5) + t * 6u) & 255u;
    uint g = ((x ^ y) + t * 3u) & 255u;
    uint b = (((x + t * 2u) >> 3) * 16u + (y >> 4) * 8u) & 255u;
    imageStore(img, p, vec4(r, g, b, 255u) / 255.0);
}
