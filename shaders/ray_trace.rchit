#version 460
// The closest hit: 0x100 | the instance's custom index.
#extension GL_EXT_ray_tracing : require

layout(location = 0) rayPayloadInEXT uint payload;

void main() {
    payload = 0x100u | uint(gl_InstanceCustomIndexEXT);
}
