//! Depth and stencil of one D32_SFLOAT_S8_UINT image used apart: a prepass clears both and
//! writes depth over the left half; a decal pass tests depth read-only
//! (`DEPTH_READ_ONLY_OPTIMAL`) while it writes stencil (`STENCIL_ATTACHMENT_OPTIMAL`) over the
//! top half, wherever its depth test passes; then each aspect is copied to a buffer and checked
//! bit for bit, for several frames of one graph, with validation and synchronization
//! validation on.
//!
//! ```text
//! graphics:  [prepass: depth+stencil] --DEPTH: read-only test--> [decals] --both--> [download]
//!                                     --STENCIL: written-------->
//! ```

use super::common::*;
use super::pipeline::{rect, rect_indices, Options, Pipeline};
use std::sync::Arc;
use vk_baton::access::LayoutPolicy;
use vk_baton::ash::vk;
use vk_baton::plan::{Command, Plan};
use vk_baton::{Access, BufferDesc, ImageDesc, StBuffer};
use vk_baton_context::Context;
use vk_baton_passes::render::{ColorTarget, DepthTarget, Render, RenderFormats, StencilTarget};
use vk_baton_passes::{DownloadImage, UploadBuffer};

const SIDE: u32 = 32;
const DS: vk::Format = vk::Format::D32_SFLOAT_S8_UINT;
const PREPASS_DEPTH: f32 = 0.25;
const DECAL_DEPTH: f32 = 0.5;

/// The prepass's rectangle (left half, depth 0.25) and the decal's (top half, depth 0.5),
/// with their indices.
fn geometry(ctx: &Context) -> (Arc<StBuffer>, Arc<StBuffer>, Vec<UploadBuffer>) {
    let vertices: Vec<u8> = [
        rect(-1.0, -1.0, 0.0, 1.0, PREPASS_DEPTH, [1.0; 4]),
        rect(-1.0, -1.0, 1.0, 0.0, DECAL_DEPTH, [1.0; 4]),
    ]
    .concat();
    let indices: Vec<u8> = [0, 4]
        .into_iter()
        .flat_map(rect_indices)
        .flat_map(u32::to_le_bytes)
        .collect();
    use vk::BufferUsageFlags as U;
    let make = |bytes: &[u8], usage: U, name: &str| {
        let desc = BufferDesc::new(bytes.len() as u64, usage | U::TRANSFER_DST);
        let b = ctx.buffer(desc, name).unwrap();
        let up = UploadBuffer::new(ctx.device(), ctx.allocator(), b.clone(), 0, bytes).unwrap();
        (b, up)
    };
    let (v, vu) = make(&vertices, U::VERTEX_BUFFER, "vertices");
    let (i, iu) = make(&indices, U::INDEX_BUFFER, "indices");
    (v, i, vec![vu, iu])
}

/// Depth bits per pixel, then stencil bytes: depth 0.25 left of x = 16 (the prepass), 1.0
/// elsewhere (the clear; the decals write none); stencil 1 in the top right quarter, where
/// the decal is nearer than the depth buffer, 0 elsewhere (the clear, and where the prepass
/// is nearer).
fn expected() -> (Vec<u8>, Vec<u8>) {
    let mut depth = Vec::new();
    let mut stencil = Vec::new();
    for y in 0..SIDE {
        for x in 0..SIDE {
            let d = if x < SIDE / 2 { PREPASS_DEPTH } else { 1.0 };
            depth.extend_from_slice(&d.to_le_bytes());
            stencil.push(u8::from(x >= SIDE / 2 && y < SIDE / 2));
        }
    }
    (depth, stencil)
}

