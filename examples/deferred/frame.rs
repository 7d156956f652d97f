//! The deferred sample's frame: its transients (and the app's output image), and its passes
//! in program order. The raster passes are the stock `Render` pass around the recording
//! functions of `draw.rs`; the compute passes are [`Dispatch`]es.

use super::dispatch::{Bind, Dispatch};
use super::draw;
use super::pipelines::Samplers;
use super::pipelines::{Formats, Pipelines};
use super::scene::{Scene, DRAW_STRIDE};
use super::{Options, Passes, Step};
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::pass::Generation;
use vk_baton::{Access, BufferDesc, Graph, ImageDesc, Recorder, StBuffer, StImage};
use vk_baton_context::Context;
use vk_baton_passes::render::{ColorTarget, DepthTarget, Render, RenderFormats, Store};
use vk_baton_shaders::deferred as spv;

/// Point lights the shaders cull per tile (`POINT_LIGHTS` in `deferred_scene.glsl`).
const POINT_LIGHTS: u64 = 12;
/// Samples per pixel of the forward (transparency) pass.
const MSAA: vk::SampleCountFlags = vk::SampleCountFlags::TYPE_4;

/// The transients, and the app's output image.
pub struct Targets {
    /// The culling's `VkDrawIndexedIndirectCommand`s, one per opaque instance.
    pub draws: Arc<StBuffer>,
    /// The sun's shadow map (D32).
    pub shadow: Arc<StImage>,
    /// The G-buffer: depth (D32), albedo and roughness, normal and emissive.
    pub depth: Arc<StImage>,
    pub albedo: Arc<StImage>,
    pub normal: Arc<StImage>,
    pub ssao_raw: Arc<StImage>,
    pub ssao: Arc<StImage>,
    pub tiles: Arc<StBuffer>,
    pub hdr: Arc<StImage>,
    /// The forward pass's multisampled depth (the opaque scene again) and transparency layer,
    /// and the layer resolved.
    pub msaa_depth: Arc<StImage>,
    pub msaa_color: Arc<StImage>,
    pub transparent: Arc<StImage>,
    /// Half, quarter, eighth and sixteenth size.
    pub down: [Arc<StImage>; 4],
    /// The same sizes as `down[0..3]`.
    pub up: [Arc<StImage>; 3],
    pub output: Arc<StImage>,
}

pub fn targets(
    ctx: &Context,
    graph: &Graph,
    o: &Options,
    scene: &Scene,
) -> vk_baton::Result<Targets> {
    build_targets(
        ctx,
        o,
        scene,
        |desc, name| graph.transient_image(desc, name),
        |desc, name| graph.transient_buffer(desc, name),
        |desc, name| ctx.image(desc, name),
    )
}

/// The same targets as [`targets`], each image and buffer in memory of its own (not the
/// graph's transients): the hand-written frame's, one set per frame in flight. Their names
/// start with `prefix`.
pub fn own_targets(
    ctx: &Context,
    o: &Options,
    scene: &Scene,
    prefix: &str,
) -> vk_baton::Result<Targets> {
    build_targets(
        ctx,
        o,
        scene,
        |desc, name| ctx.image(desc, &format!("{prefix}{name}")),
        |desc, name| ctx.buffer(desc, &format!("{prefix}{name}")),
        |desc, name| ctx.image(desc, &format!("{prefix}{name}")),
    )
}

