//! The stock [`Render`] pass draws: indexed indirect draws with a depth test into a 4×
//! multisampled target that resolves into a single-sample image, then a second rendering that
//! loads that image and blends into it. The vertex, index and indirect buffers come from the
//! transfer queue. Every pixel is checked exactly (edges lie on pixel boundaries, so each pixel
//! is covered by all of its samples or none), for several frames of one graph, with validation
//! and synchronization validation on. `render/decals.rs`: a depth test read-only while stencil
//! is written, on the two aspects of one image.

mod common;
#[path = "render/decals.rs"]
mod decals;
#[path = "render/mesh.rs"]
mod mesh;
#[path = "render/pipeline.rs"]
mod pipeline;
#[path = "render/tiles.rs"]
mod tiles;

use common::*;
use pipeline::{rect, rect_indices, Options, Pipeline};
use std::sync::Arc;
use vk_baton::access::LayoutPolicy;
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, ImageDesc, StBuffer, StImage};
use vk_baton_context::Context;
use vk_baton_passes::render::{ColorTarget, DepthTarget, Render, StencilTarget, Store};
use vk_baton_passes::{DownloadImage, UploadBuffer};

const SIDE: u32 = 32;
const FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
/// A blue that 8-bit UNORM holds exactly.
const BLUE: f32 = 64.0 / 255.0;

fn area() -> vk::Rect2D {
    vk::Rect2D {
        offset: vk::Offset2D::default(),
        extent: vk::Extent2D {
            width: SIDE,
            height: SIDE,
        },
    }
}

/// The scene's buffers: the near green rectangle (x from -0.5), the far red one (x to 0.5),
/// and the blue overlay over the top half; their indices; one indexed indirect draw of the
/// first two.
struct Geometry {
    vertices: Arc<StBuffer>,
    indices: Arc<StBuffer>,
    indirect: Arc<StBuffer>,
    uploads: Vec<UploadBuffer>,
}

fn geometry(ctx: &Context) -> Geometry {
    let vertex_bytes: Vec<u8> = [
        rect(-0.5, -1.0, 1.0, 1.0, 0.25, [0.0, 1.0, 0.0, 1.0]),
        rect(-1.0, -1.0, 0.5, 1.0, 0.5, [1.0, 0.0, 0.0, 1.0]),
        rect(-1.0, -1.0, 1.0, 0.0, 0.0, [0.0, 0.0, BLUE, 0.0]),
    ]
    .concat();
    let index_bytes: Vec<u8> = [0, 4, 8]
        .into_iter()
        .flat_map(rect_indices)
        .flat_map(u32::to_le_bytes)
        .collect();
    let draw = vk::DrawIndexedIndirectCommand {
        index_count: 12,
        instance_count: 1,
        first_index: 0,
        vertex_offset: 0,
        first_instance: 0,
    };
    let indirect_bytes: Vec<u8> = [draw.index_count, draw.instance_count, draw.first_index]
        .into_iter()
        .chain([draw.vertex_offset as u32, draw.first_instance])
        .flat_map(u32::to_le_bytes)
        .collect();
    use vk::BufferUsageFlags as U;
    let make = |bytes: &[u8], usage: U, name: &str| {
        let b = ctx
            .buffer(
                BufferDesc::new(bytes.len() as u64, usage | U::TRANSFER_DST),
                name,
            )
            .unwrap();
        let up = UploadBuffer::new(ctx.device(), ctx.allocator(), b.clone(), 0, bytes).unwrap();
        (b, up)
    };
    let (vertices, v) = make(&vertex_bytes, U::VERTEX_BUFFER, "vertices");
    let (indices, i) = make(&index_bytes, U::INDEX_BUFFER, "indices");
    let (indirect, d) = make(&indirect_bytes, U::INDIRECT_BUFFER, "indirect");
    Geometry {
        vertices,
        indices,
        indirect,
        uploads: vec![v, i, d],
    }
}

/// What every pixel must be: red left of x = 8, green from there (nearer, so it wins where
/// both are), plus 64 of blue in the top half.
fn expected() -> Vec<u8> {
    let mut out = Vec::with_capacity((SIDE * SIDE * 4) as usize);
    for y in 0..SIDE {
        for x in 0..SIDE {
            let (r, g) = if x < 8 { (255, 0) } else { (0, 255) };
            let b = if y < SIDE / 2 { 64 } else { 0 };
            out.extend_from_slice(&[r, g, b, 255]);
        }
    }
    out
}

