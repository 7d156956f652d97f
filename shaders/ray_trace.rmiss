#version 460
// A miss: 0.
#extension GL_EXT_ray_tracing : require

layout(location = 0) rayPayloadInEXT uint payload;

void main() {
    payload = 0u;
}
