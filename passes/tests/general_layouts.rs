//! The stock transfer passes under `LayoutPolicy::General` (the policy for
//! `VK_KHR_unified_image_layouts`): the same frame as under `LayoutPolicy::Optimal`, bit for
//! bit, with every image barrier left in `GENERAL`; and the canary that the layer sees a pass
//! that records another layout than the graph planned.

mod common;

use common::*;
use std::sync::Arc;
use vk_baton::access::LayoutPolicy;
use vk_baton::ash::vk::{self, Handle};
use vk_baton::{Access, ImageDesc, ImageRange, StImage};
use vk_baton_context::Context;
use vk_baton_passes::{
    ClearColor, ClearDepthStencil, CopyImage, DownloadImage, FormatSupport, GenerateMipmaps,
    ImageBlit, UploadImage,
};

const RGBA: vk::Format = vk::Format::R8G8B8A8_UNORM;
const SIDE: u32 = 16;
const LEVEL0: usize = (SIDE * SIDE * 4) as usize;
const CLEAR: [u8; 4] = [9, 8, 7, 6];
const DEPTH: f32 = 0.25;

/// What the upload writes into the three-level image: random level 0, garbage levels 1 and
/// 2 (the mipmaps overwrite them).
fn source_bytes() -> Vec<u8> {
    let mut bytes = random_bytes(LEVEL0 + LEVEL0 / 4 + LEVEL0 / 16, 7);
    bytes[LEVEL0..].fill(0x5a);
    bytes
}

/// What one frame downloaded: every level of the mip-chained image, the copy's destination,
/// and the cleared depth image.
#[derive(Debug, PartialEq)]
struct Downloaded {
    mips: Vec<u8>,
    copied: Vec<u8>,
    depth: Vec<u8>,
}

/// One frame on the graphics queue of a graph under `policy`: upload level 0 of a
/// three-level image (levels 1 and 2 get garbage), generate its mipmaps, blit level 0 into a
/// second image, copy that image's top-left quarter into mip 1 of a third, clear the third's
/// mip 0, clear a depth image, and download the three. Returns the downloads and the plan's
/// image barrier layouts.
fn frame(
    ctx: &Context,
    policy: LayoutPolicy,
) -> (Downloaded, Vec<(vk::ImageLayout, vk::ImageLayout)>) {
    let graph = ctx.graph().unwrap();
    graph.set_layout_policy(policy);
    let support = FormatSupport::new(ctx.instance(), ctx.physical_device());
    let mipped = image(ctx, SIDE, SIDE, RGBA, 3, 1, "mipped");
    let blitted = image(ctx, SIDE, SIDE, RGBA, 1, 1, "blitted");
    let copied = image(ctx, SIDE, SIDE, RGBA, 2, 1, "copied");
    let depth_desc = ImageDesc::new_2d(8, 8, vk::Format::D32_SFLOAT, IXFER);
    let depth = ctx.image(depth_desc, "depth").unwrap();
    let source = source_bytes();
    let copied_size = UploadImage::packed_size(&copied).unwrap() as usize;
    let (dev, alloc) = (ctx.device(), ctx.allocator());
    let mut up = UploadImage::new(dev, alloc, mipped.clone(), &source).unwrap();
    let mut up_copied =
        UploadImage::new(dev, alloc, copied.clone(), &random_bytes(copied_size, 8)).unwrap();
    let mut mips = GenerateMipmaps::new(&support, mipped.clone(), vk::Filter::LINEAR).unwrap();
    let mut blit = ImageBlit::new(
        &support,
        mipped.clone(),
        blitted.clone(),
        vk::Filter::NEAREST,
    )
    .unwrap();
    let quarter = vk::ImageCopy {
        src_subresource: color_layers(0),
        dst_subresource: color_layers(1),
        extent: vk::Extent3D {
            width: SIDE / 2,
            height: SIDE / 2,
            depth: 1,
        },
        ..Default::default()
    };
    let mut copy = CopyImage::regions(blitted.clone(), copied.clone(), &[quarter]).unwrap();
    let value = vk::ClearColorValue {
        float32: CLEAR.map(|c| c as f32 / 255.0),
    };
    let mut clear = ClearColor::ranges(copied.clone(), value, &[ImageRange::mip(0, 1)]).unwrap();
    let depth_value = vk::ClearDepthStencilValue {
        depth: DEPTH,
        stencil: 0,
    };
    let mut clear_depth = ClearDepthStencil::new(depth.clone(), depth_value).unwrap();
    let downloads = [&mipped, &copied, &depth]
        .map(|i: &Arc<StImage>| DownloadImage::all_levels(dev, alloc, i.clone()).unwrap());
    let handles = downloads.each_ref().map(|d| d.handle());
    let [mut d0, mut d1, mut d2] = downloads;
    let q = ctx.graphics();
    let planned = graph
        .record()
        .insert_pass("upload", &mut up, q)
        .insert_pass("upload copied", &mut up_copied, q)
        .insert_pass("mipmaps", &mut mips, q)
        .insert_pass("blit", &mut blit, q)
        .insert_pass("copy", &mut copy, q)
        .insert_pass("clear", &mut clear, q)
        .insert_pass("clear depth", &mut clear_depth, q)
        .insert_pass("download mipped", &mut d0, q)
        .insert_pass("download copied", &mut d1, q)
        .insert_pass("download depth", &mut d2, q)
        .finish()
        .unwrap();
    let layouts = image_layouts(planned.plan());
    planned.execute().unwrap().wait().unwrap();
    let [mips, copied, depth] = handles.map(|h| h.read().unwrap());
    (
        Downloaded {
            mips,
            copied,
            depth,
        },
        layouts,
    )
}

