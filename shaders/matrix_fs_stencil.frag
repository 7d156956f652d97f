#version 450
// Raster matrix: each pixel gets its stencil value, read in the fragment shader (texelFetch)
// through a view of the stencil aspect.
#extension GL_EXT_samplerless_texture_functions : require
layout(set = 0, binding = 0) uniform utexture2D img;
layout(location = 0) out uint o_value;

void main() {
    o_value = texelFetch(img, ivec2(gl_FragCoord.xy), 0).r;
}
