//! SPIR-V of the shaders used by vk-baton's examples and tests.
//!
//! The GLSL sources live beside this crate (`shaders/*.comp`, `*.vert`, `*.frag`); `build.rs`
//! compiles them with `glslangValidator` (Debian/Ubuntu package `glslang-tools`). Library
//! users never need it: only vk-baton's own examples and tests depend on this crate.

/// `pattern.comp`: a Mandelbrot set written to `layout(set 0, binding 0, rgba8) image2D`,
/// workgroups of 8×8.
pub const PATTERN_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pattern.comp.spv"));

/// `fill.comp`: `data[i] = i * 3 + seed` into `layout(set 0, binding 0) buffer`, push constants
/// `{ uint count; uint seed; }`, workgroups of 64.
pub const FILL_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/fill.comp.spv"));

/// `sim.comp`: `dst[i] = mix(src[i] ^ salt, iters)` (integer LCG + xorshift rounds), bindings
/// 0 (readonly) and 1 (writeonly) storage buffers, push constants `{ uint count; uint iters;
/// uint salt; }`, workgroups of 64. Used by the async_compute sample.
pub const SIM_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sim.comp.spv"));

/// `busy.comp`: `data[i]` = `rounds` rounds of an integer LCG + xorshift started at `i`
/// (`i` along x), into `layout(set 0, binding 0) buffer`, push constants
/// `{ uint count; uint rounds; }`, workgroups of 64: a dispatch that keeps a queue busy for as
/// long as the tests need. Workgroups along y and z repeat the work; keep `rounds` at most
/// 65535, as llvmpipe stops an invocation's loops there.
pub const BUSY_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/busy.comp.spv"));

/// `checksum.comp`: per-workgroup wrapping sums of `data[j] ^ (j * 0x9E3779B9)` written to
/// `partials[first + workgroup]`; bindings 0 (data) and 1 (partials), push constants
/// `{ uint words; uint first; }`, workgroups of 256. Used by the streaming_upload sample.
pub const CHECKSUM_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/checksum.comp.spv"));

/// `sampled_depth.comp`: the depth of an 8×8 image through `layout(binding 0) sampler2D`
/// (`texelFetch`), as the float's bits, into `d[y * 8 + x]` of binding 1; one workgroup of 8×8.
pub const SAMPLED_DEPTH_COMP: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/sampled_depth.comp.spv"));

/// `sampled_stencil.comp`: the stencil of an 8×8 image through `layout(binding 0)
/// usampler2D` into `d[y * 8 + x]` of binding 1; one workgroup of 8×8.
pub const SAMPLED_STENCIL_COMP: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/sampled_stencil.comp.spv"));

/// `ray_trace.rgen`: an 8×8 launch of rays from `z = -1` along `+z` through `[0,1]²`, traced
/// against `layout(binding 0) accelerationStructureEXT`; `hits[y * 8 + x]` (binding 1) is the
/// payload the miss or closest-hit shader left. SPIR-V 1.5.
pub const RAY_TRACE_RGEN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ray_trace.rgen.spv"));

/// `ray_trace.rmiss`: payload 0.
pub const RAY_TRACE_RMISS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ray_trace.rmiss.spv"));

/// `ray_trace.rchit`: payload `0x100 | gl_InstanceCustomIndexEXT`.
pub const RAY_TRACE_RCHIT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ray_trace.rchit.spv"));

/// `atomic_add.comp`: `atomicAdd(counters[i % count], amount)` per invocation `i`, binding 0
/// a storage buffer, push constants `{ uint count; uint amount; }`, workgroups of 64.
pub const ATOMIC_ADD_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/atomic_add.comp.spv"));

/// `mesh_rects.task`: launches `count` mesh workgroups (binding 0, a storage buffer's first
/// `uint`). SPIR-V 1.4.
pub const MESH_RECTS_TASK: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mesh_rects.task.spv"));

/// `mesh_rects.mesh`: workgroup `i` draws rectangle `i` of binding 1 (`{ vec4 corners; vec4
/// color; }`, corners `x0, y0, x1, y1` in clip space at depth 0.5) as two triangles, passing
/// the colour on at location 0, and writes `100 + i` to `drawn[i]` (binding 2). SPIR-V 1.4.
pub const MESH_RECTS_MESH: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mesh_rects.mesh.spv"));

/// `ray_query.comp`: the grid of `ray_trace.rgen` in one 8×8 workgroup, each ray traced with a
/// ray query against `layout(binding 0) accelerationStructureEXT`; `hits[y * 8 + x]` (binding
/// 1) is 0 for a miss and `0x100 | gl_InstanceCustomIndexEXT` for a hit. SPIR-V 1.4.
pub const RAY_QUERY_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ray_query.comp.spv"));

