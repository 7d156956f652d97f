//! The deferred sample's scene: two meshes (a box and a sphere) in one vertex and one index
//! buffer, and the instances that place them (`Instance` in `shaders/deferred_scene.glsl`), in
//! three buffers the app owns. They are written once, by the stock `Uploader` on the transfer
//! queue.
//!
//! Nothing here depends on the library's passes: a hand-written version of the frame uses the
//! same buffers and the same draw ranges.

use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, StBuffer};
use vk_baton_context::Context;
use vk_baton_passes::{UploadBatch, Uploader};

/// Bytes per vertex: position and normal, three `f32`s each (`location` 0 and 1).
pub const VERTEX_STRIDE: u32 = 24;
/// Bytes per instance (std430 `Instance`: four `vec4`s).
const INSTANCE_BYTES: usize = 64;
/// Bytes per `VkDrawIndexedIndirectCommand`, the culling shader's output.
pub const DRAW_STRIDE: u32 = 20;
/// `Instance::mesh[3]` bit: the checkered ground (`FLAG_CHECKER` in the shaders).
const FLAG_CHECKER: u32 = 1;

/// Where a mesh lies in the shared vertex and index buffers: an indexed draw's ranges.
#[derive(Clone, Copy, Debug)]
pub struct Mesh {
    pub index_count: u32,
    pub first_index: u32,
    pub vertex_offset: i32,
}

/// One instance: position, rotation about y, half extents (the meshes span -1..1), emissive
/// strength, colour, and roughness (opaque) or opacity (transparent).
struct Instance {
    pos: [f32; 3],
    yaw: f32,
    half: [f32; 3],
    emissive: f32,
    color: [f32; 4],
    mesh: Mesh,
    flags: u32,
}

/// Geometry being built: vertices, indices, and the meshes so far.
#[derive(Default)]
struct Geometry {
    vertices: Vec<[f32; 6]>,
    indices: Vec<u32>,
}

impl Geometry {
    /// Adds a mesh from its vertices (position, normal) and triangle-list indices.
    fn add(&mut self, vertices: Vec<[f32; 6]>, indices: Vec<u32>) -> Mesh {
        let mesh = Mesh {
            index_count: indices.len() as u32,
            first_index: self.indices.len() as u32,
            vertex_offset: self.vertices.len() as i32,
        };
        self.vertices.extend(vertices);
        self.indices.extend(indices);
        mesh
    }
}

/// A box from -1 to 1: four vertices per face (so each face has its own normal).
fn cube() -> (Vec<[f32; 6]>, Vec<u32>) {
    let (mut v, mut i) = (Vec::new(), Vec::new());
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let base = v.len() as u32;
            let (u, w) = ((axis + 1) % 3, (axis + 2) % 3);
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let mut p = [0.0f32; 6];
                p[axis] = sign;
                p[u] = a;
                p[w] = b;
                p[3 + axis] = sign;
                v.push(p);
            }
            i.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    (v, i)
}

/// A unit sphere of `rings` latitude bands and `segments` longitude slices.
fn sphere(rings: u32, segments: u32) -> (Vec<[f32; 6]>, Vec<u32>) {
    let (mut v, mut i) = (Vec::new(), Vec::new());
    for r in 0..=rings {
        let theta = std::f32::consts::PI * r as f32 / rings as f32;
        for s in 0..=segments {
            let phi = std::f32::consts::TAU * s as f32 / segments as f32;
            let n = [
                theta.sin() * phi.cos(),
                theta.cos(),
                theta.sin() * phi.sin(),
            ];
            v.push([n[0], n[1], n[2], n[0], n[1], n[2]]);
        }
    }
    let row = segments + 1;
    for r in 0..rings {
        for s in 0..segments {
            let (a, b) = (r * row + s, (r + 1) * row + s);
            i.extend([a, b, a + 1, a + 1, b, b + 1]);
        }
    }
    (v, i)
}