#[test]
fn draws_with_depth_blending_resolve_and_indirect_arguments() {
    draw_frames(LayoutPolicy::Optimal);
}

/// The same frames with every target in `GENERAL` (`VK_KHR_unified_image_layouts`' policy):
/// the same pixels, and no image barrier but from `UNDEFINED` or `GENERAL` to `GENERAL`.
#[test]
fn draws_in_general_layouts() {
    draw_frames(LayoutPolicy::General);
}

/// Three frames: a scene drawn into a multisampled target with depth testing, from indexed
/// indirect arguments uploaded on the transfer queue, resolved; then an overlay blended over
/// the resolved image; checked texel by texel, under the graph's `policy`.
fn draw_frames(policy: LayoutPolicy) {
    let ctx = ctx();
    if policy == LayoutPolicy::General {
        // Copies in GENERAL on purpose: old layers' performance warning is expected.
        ctx.allow_message(COPY_IN_GENERAL_LAYOUT);
    }
    let graph = ctx.graph().unwrap();
    graph.set_layout_policy(policy);
    use vk::ImageUsageFlags as U;
    let msaa_desc = |format, usage| {
        ImageDesc::new_2d(SIDE, SIDE, format, usage).samples(vk::SampleCountFlags::TYPE_4)
    };
    let msaa = graph
        .transient_image(msaa_desc(FORMAT, U::COLOR_ATTACHMENT), "msaa color")
        .unwrap();
    let depth = graph
        .transient_image(
            msaa_desc(vk::Format::D32_SFLOAT, U::DEPTH_STENCIL_ATTACHMENT),
            "msaa depth",
        )
        .unwrap();
    let resolved = ctx
        .image(
            ImageDesc::new_2d(SIDE, SIDE, FORMAT, U::COLOR_ATTACHMENT | U::TRANSFER_SRC),
            "resolved",
        )
        .unwrap();
    let mut g = geometry(&ctx);
    let (vb, ib, args) = (g.vertices.handle(), g.indices.handle(), g.indirect.handle());

    let scene_targets = (
        vec![ColorTarget::clear(msaa, [0.0, 0.0, 0.0, 1.0])
            .resolve_into(resolved.clone())
            .store(Store::DontCare)],
        Some(DepthTarget::clear(depth, 1.0).store(Store::DontCare)),
    );
    let overlay_targets = vec![ColorTarget::load(resolved.clone()).blending()];
    let scene_pipeline = Pipeline::new(
        ctx.device(),
        &render_formats(&ctx, &scene_targets.0, scene_targets.1.as_ref()),
        Options {
            depth_write: Some(true),
            additive: false,
            stencil_replace: false,
        },
    );
    let overlay_pipeline = Pipeline::new(
        ctx.device(),
        &render_formats(&ctx, &overlay_targets, None),
        Options {
            depth_write: None,
            additive: true,
            stencil_replace: false,
        },
    );
    let (scene_p, overlay_p) = (scene_pipeline.pipeline, overlay_pipeline.pipeline);
    let bind = move |r: &vk_baton::Recorder<'_>, p: vk::Pipeline| {
        // SAFETY: recording inside a rendering the pipeline was made for; the buffers are
        // alive and declared by the pass.
        unsafe {
            let (d, c) = (r.device(), r.cmd());
            d.cmd_bind_pipeline(c, vk::PipelineBindPoint::GRAPHICS, p);
            d.cmd_bind_vertex_buffers(c, 0, &[vb], &[0]);
            d.cmd_bind_index_buffer(c, ib, 0, vk::IndexType::UINT32);
        }
    };
    let mut scene = Render::new(
        ctx.device(),
        area(),
        scene_targets.0,
        scene_targets.1,
        move |r| {
            bind(r, scene_p);
            // SAFETY: one indexed draw's arguments, written by the upload before this pass.
            unsafe {
                r.device()
                    .cmd_draw_indexed_indirect(r.cmd(), args, 0, 1, 20)
            };
            Ok(())
        },
    )
    .unwrap()
    .reads(&g.vertices, Access::VERTEX_BUFFER)
    .reads(&g.indices, Access::INDEX_BUFFER)
    .reads(&g.indirect, Access::INDIRECT_BUFFER);
    let mut overlay = Render::new(ctx.device(), area(), overlay_targets, None, move |r| {
        bind(r, overlay_p);
        // SAFETY: the overlay's six indices follow the scene's twelve.
        unsafe { r.device().cmd_draw_indexed(r.cmd(), 6, 1, 12, 0, 0) };
        Ok(())
    })
    .unwrap()
    .reads(&g.vertices, Access::VERTEX_BUFFER)
    .reads(&g.indices, Access::INDEX_BUFFER);

    for frame in 0..3 {
        let mut down =
            DownloadImage::all_levels(ctx.device(), ctx.allocator(), resolved.clone()).unwrap();
        let pixels = down.handle();
        let mut b = graph.record();
        if frame == 0 {
            for (i, up) in g.uploads.iter_mut().enumerate() {
                b = b.insert_pass(["vertices", "indices", "indirect"][i], up, ctx.transfer());
            }
        }
        let planned = b
            .insert_pass("scene", &mut scene, ctx.graphics())
            .insert_pass("overlay", &mut overlay, ctx.graphics())
            .insert_pass("download", &mut down, ctx.graphics())
            .finish()
            .unwrap();
        // The resolve writes all of `resolved` (from UNDEFINED where its layout changes: in
        // `GENERAL`, only the first time); the overlay loads it, so its barrier keeps the
        // layout. Lavapipe keeps texels through a transition from UNDEFINED, so the pixels
        // alone would not show a lost LOAD.
        let discarded: &[&str] = match policy {
            LayoutPolicy::General if frame > 0 => &[],
            _ => &["scene"],
        };
        let undefined = transitions_from_undefined(planned.plan(), "resolved");
        assert_eq!(undefined, discarded, "{}", planned.plan());
        let layouts = image_layouts(planned.plan());
        let general = layouts.iter().all(|l| !leaves_general(*l));
        assert_eq!(general, policy == LayoutPolicy::General, "{layouts:?}");
        planned.execute().unwrap().wait().unwrap();
        let got = pixels.read().unwrap();
        let want = expected();
        let wrong: Vec<usize> = (0..got.len() / 4)
            .filter(|&p| got[p * 4..p * 4 + 4] != want[p * 4..p * 4 + 4])
            .collect();
        assert!(
            wrong.is_empty(),
            "frame {frame}: {} pixels wrong, the first at ({}, {}): {:?}, expected {:?}",
            wrong.len(),
            wrong[0] as u32 % SIDE,
            wrong[0] as u32 / SIDE,
            &got[wrong[0] * 4..wrong[0] * 4 + 4],
            &want[wrong[0] * 4..wrong[0] * 4 + 4]
        );
    }
    drop(graph);
    assert_clean(&ctx);
}

