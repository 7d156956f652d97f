#version 450
// The deferred sample's mesh vertex shader, for every draw of the scene: a vertex of the mesh
// (position, normal) placed by its instance (`instances[gl_InstanceIndex]`: indirect draws
// pick the instance with their firstInstance), seen by the camera (`view` 0) or by the sun's
// shadow map (`view` 1). The instance's colour and material go to the fragment shader flat.
#extension GL_GOOGLE_include_directive : require
#include "deferred_scene.glsl"
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;
layout(set = 0, binding = 0, std430) readonly buffer Instances { Instance instances[]; };
layout(push_constant) uniform Push { uint width; uint height; uint frame; uint view; } pc;
layout(location = 0) out vec3 v_world;
layout(location = 1) out vec3 v_normal;
layout(location = 2) flat out vec4 v_color;
// Emissive strength, flags.
layout(location = 3) flat out vec2 v_material;

void main() {
    Instance inst = instances[gl_InstanceIndex];
    float c = cos(inst.pos_yaw.w);
    float s = sin(inst.pos_yaw.w);
    vec3 p = position * inst.scale_emissive.xyz;
    vec3 w = inst.pos_yaw.xyz + vec3(c * p.x + s * p.z, p.y, -s * p.x + c * p.z);
    // The inverse transpose of a scale then a rotation about y.
    vec3 n = normal / inst.scale_emissive.xyz;
    v_normal = normalize(vec3(c * n.x + s * n.z, n.y, -s * n.x + c * n.z));
    v_world = w;
    v_color = inst.color;
    v_material = vec2(inst.scale_emissive.w, float(inst.mesh.w));
    if (pc.view == 0u) {
        gl_Position = camera_clip(w, float(pc.width) / float(pc.height));
    } else {
        gl_Position = vec4(light_space(w), 1.0);
    }
}
