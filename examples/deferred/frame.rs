//! The deferred sample's frame: its transients (and the app's output image), and its passes
//! in program order.

use super::dispatch::{Bind, Dispatch, Samplers};
use super::{Options, Passes};
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, Context, Graph, ImageDesc, StBuffer, StImage};
use vk_baton_shaders::deferred as spv;

/// Point lights the shaders cull per tile (`POINT_LIGHTS` in `deferred_scene.glsl`).
const POINT_LIGHTS: u64 = 12;

/// The transients, and the app's output image.
pub struct Targets {
    pub depth: Arc<StImage>,
    pub albedo: Arc<StImage>,
    pub normal: Arc<StImage>,
    pub material: Arc<StImage>,
    pub ssao_raw: Arc<StImage>,
    pub ssao: Arc<StImage>,
    pub tiles: Arc<StBuffer>,
    /// Per directional light: its shadow map, and the screen-space mask resolved from it.
    pub shadow: [Arc<StImage>; 2],
    pub mask: [Arc<StImage>; 2],
    pub hdr: Arc<StImage>,
    /// Half, quarter, eighth and sixteenth size.
    pub down: [Arc<StImage>; 4],
    /// The same sizes as `down[0..3]`.
    pub up: [Arc<StImage>; 3],
    /// Tone-mapped, before the sharpen.
    pub ldr: Arc<StImage>,
    pub output: Arc<StImage>,
}

pub fn targets(ctx: &Context, graph: &Graph, o: &Options) -> vk_baton::Result<Targets> {
    let (w, h) = (o.width, o.height);
    let (gfx, compute) = (ctx.graphics().family(), ctx.async_compute().family());
    // What both queues read: CONCURRENT across two families, unless --exclusive.
    let both = (gfx != compute && !o.exclusive).then_some([gfx, compute]);
    let usage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let image = |name: &str, format, w: u32, h: u32, shared: bool| {
        let mut desc = ImageDesc::new_2d(w.max(1), h.max(1), format, usage);
        if let (true, Some(f)) = (shared, both) {
            desc = desc.concurrent(&f);
        }
        graph.transient_image(desc, name)
    };
    use vk::Format as F;
    let tiles = (w.div_ceil(16) * h.div_ceil(16)) as u64 * (POINT_LIGHTS + 1) * 4;
    let mut tiles_desc = BufferDesc::new(tiles, vk::BufferUsageFlags::STORAGE_BUFFER);
    if let Some(f) = both {
        tiles_desc = tiles_desc.concurrent(&f);
    }
    let s = o.shadow;
    Ok(Targets {
        depth: image("depth", F::R32_SFLOAT, w, h, true)?,
        albedo: image("albedo", F::R8G8B8A8_UNORM, w, h, false)?,
        normal: image("normal", F::R16G16B16A16_SFLOAT, w, h, true)?,
        material: image("material", F::R8G8B8A8_UNORM, w, h, false)?,
        ssao_raw: image("ssao raw", F::R32_SFLOAT, w, h, false)?,
        ssao: image("ssao", F::R32_SFLOAT, w, h, true)?,
        tiles: graph.transient_buffer(tiles_desc, "light tiles")?,
        shadow: [
            image("shadow map sun", F::R32_SFLOAT, s, s, false)?,
            image("shadow map rim", F::R32_SFLOAT, s, s, false)?,
        ],
        mask: [
            image("shadow mask sun", F::R32_SFLOAT, w, h, false)?,
            image("shadow mask rim", F::R32_SFLOAT, w, h, false)?,
        ],
        hdr: image("hdr", F::R16G16B16A16_SFLOAT, w, h, false)?,
        down: [
            image("bloom down 0", F::R16G16B16A16_SFLOAT, w / 2, h / 2, false)?,
            image("bloom down 1", F::R16G16B16A16_SFLOAT, w / 4, h / 4, false)?,
            image("bloom down 2", F::R16G16B16A16_SFLOAT, w / 8, h / 8, false)?,
            image(
                "bloom down 3",
                F::R16G16B16A16_SFLOAT,
                w / 16,
                h / 16,
                false,
            )?,
        ],
        up: [
            image("bloom up 0", F::R16G16B16A16_SFLOAT, w / 2, h / 2, false)?,
            image("bloom up 1", F::R16G16B16A16_SFLOAT, w / 4, h / 4, false)?,
            image("bloom up 2", F::R16G16B16A16_SFLOAT, w / 8, h / 8, false)?,
        ],
        ldr: image("ldr", F::R8G8B8A8_UNORM, w, h, false)?,
        output: ctx.image(
            ImageDesc::new_2d(
                w,
                h,
                F::R8G8B8A8_UNORM,
                vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC,
            ),
            "output",
        )?,
    })
}