/// The passes before which the plan moves `resource` from `UNDEFINED`.
fn transitions_from_undefined(plan: &vk_baton::plan::Plan, resource: &str) -> Vec<String> {
    use vk_baton::plan::Command;
    let index = plan.input.resources.iter().position(|r| r.name == resource);
    let mut out = Vec::new();
    for batch in plan.queues.iter().flat_map(|q| &q.batches) {
        let mut pending = false;
        for c in &batch.commands {
            match c {
                Command::Barrier(b) => {
                    pending |= b.images.iter().any(|i| {
                        Some(i.resource) == index && i.old_layout == vk::ImageLayout::UNDEFINED
                    })
                }
                Command::Pass(p) if pending => {
                    out.push(plan.input.passes[*p].name.clone());
                    pending = false;
                }
                Command::Pass(_) => {}
            }
        }
    }
    out
}

/// The formats a pipeline for these targets is made for, before the pass is made; the pass
/// made with them says the same.
fn render_formats(
    ctx: &Context,
    colors: &[ColorTarget],
    depth: Option<&DepthTarget>,
) -> vk_baton_passes::render::RenderFormats {
    let first = vk_baton_passes::render::RenderFormats::of(colors, depth);
    let pass = Render::new(
        ctx.device(),
        area(),
        colors.to_vec(),
        depth.cloned(),
        |_| Ok(()),
    )
    .unwrap();
    assert_eq!(pass.formats(), first);
    first
}