/// The aspects and new layouts of the image barriers of `resource` right before pass `pass`.
fn aspects_before(
    plan: &Plan,
    resource: &str,
    pass: &str,
) -> Vec<(vk::ImageAspectFlags, vk::ImageLayout)> {
    let index = plan.input.resources.iter().position(|r| r.name == resource);
    let mut last = Vec::new();
    for batch in plan.queues.iter().flat_map(|q| &q.batches) {
        for c in &batch.commands {
            match c {
                Command::Barrier(b) => {
                    last = b
                        .images
                        .iter()
                        .filter(|i| Some(i.resource) == index)
                        .map(|i| (i.aspect, i.new_layout))
                        .collect();
                }
                Command::Pass(p) if plan.input.passes[*p].name == pass => return last,
                Command::Pass(_) => last.clear(),
            }
        }
    }
    panic!("no pass `{pass}`")
}

/// One region of `aspect` of the whole image, at `offset` in the staging buffer.
fn region(aspect: vk::ImageAspectFlags, offset: u64) -> vk::BufferImageCopy {
    vk::BufferImageCopy {
        buffer_offset: offset,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: aspect,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        },
        image_offset: vk::Offset3D::default(),
        image_extent: vk::Extent3D {
            width: SIDE,
            height: SIDE,
            depth: 1,
        },
    }
}

#[test]
fn decals_test_depth_read_only_while_writing_stencil() {
    decals(LayoutPolicy::Optimal);
}

/// The same frames with both aspects in `GENERAL`: the aspects share that layout, so one
/// barrier orders both; the same depth and stencil.
#[test]
fn decals_in_general_layouts() {
    decals(LayoutPolicy::General);
}