fn color_layers(mip: u32) -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: mip,
        base_array_layer: 0,
        layer_count: 1,
    }
}

/// Under `General`, the frame downloads what it does under `Optimal`, byte for byte, and what
/// the passes must give: the uploaded level 0, generated levels, the cleared mip, the copied
/// quarter, the cleared depth. Every image barrier of its plan is `UNDEFINED` or `GENERAL`
/// to `GENERAL`, and there are still barriers: the caches need them.
#[test]
fn stock_transfer_passes_in_general_layouts_match_optimal_layouts() {
    let ctx = ctx();
    // Copies in GENERAL on purpose: old layers' performance warning is expected.
    ctx.allow_message(COPY_IN_GENERAL_LAYOUT);
    let (optimal, optimal_layouts) = frame(&ctx, LayoutPolicy::Optimal);
    let (general, general_layouts) = frame(&ctx, LayoutPolicy::General);
    assert_eq!(general, optimal);
    let source = source_bytes();
    assert_eq!(general.mips[..LEVEL0], source[..LEVEL0]);
    assert!(
        general.mips[LEVEL0..].iter().any(|&b| b != 0x5a),
        "levels 1.. generated"
    );
    let (mip0, mip1) = general.copied.split_at(LEVEL0);
    assert!(mip0.chunks(4).all(|t| t == CLEAR), "mip 0 cleared");
    for y in 0..(SIDE / 2) as usize {
        let row = &mip1[y * (SIDE / 2) as usize * 4..][..(SIDE / 2) as usize * 4];
        let src = &source[y * SIDE as usize * 4..][..row.len()];
        assert_eq!(row, src, "row {y} of the copied quarter");
    }
    assert!(general.depth.chunks(4).all(|t| t == DEPTH.to_le_bytes()));

    let transitions: Vec<_> = (general_layouts.iter())
        .filter(|l| leaves_general(**l))
        .collect();
    assert!(transitions.is_empty(), "{transitions:?}");
    let kept = (general_layouts.iter()).filter(|(old, _)| *old == vk::ImageLayout::GENERAL);
    assert!(kept.count() >= 5, "{general_layouts:?}");
    // The same frame under `Optimal` moves images between layouts: the check above can fail.
    let moved = optimal_layouts.iter().any(|l| leaves_general(*l));
    assert!(moved, "{optimal_layouts:?}");
    assert_clean(&ctx);
}

/// Images a `General` graph left in `GENERAL` are moved to the table's layouts by an
/// `Optimal` graph's next frame, and back: the policy can change between frames.
#[test]
fn images_move_between_policies_from_frame_to_frame() {
    let ctx = ctx();
    // Copies in GENERAL on purpose: old layers' performance warning is expected.
    ctx.allow_message(COPY_IN_GENERAL_LAYOUT);
    let img = image(&ctx, SIDE, SIDE, RGBA, 1, 1, "shared");
    let data = random_bytes(LEVEL0, 11);
    let (general, optimal) = (ctx.graph().unwrap(), ctx.graph().unwrap());
    general.set_layout_policy(LayoutPolicy::General);
    optimal.set_layout_policy(LayoutPolicy::Optimal);
    let mut up = UploadImage::new(ctx.device(), ctx.allocator(), img.clone(), &data).unwrap();
    let q = ctx.graphics();
    let run = |graph: &vk_baton::Graph, pass: &mut dyn vk_baton::Pass| {
        let planned = graph
            .record()
            .insert_pass("pass", pass, q)
            .finish()
            .unwrap();
        let layouts = image_layouts(planned.plan());
        planned.execute().unwrap().wait().unwrap();
        assert_eq!(img.state().layout(), layouts.last().map(|l| l.1));
        layouts
    };
    use vk::ImageLayout as L;
    let up = run(&general, &mut up);
    assert_eq!(up, [(L::UNDEFINED, L::GENERAL)]);
    // Each frame moves the image from where the last left it to its graph's layout.
    let frames = [
        (&optimal, (L::GENERAL, L::TRANSFER_SRC_OPTIMAL)),
        (&general, (L::TRANSFER_SRC_OPTIMAL, L::GENERAL)),
        (&optimal, (L::GENERAL, L::TRANSFER_SRC_OPTIMAL)),
    ];
    for (graph, moved) in frames {
        let mut down =
            DownloadImage::all_levels(ctx.device(), ctx.allocator(), img.clone()).unwrap();
        let h = down.handle();
        assert_eq!(run(graph, &mut down), [moved]);
        assert_eq!(h.read().unwrap(), data);
    }
    assert_clean(&ctx);
}

