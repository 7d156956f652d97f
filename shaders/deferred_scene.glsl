// The deferred sample's scene constants and transforms, shared by its shaders: a camera, two
// directional lights (the sun casts the shadow map), a ring of point lights, and the per-instance
// data the meshes are drawn with. The geometry itself (boxes, spheres, the ground) comes from the
// vertex, index and instance buffers the sample uploads once (examples/deferred/scene.rs).

const float FAR = 1e30;
const vec3 CAM_POS = vec3(0.0, 2.2, 7.5);
const vec3 CAM_TARGET = vec3(0.0, 0.7, 0.0);
const float TAN_HALF_FOV = 0.45;
// The camera's depth range: standard depth (0 at NEAR, 1 at FAR_Z), cleared to 1 (the sky).
const float NEAR = 0.1;
const float FAR_Z = 100.0;

// Directional lights: towards the light, colour.
const vec3 SUN_DIR = normalize(vec3(-0.75, 0.8, 0.35));
const vec3 SUN_COLOR = vec3(1.0, 0.9, 0.75) * 1.5;
const vec3 RIM_DIR = normalize(vec3(-0.8, 0.55, -0.6));
const vec3 RIM_COLOR = vec3(0.35, 0.5, 1.0) * 0.9;
// The sun's shadow map covers this half-width around the origin, from this far back to as far
// in front (its depth 0..1 spans the 2 * SHADOW_BACK between).
const float SHADOW_EXTENT = 6.5;
const float SHADOW_BACK = 20.0;

const uint POINT_LIGHTS = 12u;
const float POINT_RADIUS = 2.2;

// One instance of a mesh (std430, 64 bytes; `Instance` in scene.rs): position and yaw, half
// extents and emissive strength, colour and roughness (opacity for transparent instances), and
// the mesh's indexed draw (index count, first index, vertex offset) with flags.
struct Instance {
    vec4 pos_yaw;
    vec4 scale_emissive;
    vec4 color;
    uvec4 mesh;
};
// `mesh.w` bits: the checkered ground.
const uint FLAG_CHECKER = 1u;

struct Camera {
    vec3 pos;
    vec3 right;
    vec3 up;
    vec3 fwd;
};

Camera camera() {
    Camera c;
    c.pos = CAM_POS;
    c.fwd = normalize(CAM_TARGET - CAM_POS);
    c.right = normalize(cross(c.fwd, vec3(0.0, 1.0, 0.0)));
    c.up = cross(c.right, c.fwd);
    return c;
}

// The camera ray through the centre of pixel `p` of a `size` image.
vec3 camera_ray(uvec2 p, uvec2 size) {
    Camera c = camera();
    float aspect = float(size.x) / float(size.y);
    vec2 ndc = (vec2(p) + 0.5) / vec2(size) * 2.0 - 1.0;
    return normalize(c.fwd + c.right * ndc.x * TAN_HALF_FOV * aspect - c.up * ndc.y * TAN_HALF_FOV);
}

// The clip-space position of world point `w` seen by the camera (Vulkan: y down, depth 0..1):
// a rasterized point lands on the pixel whose `camera_ray` passes through it.
vec4 camera_clip(vec3 w, float aspect) {
    Camera c = camera();
    vec3 v = w - c.pos;
    float z = dot(v, c.fwd);
    return vec4(dot(v, c.right) / (TAN_HALF_FOV * aspect), -dot(v, c.up) / TAN_HALF_FOV,
                FAR_Z * (z - NEAR) / (FAR_Z - NEAR), z);
}

// The camera distance of the surface at pixel `p` whose depth buffer value is `d` (FAR for the
// sky): the view-space z the projection stored, along the pixel's ray.
float scene_distance(float d, uvec2 p, uvec2 size) {
    if (d >= 1.0) {
        return FAR;
    }
    float z = NEAR * FAR_Z / (FAR_Z - d * (FAR_Z - NEAR));
    return z / dot(camera_ray(p, size), camera().fwd);
}

// The pixel (fractional) a world point projects to, and its distance from the camera.
vec3 project(vec3 w, uvec2 size) {
    Camera c = camera();
    vec3 v = w - c.pos;
    float z = dot(v, c.fwd);
    float aspect = float(size.x) / float(size.y);
    vec2 ndc = vec2(dot(v, c.right) / (z * TAN_HALF_FOV * aspect), -dot(v, c.up) / (z * TAN_HALF_FOV));
    return vec3((ndc * 0.5 + 0.5) * vec2(size), length(v));
}

// The orthographic frame of the sun's shadow map.
void light_frame(out vec3 right, out vec3 up, out vec3 fwd) {
    fwd = -SUN_DIR;
    right = normalize(cross(fwd, vec3(0.0, 1.0, 0.0)));
    up = cross(right, fwd);
}

// World point `w` in the sun's shadow map: x, y in -1..1 over the map, z its depth 0..1.
vec3 light_space(vec3 w) {
    vec3 right, up, fwd;
    light_frame(right, up, fwd);
    return vec3(dot(w, right) / SHADOW_EXTENT, dot(w, up) / SHADOW_EXTENT,
                (dot(w, fwd) + SHADOW_BACK) / (2.0 * SHADOW_BACK));
}

// The checkered ground's albedo at world point `w`.
vec3 checker(vec3 w) {
    ivec2 cell = ivec2(floor(w.xz));
    bool odd = ((cell.x + cell.y) & 1) != 0;
    vec3 albedo = odd ? vec3(0.6, 0.58, 0.55) : vec3(0.2, 0.21, 0.24);
    // Far away the checks are finer than a pixel: their average instead of a moire.
    return mix(albedo, vec3(0.4, 0.395, 0.395), smoothstep(9.0, 22.0, distance(w, CAM_POS)));
}

// Point light `i` at frame `frame`: position, colour.
void point_light(uint i, uint frame, out vec3 pos, out vec3 color) {
    float a = float(i) / float(POINT_LIGHTS) * 6.2831853 + float(frame) * 0.04;
    pos = vec3(cos(a) * 3.6, 0.35 + 0.15 * sin(a * 3.0), sin(a) * 3.6 - 0.2);
    vec3 hue = clamp(abs(fract(float(i) / float(POINT_LIGHTS) + vec3(0.0, 2.0, 1.0) / 3.0) * 6.0 - 3.0) - 1.0, 0.0, 1.0);
    color = hue * 4.0;
}

// The world point of pixel `p` at camera distance `t`.
vec3 world_at(uvec2 p, uvec2 size, float t) {
    return CAM_POS + camera_ray(p, size) * t;
}

// Lambert plus a normalized Blinn-Phong highlight of one light (`l` towards it).
vec3 shade(vec3 albedo, float roughness, vec3 n, vec3 v, vec3 l, vec3 color) {
    float ndl = max(dot(n, l), 0.0);
    vec3 h = normalize(l + v);
    float shininess = mix(128.0, 8.0, roughness);
    vec3 spec = vec3(0.04) * pow(max(dot(n, h), 0.0), shininess) * (shininess + 8.0) / 25.0;
    return (albedo + spec) * color * ndl;
}