/// Each bad description is an error before anything is planned, naming what is wrong.
#[test]
fn bad_targets_are_refused_with_a_clear_error() {
    let ctx = ctx();
    use vk::ImageUsageFlags as U;
    let img = |format, usage, samples, name| -> Arc<StImage> {
        ctx.image(
            ImageDesc::new_2d(SIDE, SIDE, format, usage).samples(samples),
            name,
        )
        .unwrap()
    };
    let one = vk::SampleCountFlags::TYPE_1;
    let four = vk::SampleCountFlags::TYPE_4;
    let color = img(FORMAT, U::COLOR_ATTACHMENT, one, "color");
    let msaa = img(FORMAT, U::COLOR_ATTACHMENT, four, "msaa");
    let depth = img(
        vk::Format::D32_SFLOAT,
        U::DEPTH_STENCIL_ATTACHMENT,
        one,
        "depth",
    );
    let other_format = img(vk::Format::R8G8B8A8_SRGB, U::COLOR_ATTACHMENT, one, "srgb");
    let refuse =
        |colors: Vec<ColorTarget>, depth: Option<DepthTarget>, area: vk::Rect2D| match Render::new(
            ctx.device(),
            area,
            colors,
            depth,
            |_| Ok(()),
        ) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        };
    let a = area();
    let cases = [
        (refuse(vec![], None, a), "no target"),
        (
            refuse(vec![ColorTarget::clear(depth.clone(), [0.0; 4])], None, a),
            "has a depth/stencil format",
        ),
        (
            refuse(vec![], Some(DepthTarget::clear(color.clone(), 1.0)), a),
            "has a color format",
        ),
        (
            refuse(
                vec![ColorTarget::clear(color.clone(), [0.0; 4]).resolve_into(color.clone())],
                None,
                a,
            ),
            "the color target has one sample",
        ),
        (
            refuse(
                vec![ColorTarget::clear(msaa.clone(), [0.0; 4]).resolve_into(other_format)],
                None,
                a,
            ),
            "formats differ",
        ),
        (
            refuse(
                vec![ColorTarget::clear(msaa.clone(), [0.0; 4])],
                Some(DepthTarget::clear(depth.clone(), 1.0)),
                a,
            ),
            "samples",
        ),
        (
            refuse(
                vec![],
                Some(DepthTarget::read_only(depth.clone()).store(Store::Store)),
                a,
            ),
            "a read-only target loads (LOAD) and stores nothing",
        ),
        (
            refuse(
                vec![],
                Some(DepthTarget::clear(depth.clone(), 1.0).stencil(StencilTarget::clear(0))),
                a,
            ),
            "stencil ops of their own need a format with depth and stencil",
        ),
        (
            refuse(
                vec![ColorTarget::clear(color.clone(), [0.0; 4])],
                None,
                vk::Rect2D {
                    offset: vk::Offset2D { x: 16, y: 0 },
                    extent: a.extent,
                },
            ),
            "outside its 32x32 texels",
        ),
        (
            refuse(
                vec![ColorTarget::clear(color.clone(), [0.0; 4]).at(1, 0)],
                None,
                a,
            ),
            "is not one mip level of one layer",
        ),
    ];
    for (got, want) in &cases {
        assert!(got.contains(want), "`{got}` does not say `{want}`");
    }
    // Reads dynamic rendering cannot do as declared: an input attachment, a feedback loop.
    let texture = img(FORMAT, U::SAMPLED | U::INPUT_ATTACHMENT, one, "texture");
    let reading = |image: &Arc<StImage>, access| match Render::new(
        ctx.device(),
        a,
        vec![ColorTarget::load(color.clone())],
        None,
        |_| Ok(()),
    )
    .unwrap()
    .reads_image(image, access)
    {
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    };
    let input = reading(&texture, Access::FRAGMENT_SHADER_INPUT_ATTACHMENT_READ).unwrap();
    assert!(
        input.contains("VK_KHR_dynamic_rendering_local_read"),
        "{input}"
    );
    let feedback = reading(&color, Access::FRAGMENT_SHADER_SAMPLED_READ).unwrap();
    assert!(feedback.contains("a feedback loop"), "{feedback}");
    assert_eq!(
        reading(&texture, Access::FRAGMENT_SHADER_SAMPLED_READ),
        None
    );
    assert_clean(&ctx);
}