/// The canary: under `General`, a pass that records its copy with the table's
/// `TRANSFER_DST_OPTIMAL` instead of the planned layout is reported by the layer, by a
/// message that names the image. So the layer checks the layouts the passes above recorded.
#[test]
fn canary_a_pass_recording_the_tables_layout_under_general_is_reported() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    graph.set_layout_policy(LayoutPolicy::General);
    let img = image(&ctx, SIDE, SIDE, RGBA, 1, 1, "wrong layout");
    let src = buffer(&ctx, LEVEL0 as u64, "texels");
    let region = vk::BufferImageCopy {
        image_subresource: color_layers(0),
        image_extent: vk::Extent3D {
            width: SIDE,
            height: SIDE,
            depth: 1,
        },
        ..Default::default()
    };
    let (s, i) = (src.clone(), img.clone());
    graph
        .record()
        .insert_fn(
            "copy",
            ctx.graphics(),
            |d| {
                d.uses(&src, Access::COPY_READ);
                d.uses(&img, Access::COPY_WRITE).discard();
            },
            move |r| {
                assert_eq!(r.layout(Access::COPY_WRITE), vk::ImageLayout::GENERAL);
                // SAFETY: both are alive and declared; the layout is the wrong one on
                // purpose, which validation reports and lavapipe ignores.
                unsafe {
                    r.device().cmd_copy_buffer_to_image(
                        r.cmd(),
                        s.handle(),
                        i.handle(),
                        Access::COPY_WRITE.layout,
                        &[region],
                    )
                };
                Ok(())
            },
        )
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    let m = ctx.validation_messages();
    let handle = img.handle().as_raw();
    let reported = m.messages.iter().any(|x| {
        x.names(handle)
            && x.text.contains("VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL")
            && x.text.contains("VK_IMAGE_LAYOUT_GENERAL")
    });
    assert!(
        reported,
        "no layout mismatch reported on image {handle:#x}: {m}"
    );
}

/// A context asked for `unifiedImageLayouts` enables it and its graphs plan in `GENERAL`, or
/// refuses with an error that names the extension (lavapipe and the H100's driver lack it).
/// A context not asked plans in the table's layouts.
#[test]
fn a_context_with_unified_image_layouts_plans_in_general() {
    use vk_baton::access::DeviceFeatures as F;
    let plain = ctx();
    assert_eq!(
        plain.graph().unwrap().layout_policy(),
        LayoutPolicy::Optimal
    );
    drop(plain);
    let options = vk_baton_context::ContextOptions {
        validation: true,
        device_features: F::UNIFIED_IMAGE_LAYOUTS,
        ..Default::default()
    };
    match Context::with_options(options) {
        Ok(ctx) => {
            assert!(ctx.device_features().contains(F::UNIFIED_IMAGE_LAYOUTS));
            assert_eq!(ctx.graph().unwrap().layout_policy(), LayoutPolicy::General);
            assert_clean(&ctx);
        }
        Err(e) => {
            let text = e.to_string();
            assert!(text.contains("VK_KHR_unified_image_layouts"), "{text}");
        }
    }
}

/// A texture that draw code samples through a descriptor written before the frame, pinned to
/// `SHADER_READ_ONLY_OPTIMAL` with `Render::reads_image_in`: in a graph under `General` the
/// texture moves there, and the target stays in `GENERAL`.
#[test]
fn a_pinned_texture_keeps_its_layout_in_a_general_graph() {
    use vk_baton_passes::render::{ColorTarget, Render};
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    graph.set_layout_policy(LayoutPolicy::General);
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
    let target = ctx
        .image(ImageDesc::new_2d(SIDE, SIDE, RGBA, usage), "target")
        .unwrap();
    let texture = image(&ctx, SIDE, SIDE, RGBA, 1, 1, "texture");
    let area = vk::Rect2D {
        offset: vk::Offset2D::default(),
        extent: vk::Extent2D {
            width: SIDE,
            height: SIDE,
        },
    };
    let read_only = vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL;
    let targets = vec![ColorTarget::clear(target.clone(), [0.0; 4])];
    let mut draw = Render::new(ctx.device(), area, targets, None, |_| Ok(()))
        .unwrap()
        .reads_image_in(&texture, Access::FRAGMENT_SHADER_SAMPLED_READ, read_only)
        .unwrap();
    let planned = graph
        .record()
        .insert_pass("draw", &mut draw, ctx.graphics())
        .finish()
        .unwrap();
    let layouts = image_layouts(planned.plan());
    assert!(
        layouts.contains(&(vk::ImageLayout::UNDEFINED, read_only)),
        "{layouts:?}"
    );
    let general = (vk::ImageLayout::UNDEFINED, vk::ImageLayout::GENERAL);
    assert!(layouts.contains(&general), "{layouts:?}");
    planned.execute().unwrap().wait().unwrap();
    assert_eq!(texture.state().layout(), Some(read_only));
    assert_eq!(target.state().layout(), Some(vk::ImageLayout::GENERAL));
    assert_clean(&ctx);
}