/// `anim.comp`: the window sample's integer animation into `layout(binding 0, rgba8) image2D`,
/// of the frame number in `layout(binding 1) buffer { uint frame; }`, workgroups of 8×8.
pub const ANIM_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/anim.comp.spv"));

/// `incremental.comp`: `img[x, y] = data[y * width + x] * 3 + 1`; binding 0 a readonly
/// storage buffer, binding 1 an `r32ui` storage image; workgroups of 8×8.
pub const INCREMENTAL_COMP: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/incremental.comp.spv"));

/// `raster.vert`: `gl_Position = vec4(position, 1)` from `location 0` (`vec3`), passing the
/// `location 1` colour (`vec4`) on.
pub const RASTER_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/raster.vert.spv"));

/// `raster.frag`: writes the interpolated colour to `location 0`.
pub const RASTER_FRAG: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/raster.frag.spv"));

/// SPIR-V bytes as 32-bit words (what `vkCreateShaderModule` takes), through
/// [`ash::util::read_spv`] (which also byte-swaps big-endian SPIR-V). For this crate's
/// constants; code that loads SPIR-V from elsewhere calls `read_spv` and handles its error.
///
/// ```
/// let words = vk_baton_shaders::words(vk_baton_shaders::FILL_COMP);
/// assert_eq!(words[0], 0x0723_0203); // the SPIR-V magic number
/// ```
///
/// # Panics
/// If `spirv` is not a whole number of 32-bit words (never for this crate's constants).
pub fn words(spirv: &[u8]) -> Vec<u32> {
    ash::util::read_spv(&mut std::io::Cursor::new(spirv))
        .expect("SPIR-V is a whole number of 32-bit words")
}

/// `invert.comp`: `texelFetch` from `layout(set 0, binding 0) sampler2D`, writes `1 - c` to
/// `layout(set 0, binding 1, rgba8) image2D`, and `sums[i] = sums[i] * 2 + red + bias` in the
/// `layout(set 0, binding 2)` buffer; push constants `{ uint width; uint height; uint bias; }`,
/// workgroups of 8×8.
pub const INVERT_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/invert.comp.spv"));

/// The deferred sample's shaders (`deferred_*`, sharing the camera, lights and instance layout
/// of `deferred_scene.glsl`). The compute shaders have workgroups of 8×8 and the push constants
/// `{ uint width; uint height; uint frame; uint param; }` (the size of the image or array they
/// write, the frame number, and a per-shader parameter); the raster shaders take the same block
/// as `{ width, height, frame, view }`.
pub mod deferred {
    /// Vertex shader of every mesh draw: vertex `location` 0 position and 1 normal (`vec3`s),
    /// the instances in storage buffer `set 0, binding 0` (indexed by `gl_InstanceIndex`);
    /// `view` 0 is the camera, 1 the sun's shadow map.
    pub const MESH_VERT: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/deferred_mesh.vert.spv"));
    /// Writes the G-buffer: albedo and roughness (`location` 0, rgba8), normal and emissive
    /// (1, rgba16f).
    pub const GBUFFER_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/deferred_gbuffer.frag.spv"));
    /// Lit glass, premultiplied (`location` 0), for blending ONE, ONE_MINUS_SRC_ALPHA.
    pub const TRANSPARENT_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/deferred_transparent.frag.spv"));
    /// The UI overlay's rectangles: `vkCmdDraw(48)`, no vertex input.
    pub const UI_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/deferred_ui.vert.spv"));
    /// The UI overlay's colours, for alpha blending.
    pub const UI_FRAG: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/deferred_ui.frag.spv"));
    /// Reads `width` instances (storage buffer 0); writes one `VkDrawIndexedIndirectCommand`
    /// each (storage buffer 1), with no instance where the camera's frustum culls it. `param`:
    /// the aspect ratio's `f32` bits.
    pub const CULL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/deferred_cull.comp.spv"));
    /// Samples the depth buffer (binding 0); writes the tiles' light lists (storage buffer 1).
    /// One invocation per 16×16 tile.
    pub const LIGHT_CULL: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/deferred_light_cull.comp.spv"));
    /// Samples the depth buffer (binding 0) and normals (1); writes r32f ambient occlusion (2).
    pub const SSAO: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/deferred_ssao.comp.spv"));
    /// Samples r32f (binding 0); writes its 5×5 box blur (1).
    pub const BLUR: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/deferred_blur.comp.spv"));
    /// Samples depth, albedo, normal, the sun's shadow map and SSAO (bindings 0-4), reads the
    /// light tiles (storage buffer 5); writes rgba16f HDR (6).
    pub const LIGHTING: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/deferred_lighting.comp.spv"));
    /// Samples (linearly) the level above (binding 0); writes rgba16f at half its size (1),
    /// keeping only what exceeds 1 with `param` = 1.
    pub const BLOOM_DOWN: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/deferred_bloom_down.comp.spv"));
    /// Samples (linearly) the level below (binding 0) and the downsampled level of this size
    /// (1); writes their sum (2).
    pub const BLOOM_UP: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/deferred_bloom_up.comp.spv"));
    /// Samples HDR (binding 0), the bloom (1, linearly) and the transparency layer (2); writes
    /// the tone-mapped rgba8 image (3).
    pub const TONEMAP: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/deferred_tonemap.comp.spv"));
}

