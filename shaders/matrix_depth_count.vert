#version 450
// Raster matrix: instance j is a full-screen triangle at depth (j + 0.5) / 256.
void main() {
    vec2 corner = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2));
    float z = (float(gl_InstanceIndex) + 0.5) / 256.0;
    gl_Position = vec4(corner * 2.0 - 1.0, z, 1.0);
}