/// The targets, made by `make_image` and `make_buffer` from their descriptions and names, and
/// the output image by `make_output` (the app's image on either side, never a transient).
fn build_targets(
    ctx: &Context,
    o: &Options,
    scene: &Scene,
    make_image: impl Fn(ImageDesc, &str) -> vk_baton::Result<Arc<StImage>>,
    make_buffer: impl Fn(BufferDesc, &str) -> vk_baton::Result<Arc<StBuffer>>,
    make_output: impl Fn(ImageDesc, &str) -> vk_baton::Result<Arc<StImage>>,
) -> vk_baton::Result<Targets> {
    let (w, h) = (o.width, o.height);
    let (gfx, compute) = (ctx.graphics().family(), ctx.async_compute().family());
    // What both queues use: CONCURRENT across two families, unless --exclusive.
    let both = (gfx != compute && !o.exclusive).then_some([gfx, compute]);
    use vk::ImageUsageFlags as U;
    let image = |name: &str, format, [w, h]: [u32; 2], usage, shared: bool| {
        let mut desc = ImageDesc::new_2d(w.max(1), h.max(1), format, usage);
        if let (true, Some(f)) = (shared, both) {
            desc = desc.concurrent(&f);
        }
        make_image(desc, name)
    };
    let storage = U::STORAGE | U::SAMPLED;
    let color = U::COLOR_ATTACHMENT | U::SAMPLED;
    let depth = U::DEPTH_STENCIL_ATTACHMENT | U::SAMPLED;
    let msaa = |name: &str, format, usage| {
        make_image(ImageDesc::new_2d(w, h, format, usage).samples(MSAA), name)
    };
    use vk::Format as F;
    let buffer = |name: &str, bytes: u64, usage, shared: bool| {
        let mut desc = BufferDesc::new(bytes, usage);
        if let (true, Some(f)) = (shared, both) {
            desc = desc.concurrent(&f);
        }
        make_buffer(desc, name)
    };
    let tiles = (w.div_ceil(16) * h.div_ceil(16)) as u64 * (POINT_LIGHTS + 1) * 4;
    let draws = scene.opaque as u64 * DRAW_STRIDE as u64;
    let indirect = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::INDIRECT_BUFFER;
    let (full, s) = ([w, h], [o.shadow, o.shadow]);
    let half = |k: u32| [w >> k, h >> k];
    Ok(Targets {
        draws: buffer("draws", draws, indirect, true)?,
        shadow: image("shadow map", F::D32_SFLOAT, s, depth, true)?,
        depth: image("depth", F::D32_SFLOAT, full, depth, true)?,
        albedo: image("albedo", F::R8G8B8A8_UNORM, full, color, true)?,
        normal: image("normal", F::R16G16B16A16_SFLOAT, full, color, true)?,
        ssao_raw: image("ssao raw", F::R32_SFLOAT, full, storage, false)?,
        ssao: image("ssao", F::R32_SFLOAT, full, storage, false)?,
        tiles: buffer(
            "light tiles",
            tiles,
            vk::BufferUsageFlags::STORAGE_BUFFER,
            false,
        )?,
        hdr: image("hdr", F::R16G16B16A16_SFLOAT, full, storage, true)?,
        msaa_depth: msaa("msaa depth", F::D32_SFLOAT, U::DEPTH_STENCIL_ATTACHMENT)?,
        msaa_color: msaa("msaa color", F::R16G16B16A16_SFLOAT, U::COLOR_ATTACHMENT)?,
        transparent: image("transparent", F::R16G16B16A16_SFLOAT, full, color, false)?,
        down: [
            image(
                "bloom down 0",
                F::R16G16B16A16_SFLOAT,
                half(1),
                storage,
                false,
            )?,
            image(
                "bloom down 1",
                F::R16G16B16A16_SFLOAT,
                half(2),
                storage,
                false,
            )?,
            image(
                "bloom down 2",
                F::R16G16B16A16_SFLOAT,
                half(3),
                storage,
                false,
            )?,
            image(
                "bloom down 3",
                F::R16G16B16A16_SFLOAT,
                half(4),
                storage,
                false,
            )?,
        ],
        up: [
            image(
                "bloom up 0",
                F::R16G16B16A16_SFLOAT,
                half(1),
                storage,
                false,
            )?,
            image(
                "bloom up 1",
                F::R16G16B16A16_SFLOAT,
                half(2),
                storage,
                false,
            )?,
            image(
                "bloom up 2",
                F::R16G16B16A16_SFLOAT,
                half(3),
                storage,
                false,
            )?,
        ],
        output: make_output(
            ImageDesc::new_2d(
                w,
                h,
                F::R8G8B8A8_UNORM,
                U::STORAGE | U::COLOR_ATTACHMENT | U::TRANSFER_SRC,
            ),
            "output",
        )?,
    })
}

pub fn size(img: &StImage) -> [u32; 2] {
    let e = img.desc().extent;
    [e.width, e.height]
}

fn area(img: &StImage) -> vk::Rect2D {
    let [width, height] = size(img);
    vk::Rect2D {
        offset: vk::Offset2D::default(),
        extent: vk::Extent2D { width, height },
    }
}

/// The pipelines for a draw closure, kept alive until its execution completes.
fn pipelines(made: &Arc<Pipelines>, r: &mut Recorder<'_>) -> Arc<Pipelines> {
    r.keep_alive(made.clone());
    made.clone()
}