/// The scene's buffers and what the draws need to know about them.
pub struct Scene {
    /// Vertices (VERTEX_BUFFER), indices (INDEX_BUFFER, `u32`), instances (STORAGE_BUFFER,
    /// read by the vertex shader and the culling shader).
    pub vertices: Arc<StBuffer>,
    pub indices: Arc<StBuffer>,
    pub instances: Arc<StBuffer>,
    /// Instances `0..opaque` are opaque: culled, drawn into the G-buffer and the shadow map.
    pub opaque: u32,
    /// Instances `opaque..` are transparent, drawn in the forward pass, each with its mesh.
    pub transparent: Vec<Mesh>,
    /// The mesh of each opaque instance (the shadow map draws them without culling).
    pub opaque_meshes: Vec<Mesh>,
}

impl Scene {
    /// Makes the scene's buffers and stages their contents in `uploader`; the returned batch is
    /// the pass that copies them (on the transfer queue). `families`: the queue families that
    /// use the buffers (the transfer, graphics and async compute queues').
    ///
    /// The buffers are CONCURRENT between those families when there are several, with the
    /// sample's `--exclusive` too: they never change after the upload, and both queues read the
    /// instances every frame, so EXCLUSIVE would move the instances' ownership from graphics to
    /// compute and back in every frame (two release/acquire pairs) for nothing. (Seen on the
    /// NVIDIA machine: with EXCLUSIVE buffers acquired from the transfer family, the first
    /// steady frame also plans anew instead of reusing the plan of the frame before, although
    /// the two plans are the same.)
    pub fn new(
        ctx: &Context,
        uploader: &mut Uploader,
        families: &[u32],
    ) -> vk_baton::Result<(Scene, UploadBatch)> {
        let mut g = Geometry::default();
        let (v, i) = cube();
        let cube = g.add(v, i);
        let (v, i) = sphere(16, 24);
        let ball = g.add(v, i);
        let opaque_list = opaque_instances(cube, ball);
        let glass = transparent_instances(cube, ball);
        let mut bytes = Vec::with_capacity((opaque_list.len() + glass.len()) * INSTANCE_BYTES);
        for inst in opaque_list.iter().chain(&glass) {
            push_instance(&mut bytes, inst);
        }
        let vertex_bytes: Vec<u8> = g
            .vertices
            .iter()
            .flatten()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let index_bytes: Vec<u8> = g.indices.iter().flat_map(|i| i.to_le_bytes()).collect();

        let mut unique = families.to_vec();
        unique.sort_unstable();
        unique.dedup();
        let buffer = |name: &str, size: usize, usage: vk::BufferUsageFlags| {
            let mut desc = BufferDesc::new(size as u64, usage | vk::BufferUsageFlags::TRANSFER_DST);
            if unique.len() > 1 {
                desc = desc.concurrent(&unique);
            }
            ctx.buffer(desc, name)
        };
        let vertices = buffer(
            "vertices",
            vertex_bytes.len(),
            vk::BufferUsageFlags::VERTEX_BUFFER,
        )?;
        let indices = buffer(
            "indices",
            index_bytes.len(),
            vk::BufferUsageFlags::INDEX_BUFFER,
        )?;
        let instances = buffer(
            "instances",
            bytes.len(),
            vk::BufferUsageFlags::STORAGE_BUFFER,
        )?;
        let err = |e: vk_baton_passes::Error| vk_baton::Error::InvalidInput(e.to_string());
        uploader.buffer(&vertices, 0, &vertex_bytes).map_err(err)?;
        uploader.buffer(&indices, 0, &index_bytes).map_err(err)?;
        uploader.buffer(&instances, 0, &bytes).map_err(err)?;
        let scene = Scene {
            vertices,
            indices,
            instances,
            opaque: opaque_list.len() as u32,
            transparent: glass.iter().map(|g| g.mesh).collect(),
            opaque_meshes: opaque_list.iter().map(|o| o.mesh).collect(),
        };
        Ok((scene, uploader.flush_pass()))
    }
}

