#version 450
// Raster matrix: no outputs. The stencil writes: each point is drawn with its own stencil
// reference and the stencil op REPLACE, where the read-only depth test passes.
void main() {
}
