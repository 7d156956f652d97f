// The deferred sample's scene, shared by its shaders: a camera, a checkered ground, seven
// spheres (one emissive), two directional lights with shadow maps and a ring of point lights.
// Pure functions of their inputs, so every pass recomputes what it needs.

const float FAR = 1e30;
const vec3 CAM_POS = vec3(0.0, 2.2, 7.5);
const vec3 CAM_TARGET = vec3(0.0, 0.7, 0.0);
const float TAN_HALF_FOV = 0.45;

// Directional lights: towards the light, colour.
const vec3 SUN_DIR = normalize(vec3(-0.75, 0.8, 0.35));
const vec3 SUN_COLOR = vec3(1.0, 0.9, 0.75) * 1.5;
const vec3 RIM_DIR = normalize(vec3(-0.8, 0.55, -0.6));
const vec3 RIM_COLOR = vec3(0.35, 0.5, 1.0) * 0.9;
// Shadow maps cover this half-width around the origin, from this far back.
const float SHADOW_EXTENT = 6.5;
const float SHADOW_BACK = 20.0;

const uint POINT_LIGHTS = 12u;
const float POINT_RADIUS = 2.2;

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

// The pixel (fractional) a world point projects to, and its distance from the camera.
vec3 project(vec3 w, uvec2 size) {
    Camera c = camera();
    vec3 v = w - c.pos;
    float z = dot(v, c.fwd);
    float aspect = float(size.x) / float(size.y);
    vec2 ndc = vec2(dot(v, c.right) / (z * TAN_HALF_FOV * aspect), -dot(v, c.up) / (z * TAN_HALF_FOV));
    return vec3((ndc * 0.5 + 0.5) * vec2(size), length(v));
}

const int SPHERES = 7;
const vec4 SPHERE[SPHERES] = vec4[](
    vec4(-2.2, 0.8, 0.0, 0.8),
    vec4(0.0, 1.0, -0.6, 1.0),
    vec4(2.25, 0.7, 0.3, 0.7),
    vec4(-0.9, 0.35, 1.8, 0.35),
    vec4(1.1, 0.4, 2.0, 0.4),
    vec4(0.3, 2.75, -1.9, 0.32),
    vec4(-1.5, 0.5, -2.4, 0.5)
);
// Albedo, and (roughness, metallic, emissive).
const vec3 ALBEDO[SPHERES] = vec3[](
    vec3(0.85, 0.12, 0.1),
    vec3(0.92, 0.9, 0.86),
    vec3(0.1, 0.3, 0.9),
    vec3(0.95, 0.8, 0.1),
    vec3(0.15, 0.8, 0.25),
    vec3(1.0, 0.55, 0.15),
    vec3(0.6, 0.2, 0.75)
);
const vec3 MATERIAL[SPHERES] = vec3[](
    vec3(0.45, 0.0, 0.0),
    vec3(0.15, 1.0, 0.0),
    vec3(0.3, 0.0, 0.0),
    vec3(0.6, 0.0, 0.0),
    vec3(0.25, 0.0, 0.0),
    vec3(0.5, 0.0, 1.0),
    vec3(0.35, 0.5, 0.0)
);

// The nearest hit of ray `ro + t rd` with t > 0: t (FAR if none), normal, object id (-1: none,
// 0: ground, 1 + i: sphere i).
float trace(vec3 ro, vec3 rd, out vec3 n, out int id) {
    float best = FAR;
    id = -1;
    n = vec3(0.0, 1.0, 0.0);
    if (rd.y < -1e-6) {
        float t = -ro.y / rd.y;
        if (t > 1e-4 && t < best) {
            best = t;
            id = 0;
        }
    }
    for (int i = 0; i < SPHERES; i++) {
        vec3 oc = ro - SPHERE[i].xyz;
        float b = dot(oc, rd);
        float c = dot(oc, oc) - SPHERE[i].w * SPHERE[i].w;
        float h = b * b - c;
        if (h < 0.0) {
            continue;
        }
        float t = -b - sqrt(h);
        if (t > 1e-4 && t < best) {
            best = t;
            id = 1 + i;
            n = normalize(ro + rd * t - SPHERE[i].xyz);
        }
    }
    return best;
}

// Albedo and (roughness, metallic, emissive) of object `id` at world point `w`.
void surface(int id, vec3 w, out vec3 albedo, out vec3 material) {
    if (id == 0) {
        ivec2 cell = ivec2(floor(w.xz));
        bool odd = ((cell.x + cell.y) & 1) != 0;
        albedo = odd ? vec3(0.6, 0.58, 0.55) : vec3(0.2, 0.21, 0.24);
        // Far away the checks are finer than a pixel: their average instead of a moire.
        albedo = mix(albedo, vec3(0.4, 0.395, 0.395), smoothstep(9.0, 22.0, distance(w, CAM_POS)));
        material = vec3(0.7, 0.0, 0.0);
    } else {
        albedo = ALBEDO[id - 1];
        material = MATERIAL[id - 1];
    }
}

// Directional light `k` (0: sun, 1: rim): towards the light.
vec3 light_dir(uint k) {
    return k == 0u ? SUN_DIR : RIM_DIR;
}

// The orthographic frame of light `k`'s shadow map.
void light_frame(uint k, out vec3 right, out vec3 up, out vec3 fwd) {
    fwd = -light_dir(k);
    right = normalize(cross(fwd, abs(fwd.y) > 0.99 ? vec3(1.0, 0.0, 0.0) : vec3(0.0, 1.0, 0.0)));
    up = cross(right, fwd);
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