/// Frames of a depth prepass, then decals that test depth read-only while they write
/// stencil, then a download of both aspects, under the graph's `policy`.
fn decals(policy: LayoutPolicy) {
    let ctx = ctx();
    if policy == LayoutPolicy::General {
        // Copies in GENERAL on purpose: old layers' performance warning is expected.
        ctx.allow_message(COPY_IN_GENERAL_LAYOUT);
    }
    let graph = ctx.graph().unwrap();
    graph.set_layout_policy(policy);
    use vk::ImageUsageFlags as U;
    let image = |format, usage, name| {
        ctx.image(ImageDesc::new_2d(SIDE, SIDE, format, usage), name)
            .unwrap()
    };
    let ds = image(DS, U::DEPTH_STENCIL_ATTACHMENT | U::TRANSFER_SRC, "ds");
    let color = image(vk::Format::R8G8B8A8_UNORM, U::COLOR_ATTACHMENT, "color");
    let (vertices, indices, mut uploads) = geometry(&ctx);
    let (vb, ib) = (vertices.handle(), indices.handle());

    let prepass_targets = (
        vec![ColorTarget::clear(color.clone(), [0.0; 4])],
        DepthTarget::clear(ds.clone(), 1.0),
    );
    // Depth tested, not written; stencil loaded (the prepass cleared it) and written.
    let decal_targets = (
        vec![ColorTarget::load(color.clone())],
        DepthTarget::read_only(ds.clone()).stencil(StencilTarget::load()),
    );
    let pipeline = |targets: &(Vec<ColorTarget>, DepthTarget), depth_write, stencil_replace| {
        let formats = RenderFormats::of(&targets.0, Some(&targets.1));
        let options = Options {
            depth_write: Some(depth_write),
            additive: false,
            stencil_replace,
        };
        Pipeline::new(ctx.device(), &formats, options)
    };
    let prepass_pipeline = pipeline(&prepass_targets, true, false);
    let decal_pipeline = pipeline(&decal_targets, false, true);
    let draw = |p: vk::Pipeline, first_index: u32| {
        move |r: &mut vk_baton::Recorder<'_>| {
            // SAFETY: recording inside a rendering the pipeline was made for; the buffers
            // are alive and declared by the pass.
            unsafe {
                let (d, c) = (r.device(), r.cmd());
                d.cmd_bind_pipeline(c, vk::PipelineBindPoint::GRAPHICS, p);
                d.cmd_bind_vertex_buffers(c, 0, &[vb], &[0]);
                d.cmd_bind_index_buffer(c, ib, 0, vk::IndexType::UINT32);
                d.cmd_draw_indexed(c, 6, 1, first_index, 0, 0);
            }
            Ok(())
        }
    };
    let render = |targets: (Vec<ColorTarget>, DepthTarget), p: vk::Pipeline, first| {
        Render::new(
            ctx.device(),
            super::area(),
            targets.0,
            Some(targets.1),
            draw(p, first),
        )
        .unwrap()
        .reads(&vertices, Access::VERTEX_BUFFER)
        .reads(&indices, Access::INDEX_BUFFER)
    };
    let mut prepass = render(prepass_targets, prepass_pipeline.pipeline, 0);
    let mut decals = render(decal_targets, decal_pipeline.pipeline, 6);

    let depth_bytes = (SIDE * SIDE * 4) as u64;
    let regions = [
        region(vk::ImageAspectFlags::DEPTH, 0),
        region(vk::ImageAspectFlags::STENCIL, depth_bytes),
    ];
    for frame in 0..3 {
        let mut down =
            DownloadImage::regions(ctx.device(), ctx.allocator(), ds.clone(), &regions).unwrap();
        let bytes = down.handle();
        let mut b = graph.record();
        if frame == 0 {
            for (i, up) in uploads.iter_mut().enumerate() {
                b = b.insert_pass(["vertices", "indices"][i], up, ctx.transfer());
            }
        }
        let planned = b
            .insert_pass("prepass", &mut prepass, ctx.graphics())
            .insert_pass("decals", &mut decals, ctx.graphics())
            .insert_pass("download", &mut down, ctx.graphics())
            .finish()
            .unwrap();
        // Under `Optimal`, each aspect moves to its own layout before the decals; the copy
        // takes both back.
        let plan = planned.plan();
        use vk::ImageAspectFlags as A;
        use vk::ImageLayout as L;
        let (before_decals, before_download) = match policy {
            LayoutPolicy::Optimal => (
                vec![
                    (A::DEPTH, L::DEPTH_READ_ONLY_OPTIMAL),
                    (A::STENCIL, L::STENCIL_ATTACHMENT_OPTIMAL),
                ],
                vec![
                    (A::DEPTH, L::TRANSFER_SRC_OPTIMAL),
                    (A::STENCIL, L::TRANSFER_SRC_OPTIMAL),
                ],
            ),
            // One layout for both aspects: one barrier covers them.
            LayoutPolicy::General => (
                vec![(A::DEPTH | A::STENCIL, L::GENERAL)],
                vec![(A::DEPTH | A::STENCIL, L::GENERAL)],
            ),
        };
        assert_eq!(
            aspects_before(plan, "ds", "decals"),
            before_decals,
            "{plan}"
        );
        let download = aspects_before(plan, "ds", "download");
        assert_eq!(download, before_download, "{plan}");
        planned.execute().unwrap().wait().unwrap();
        let got = bytes.read().unwrap();
        let (depth, stencil) = expected();
        let (got_depth, got_stencil) = got.split_at(depth_bytes as usize);
        let first_wrong = |got: &[u8], want: &[u8], texel: usize| {
            (0..want.len() / texel)
                .find(|&p| got[p * texel..][..texel] != want[p * texel..][..texel])
        };
        if let Some(p) = first_wrong(got_depth, &depth, 4) {
            let at = |b: &[u8]| f32::from_le_bytes(b[p * 4..p * 4 + 4].try_into().unwrap());
            panic!(
                "frame {frame}: depth at ({}, {}) is {}, expected {}",
                p as u32 % SIDE,
                p as u32 / SIDE,
                at(got_depth),
                at(&depth)
            );
        }
        if let Some(p) = first_wrong(got_stencil, &stencil, 1) {
            panic!(
                "frame {frame}: stencil at ({}, {}) is {}, expected {}",
                p as u32 % SIDE,
                p as u32 / SIDE,
                got_stencil[p],
                stencil[p]
            );
        }
    }
    drop(graph);
    assert_clean(&ctx);
}
