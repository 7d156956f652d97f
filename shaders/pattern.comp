#version 450
// Draws a Mandelbrot set into a storage image, one invocation per pixel.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D img;

void main() {
    ivec2 size = imageSize(img);
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= size.x || p.y >= size.y) {
        return;
    }
    vec2 c = vec2(-2.2, -1.25) + vec2(p) / vec2(size) * vec2(3.2, 2.5);
    vec2 z = vec2(0.0);
    int i = 0;
    const int max_iter = 128;
    for (; i < max_iter && dot(z, z) < 4.0; i++) {
        z = vec2(z.x * z.x - z.y * z.y, 2.0 * z.x * z.y) + c;
    }
    float t = float(i) / float(max_iter);
    vec3 color = i == max_iter ? vec3(0.0) : 0.5 + 0.5 * cos(6.2831 * (t * 3.0 + vec3(0.0, 0.33, 0.67)));
    imageStore(img, p, vec4(color, 1.0));
}