/// The ground, boxes and balls on it (one glowing), and three boxes the camera does not see
/// (behind it and far to the sides), which the culling drops.
fn opaque_instances(cube: Mesh, ball: Mesh) -> Vec<Instance> {
    let solid =
        |pos: [f32; 3], yaw: f32, half: [f32; 3], color: [f32; 3], rough: f32, mesh| Instance {
            pos,
            yaw,
            half,
            emissive: 0.0,
            color: [color[0], color[1], color[2], rough],
            mesh,
            flags: 0,
        };
    vec![
        Instance {
            flags: FLAG_CHECKER,
            ..solid(
                [0.0, -0.05, 0.0],
                0.0,
                [40.0, 0.05, 40.0],
                [0.4; 3],
                0.7,
                cube,
            )
        },
        solid(
            [-2.2, 0.8, 0.0],
            0.5,
            [0.8, 0.8, 0.8],
            [0.85, 0.12, 0.1],
            0.45,
            cube,
        ),
        solid(
            [0.0, 0.6, -0.8],
            -0.3,
            [1.3, 0.6, 0.7],
            [0.92, 0.9, 0.86],
            0.2,
            cube,
        ),
        solid(
            [0.0, 1.75, -0.8],
            0.0,
            [0.55, 0.55, 0.55],
            [0.95, 0.8, 0.1],
            0.3,
            ball,
        ),
        solid(
            [2.25, 0.7, 0.3],
            0.9,
            [0.5, 0.7, 0.5],
            [0.1, 0.3, 0.9],
            0.3,
            cube,
        ),
        solid(
            [-0.9, 0.35, 1.8],
            0.0,
            [0.35, 0.35, 0.35],
            [0.15, 0.8, 0.25],
            0.25,
            ball,
        ),
        solid(
            [1.1, 0.3, 2.0],
            0.3,
            [0.3, 0.3, 0.3],
            [0.6, 0.2, 0.75],
            0.35,
            cube,
        ),
        solid(
            [-1.5, 1.2, -2.6],
            0.2,
            [0.4, 1.2, 0.4],
            [0.5, 0.45, 0.4],
            0.6,
            cube,
        ),
        Instance {
            emissive: 1.0,
            ..solid(
                [0.4, 2.8, -2.2],
                0.0,
                [0.32; 3],
                [1.0, 0.55, 0.15],
                0.5,
                ball,
            )
        },
        // Outside the camera's frustum: culled.
        solid([0.0, 1.0, 12.0], 0.0, [1.0; 3], [1.0, 0.0, 1.0], 0.5, cube),
        solid([-14.0, 1.0, 2.0], 0.0, [1.0; 3], [1.0, 0.0, 1.0], 0.5, cube),
        solid([14.0, 1.0, 2.0], 0.0, [1.0; 3], [1.0, 0.0, 1.0], 0.5, ball),
    ]
}

/// A glass ball and a glass slab in front of the boxes.
fn transparent_instances(cube: Mesh, ball: Mesh) -> Vec<Instance> {
    let glass = |pos: [f32; 3], yaw: f32, half: [f32; 3], color: [f32; 4], mesh| Instance {
        pos,
        yaw,
        half,
        emissive: 0.0,
        color,
        mesh,
        flags: 0,
    };
    vec![
        glass(
            [0.9, 0.75, 1.0],
            0.0,
            [0.75; 3],
            [0.3, 0.75, 1.0, 0.35],
            ball,
        ),
        glass(
            [-1.6, 0.5, 3.2],
            -0.4,
            [0.6, 0.5, 0.06],
            [1.0, 0.3, 0.4, 0.45],
            cube,
        ),
    ]
}

/// Appends `inst` as std430 `Instance` (little-endian).
fn push_instance(out: &mut Vec<u8>, inst: &Instance) {
    let floats = [
        inst.pos[0],
        inst.pos[1],
        inst.pos[2],
        inst.yaw,
        inst.half[0],
        inst.half[1],
        inst.half[2],
        inst.emissive,
        inst.color[0],
        inst.color[1],
        inst.color[2],
        inst.color[3],
    ];
    out.extend(floats.iter().flat_map(|f| f.to_le_bytes()));
    let m = inst.mesh;
    let words = [
        m.index_count,
        m.first_index,
        m.vertex_offset as u32,
        inst.flags,
    ];
    out.extend(words.iter().flat_map(|w| w.to_le_bytes()));
}