pub fn size(img: &StImage) -> [u32; 2] {
    let e = img.desc().extent;
    [e.width, e.height]
}

/// The frame's passes, in program order. SSAO and light culling run on the async compute
/// queue, beside the shadow maps on graphics.
pub fn passes(ctx: &Context, t: &Targets, samplers: &Arc<Samplers>) -> vk_baton::Result<Passes> {
    let dev = ctx.device();
    let (gfx, compute) = (ctx.graphics().clone(), ctx.async_compute().clone());
    let full = size(&t.depth);
    let pass = |spirv, bindings, size, param, per_tile| {
        Dispatch::new(dev, samplers, spirv, bindings, size, param, per_tile)
    };
    let nearest = |img: &Arc<StImage>| Bind::Sampled(img.clone(), false);
    let linear = |img: &Arc<StImage>| Bind::Sampled(img.clone(), true);
    let write = |img: &Arc<StImage>| Bind::Write(img.clone());
    let mut p: Passes = vec![
        (
            "gbuffer",
            pass(
                spv::GBUFFER,
                vec![
                    write(&t.depth),
                    write(&t.albedo),
                    write(&t.normal),
                    write(&t.material),
                ],
                full,
                0,
                false,
            )?,
            gfx.clone(),
        ),
        (
            "ssao",
            pass(
                spv::SSAO,
                vec![nearest(&t.depth), nearest(&t.normal), write(&t.ssao_raw)],
                full,
                0,
                false,
            )?,
            compute.clone(),
        ),
        (
            "ssao blur",
            pass(
                spv::BLUR,
                vec![nearest(&t.ssao_raw), write(&t.ssao)],
                full,
                0,
                false,
            )?,
            compute.clone(),
        ),
        (
            "light culling",
            pass(
                spv::LIGHT_CULL,
                vec![nearest(&t.depth), Bind::WriteBuffer(t.tiles.clone())],
                full,
                0,
                true,
            )?,
            compute.clone(),
        ),
    ];
    // One light at a time: the rim light's shadow map can take the sun's memory.
    let names = [
        ["shadow map sun", "shadow mask sun"],
        ["shadow map rim", "shadow mask rim"],
    ];
    for (k, [map_name, mask_name]) in names.into_iter().enumerate() {
        let (map, mask) = (&t.shadow[k], &t.mask[k]);
        let k = k as u32;
        p.push((
            map_name,
            pass(spv::SHADOW, vec![write(map)], size(map), k, false)?,
            gfx.clone(),
        ));
        let b = vec![nearest(&t.depth), nearest(map), write(mask)];
        p.push((
            mask_name,
            pass(spv::SHADOW_MASK, b, full, k, false)?,
            gfx.clone(),
        ));
    }
    p.push((
        "lighting",
        pass(
            spv::LIGHTING,
            vec![
                nearest(&t.depth),
                nearest(&t.albedo),
                nearest(&t.normal),
                nearest(&t.material),
                nearest(&t.mask[0]),
                nearest(&t.mask[1]),
                nearest(&t.ssao),
                Bind::ReadBuffer(t.tiles.clone()),
                write(&t.hdr),
            ],
            full,
            0,
            false,
        )?,
        gfx.clone(),
    ));
    const DOWN: [&str; 4] = [
        "bloom down 0",
        "bloom down 1",
        "bloom down 2",
        "bloom down 3",
    ];
    let mut from = &t.hdr;
    for (i, to) in t.down.iter().enumerate() {
        let bright = (i == 0) as u32;
        let b = vec![linear(from), write(to)];
        p.push((
            DOWN[i],
            pass(spv::BLOOM_DOWN, b, size(to), bright, false)?,
            gfx.clone(),
        ));
        from = to;
    }
    const UP: [&str; 3] = ["bloom up 0", "bloom up 1", "bloom up 2"];
    for i in (0..3).rev() {
        let to = &t.up[i];
        let b = vec![linear(from), nearest(&t.down[i]), write(to)];
        p.push((
            UP[i],
            pass(spv::BLOOM_UP, b, size(to), 0, false)?,
            gfx.clone(),
        ));
        from = to;
    }
    p.push((
        "tonemap",
        pass(
            spv::TONEMAP,
            vec![nearest(&t.hdr), linear(&t.up[0]), write(&t.ldr)],
            full,
            0,
            false,
        )?,
        gfx.clone(),
    ));
    p.push((
        "sharpen",
        pass(
            spv::SHARPEN,
            vec![nearest(&t.ldr), write(&t.output)],
            full,
            0,
            false,
        )?,
        gfx,
    ));
    Ok(p)
}