/// The raster passes.
struct Raster {
    shadow: Step,
    gbuffer: Step,
    forward_depth: Step,
    transparent: Step,
    ui: Step,
}

/// Declares what the mesh draws read: the scene's vertices, indices and instances.
fn mesh_reads<F: FnMut(&mut Recorder<'_>) -> vk_baton::Result<()>>(
    pass: Render<F>,
    scene: &Scene,
) -> Render<F> {
    pass.reads(&scene.vertices, Access::VERTEX_BUFFER)
        .reads(&scene.indices, Access::INDEX_BUFFER)
        .reads(&scene.instances, Access::VERTEX_SHADER_STORAGE_READ)
}

/// A raster pass as a step of the frame; with `replay`, with a replay key of its own.
fn boxed<F: FnMut(&mut Recorder<'_>) -> vk_baton::Result<()> + 'static>(
    pass: Render<F>,
    replay: bool,
) -> Step {
    let pass = match replay {
        // SAFETY: each draw closure records the same commands every time: it draws with the
        // pipelines it captured, which never change and which it keeps alive with each
        // recording, from the scene buffers it declares (alive as long as any execution that
        // declares them), with constant push constants, and with the handles the graph binds
        // (which the graph keys recordings on).
        true => pass.with_replay_key(unsafe { Generation::new().key() }),
        false => pass,
    };
    Step::Draw(Box::new(pass))
}

/// Makes the pipelines for the `Render` passes' formats (`RenderFormats::of` their targets),
/// then the passes, whose draw closures bind them.
/// `skip`: names of passes that draw nothing (they still clear or load their targets);
/// `replay`: the passes give replay keys.
fn raster(
    ctx: &Context,
    t: &Targets,
    scene: &Arc<Scene>,
    skip: &[String],
    replay: bool,
) -> vk_baton::Result<(Raster, Arc<Pipelines>)> {
    let dev = ctx.device();
    let on = |name: &str| !skip.iter().any(|s| s == name);
    // Each pass's targets, and the pipelines for their formats, before the passes.
    let shadow_depth = Some(DepthTarget::clear(t.shadow.clone(), 1.0));
    let gbuffer_colors = vec![
        ColorTarget::clear(t.albedo.clone(), [0.0; 4]),
        ColorTarget::clear(t.normal.clone(), [0.0; 4]),
    ];
    let gbuffer_depth = Some(DepthTarget::clear(t.depth.clone(), 1.0));
    // The forward pass is multisampled: the opaque scene's depth again at 4 samples (the
    // culled draws once more), then the glass tested against it without writing it.
    let forward_depth_target = Some(DepthTarget::clear(t.msaa_depth.clone(), 1.0));
    let transparent_colors = vec![ColorTarget::clear(t.msaa_color.clone(), [0.0; 4])
        .blending()
        .resolve_into(t.transparent.clone())
        .store(Store::DontCare)];
    let transparent_depth = Some(DepthTarget::read_only(t.msaa_depth.clone()));
    let ui_colors = vec![ColorTarget::load(t.output.clone()).blending()];
    let formats = Formats {
        gbuffer: RenderFormats::of(&gbuffer_colors, gbuffer_depth.as_ref()),
        shadow: RenderFormats::of(&[], shadow_depth.as_ref()),
        forward_depth: RenderFormats::of(&[], forward_depth_target.as_ref()),
        transparent: RenderFormats::of(&transparent_colors, transparent_depth.as_ref()),
        ui: RenderFormats::of(&ui_colors, None),
    };
    let made = Pipelines::new(dev, &formats, scene)?;
    let multi_draw = ctx.features().multi_draw_indirect == vk::TRUE;
    let err = |e: vk_baton_passes::Error| vk_baton::Error::InvalidInput(e.to_string());
    let (sh, sc, draw_on) = (made.clone(), scene.clone(), on("shadow map"));
    let shadow_size = size(&t.shadow);
    let shadow = Render::new(dev, area(&t.shadow), vec![], shadow_depth, move |r| {
        let p = pipelines(&sh, r);
        if !draw_on {
            return Ok(());
        }
        // SAFETY: inside the rendering of the shadow map (depth only, the format the
        // pipeline was made for); the scene's buffers are declared read below.
        unsafe { draw::shadow(r.device(), r.cmd(), &p, &sc, shadow_size) };
        Ok(())
    })
    .map_err(err)?;
    let shadow = mesh_reads(shadow, scene);

    let full = size(&t.depth);
    let (sh, sc, draws) = (made.clone(), scene.clone(), t.draws.clone());
    let draw_on = on("gbuffer");
    let gbuffer = Render::new(
        dev,
        area(&t.depth),
        gbuffer_colors,
        gbuffer_depth,
        move |r| {
            let p = pipelines(&sh, r);
            let d = draws.handle();
            if !draw_on {
                return Ok(());
            }
            // SAFETY: inside the G-buffer's rendering; `draws` is declared an indirect buffer
            // (the culling's writes are visible), the scene's buffers are declared read.
            unsafe { draw::culled(r.device(), r.cmd(), &p, &sc, p.gbuffer, d, full, multi_draw) };
            Ok(())
        },
    )
    .map_err(err)?
    .reads(&t.draws, Access::INDIRECT_BUFFER);
    let gbuffer = mesh_reads(gbuffer, scene);

    let (sh, sc, draws) = (made.clone(), scene.clone(), t.draws.clone());
    let draw_on = on("forward depth");
    let forward_depth = Render::new(
        dev,
        area(&t.msaa_depth),
        vec![],
        forward_depth_target,
        move |r| {
            let p = pipelines(&sh, r);
            let (d, pipe) = (draws.handle(), p.forward_depth);
            if !draw_on {
                return Ok(());
            }
            // SAFETY: as the G-buffer's, into the multisampled depth.
            unsafe { draw::culled(r.device(), r.cmd(), &p, &sc, pipe, d, full, multi_draw) };
            Ok(())
        },
    )
    .map_err(err)?
    .reads(&t.draws, Access::INDIRECT_BUFFER);
    let forward_depth = mesh_reads(forward_depth, scene);

    let (sh, sc, draw_on) = (made.clone(), scene.clone(), on("transparent"));
    let transparent = Render::new(
        dev,
        area(&t.msaa_color),
        transparent_colors,
        transparent_depth,
        move |r| {
            let p = pipelines(&sh, r);
            if !draw_on {
                return Ok(());
            }
            // SAFETY: inside the forward rendering (multisampled layer, read-only depth).
            unsafe { draw::transparent(r.device(), r.cmd(), &p, &sc, full) };
            Ok(())
        },
    )
    .map_err(err)?;
    let transparent = mesh_reads(transparent, scene);

    let (sh, draw_on) = (made.clone(), on("ui"));
    let ui = Render::new(dev, area(&t.output), ui_colors, None, move |r| {
        let p = pipelines(&sh, r);
        if !draw_on {
            return Ok(());
        }
        // SAFETY: inside the rendering of the output, which the UI pipeline is made for.
        unsafe { draw::ui(r.device(), r.cmd(), &p, full) };
        Ok(())
    })
    .map_err(err)?;

    let raster = Raster {
        shadow: boxed(shadow, replay),
        gbuffer: boxed(gbuffer, replay),
        forward_depth: boxed(forward_depth, replay),
        transparent: boxed(transparent, replay),
        ui: boxed(ui, replay),
    };
    Ok((raster, made))
}

/// The frame's compute passes, in program order: `cull`, `ssao`, `ssao blur`,
/// `light culling`, `lighting`, `bloom down 0..=3`, `bloom up 2..=0`, `tonemap` (the first five
/// on async compute, the rest on graphics). Each reads and writes the targets in `t`; the
/// library's frame and the hand-written one (each with targets of its own) make theirs here.
pub fn dispatches(
    ctx: &Context,
    t: &Targets,
    scene: &Scene,
    samplers: &Arc<Samplers>,
    replay: bool,
) -> vk_baton::Result<Vec<(&'static str, Dispatch)>> {
    let full = size(&t.depth);
    let pass = |spirv, bindings, size, param, per_tile| {
        let d = Dispatch::new(ctx, samplers, spirv, bindings, size, param, per_tile)?;
        Ok::<_, vk_baton::Error>(if replay { d.replayable() } else { d })
    };
    let nearest = |img: &Arc<StImage>| Bind::Sampled(img.clone(), false);
    let linear = |img: &Arc<StImage>| Bind::Sampled(img.clone(), true);
    let write = |img: &Arc<StImage>| Bind::Write(img.clone());
    let aspect = (full[0] as f32 / full[1] as f32).to_bits();
    let cull = vec![
        Bind::ReadBuffer(scene.instances.clone()),
        Bind::WriteBuffer(t.draws.clone()),
    ];
    let mut p = vec![
        (
            "cull",
            pass(spv::CULL, cull, [scene.opaque, 1], aspect, false)?,
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
        ),
        (
            "light culling",
            pass(
                spv::LIGHT_CULL,
                vec![
                    nearest(&t.depth),
                    Bind::WriteBuffer(t.tiles.clone()),
                    Bind::FrameNumber,
                ],
                full,
                0,
                true,
            )?,
        ),
        (
            "lighting",
            pass(
                spv::LIGHTING,
                vec![
                    nearest(&t.depth),
                    nearest(&t.albedo),
                    nearest(&t.normal),
                    nearest(&t.shadow),
                    nearest(&t.ssao),
                    Bind::ReadBuffer(t.tiles.clone()),
                    write(&t.hdr),
                    Bind::FrameNumber,
                ],
                full,
                0,
                false,
            )?,
        ),
    ];
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
        p.push((DOWN[i], pass(spv::BLOOM_DOWN, b, size(to), bright, false)?));
        from = to;
    }
    const UP: [&str; 3] = ["bloom up 0", "bloom up 1", "bloom up 2"];
    for i in (0..3).rev() {
        let to = &t.up[i];
        let b = vec![linear(from), nearest(&t.down[i]), write(to)];
        p.push((UP[i], pass(spv::BLOOM_UP, b, size(to), 0, false)?));
        from = to;
    }
    let tonemap = vec![
        nearest(&t.hdr),
        linear(&t.up[0]),
        nearest(&t.transparent),
        write(&t.output),
    ];
    p.push(("tonemap", pass(spv::TONEMAP, tonemap, full, 0, false)?));
    Ok(p)
}