/// The raster matrix's shaders (`tests/raster_matrix.rs`, `matrix_*`): 8×8 targets, one point
/// or invocation per pixel, data of 64 words. Each file says what it does; push constants
/// `{ uint mode; uint depth; uint pad0; uint pad1; }` where used (`matrix_points.glsl`).
pub mod matrix {
    /// `matrix_copy.comp`.
    pub const COPY_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/matrix_copy.comp.spv"));
    /// `matrix_cs_dispatch.comp`.
    pub const CS_DISPATCH_COMP: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_cs_dispatch.comp.spv"));
    /// `matrix_cs_sampled_read.comp`.
    pub const CS_SAMPLED_READ_COMP: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_cs_sampled_read.comp.spv"));
    /// `matrix_cs_storage_read.comp`.
    pub const CS_STORAGE_READ_COMP: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_cs_storage_read.comp.spv"));
    /// `matrix_cs_write_image.comp`.
    pub const CS_WRITE_IMAGE_COMP: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_cs_write_image.comp.spv"));
    /// `matrix_depth_count.frag`.
    pub const DEPTH_COUNT_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_depth_count.frag.spv"));
    /// `matrix_depth_count.vert`.
    pub const DEPTH_COUNT_VERT: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_depth_count.vert.spv"));
    /// `matrix_fixed.vert`.
    pub const FIXED_VERT: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_fixed.vert.spv"));
    /// `matrix_fixed_place.vert`: `matrix_fixed.vert`'s points without their value, for
    /// fragment shaders that read no input.
    pub const FIXED_PLACE_VERT: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_fixed_place.vert.spv"));
    /// `matrix_flat.frag`.
    pub const FLAT_FRAG: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/matrix_flat.frag.spv"));
    /// `matrix_fs_sampled.frag`.
    pub const FS_SAMPLED_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_fs_sampled.frag.spv"));
    /// `matrix_fs_ssbo.frag`.
    pub const FS_SSBO_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_fs_ssbo.frag.spv"));
    /// `matrix_fs_storage.frag`.
    pub const FS_STORAGE_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_fs_storage.frag.spv"));
    /// `matrix_fs_ubo.frag`.
    pub const FS_UBO_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_fs_ubo.frag.spv"));
    /// `matrix_vb.vert`.
    pub const VB_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/matrix_vb.vert.spv"));
    /// `matrix_vs_sampled.vert`.
    pub const VS_SAMPLED_VERT: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_vs_sampled.vert.spv"));
    /// `matrix_vs_ssbo.vert`.
    pub const VS_SSBO_VERT: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_vs_ssbo.vert.spv"));
    /// `matrix_vs_storage.vert`.
    pub const VS_STORAGE_VERT: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_vs_storage.vert.spv"));
    /// `matrix_vs_ubo.vert`.
    pub const VS_UBO_VERT: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_vs_ubo.vert.spv"));
    /// `matrix_cs_ds_read.comp`.
    pub const CS_DS_READ_COMP: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_cs_ds_read.comp.spv"));
    /// `matrix_cs_stencil.comp`.
    pub const CS_STENCIL_COMP: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_cs_stencil.comp.spv"));
    /// `matrix_fs_stencil.frag`.
    pub const FS_STENCIL_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_fs_stencil.frag.spv"));
    /// `matrix_stencil_bits.frag`.
    pub const STENCIL_BITS_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_stencil_bits.frag.spv"));
    /// `matrix_stencil_write.frag`.
    pub const STENCIL_WRITE_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_stencil_write.frag.spv"));
    /// `matrix_write_color.frag`.
    pub const WRITE_COLOR_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_write_color.frag.spv"));
    /// `matrix_write_depth.frag`.
    pub const WRITE_DEPTH_FRAG: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/matrix_write_depth.frag.spv"));
    /// `matrix_write_fs_storage.frag`.
    pub const WRITE_FS_STORAGE_FRAG: &[u8] = include_bytes!(concat!(
        env!("OUT_DIR"),
        "/matrix_write_fs_storage.frag.spv"
    ));
    /// `matrix_write_vs_storage.vert`.
    pub const WRITE_VS_STORAGE_VERT: &[u8] = include_bytes!(concat!(
        env!("OUT_DIR"),
        "/matrix_write_vs_storage.vert.spv"
    ));
}