/// The compute passes that run on the async compute queue (the others run on graphics).
pub const ON_COMPUTE: [&str; 5] = ["cull", "ssao", "ssao blur", "light culling", "lighting"];

/// The frame's passes, in program order, and the pipelines their draws use. The culling, SSAO,
/// light culling and lighting run on the async compute queue; the forward layer, the G-buffer
/// and the shadow map on graphics.
///
/// The order keeps what is alive at once small where the two queues overlap (and every
/// transient's memory can be shared): the multisampled forward targets come and go before the
/// G-buffer, and the shadow map is drawn while SSAO and the light culling run.
/// The raster passes named in `skip` draw nothing (see `Options::skip`). With `replay`, every
/// pass gives a replay key (the compute passes pick their sets by the objects bound).
pub fn passes(
    ctx: &Context,
    t: &Targets,
    scene: &Arc<Scene>,
    samplers: &Arc<Samplers>,
    skip: &[String],
    replay: bool,
) -> vk_baton::Result<(Passes, Arc<Pipelines>)> {
    let (gfx, compute) = (ctx.graphics().clone(), ctx.async_compute().clone());
    let (
        Raster {
            shadow,
            gbuffer,
            forward_depth,
            transparent,
            ui,
        },
        pipelines,
    ) = raster(ctx, t, scene, skip, replay)?;
    let mut raster = [
        // The forward layer first: it needs only the culled draws, and its multisampled
        // targets are dead before the G-buffer, so they share memory with what follows.
        ("forward depth", Some(forward_depth)),
        ("transparent", Some(transparent)),
        ("gbuffer", Some(gbuffer)),
        // Beside SSAO and the light culling on async compute.
        ("shadow map", Some(shadow)),
        ("ui", Some(ui)),
    ];
    let mut take = |i: usize, p: &mut Passes| {
        let (name, step) = &mut raster[i];
        p.push((*name, step.take().expect("taken once"), gfx.clone()));
    };
    let mut p: Passes = Vec::new();
    for (name, d) in dispatches(ctx, t, scene, samplers, replay)? {
        if name == "lighting" {
            take(3, &mut p);
        }
        let queue = if ON_COMPUTE.contains(&name) {
            &compute
        } else {
            &gfx
        };
        p.push((name, Step::Compute(d), queue.clone()));
        if name == "cull" {
            (0..3).for_each(|i| take(i, &mut p));
        }
    }
    take(4, &mut p);
    Ok((p, pipelines))
}
