//! An app's own `VkRenderPass` inside a graph: attachments declared with their
//! `initialLayout` and `finalLayout`, the render pass made with the external dependencies of
//! `vk_baton::render_pass`, its results copied out by graph passes and checked bit for bit,
//! under the validation layer with synchronization validation (any message fails).

mod common;
#[path = "render_pass/pipeline.rs"]
mod pipeline;

use common::{assert_clean, ctx};
use pipeline::pipeline;
use std::sync::Arc;
use vk::ImageLayout as L;
use vk_baton::ash::{self, vk};
use vk_baton::{Access, BufferDesc, ImageDesc, StBuffer, StImage};
use vk_baton_context::Context;
use vk_baton_passes::{DownloadImage, UploadBuffer};

const SIDE: u32 = 16;
const FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
/// The triangle's colour, and the clear colours of the two render passes.
const GREEN: [f32; 4] = [0.0, 1.0, 0.0, 1.0];
const BLUE: [f32; 4] = [0.0, 0.0, 1.0, 1.0];
const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];

/// One triangle over the top-left half: its long edge is `x + y = 1/16` in clip space, which
/// no pixel centre lies on, so pixel (i, j) is covered exactly when `i + j <= 15`.
fn triangle() -> Vec<u8> {
    let far = 1.0625f32;
    [[-1.0, -1.0], [far, -1.0], [-1.0, far]]
        .iter()
        .flat_map(|p| [p[0], p[1], 0.0].into_iter().chain(GREEN))
        .flat_map(f32::to_le_bytes)
        .collect()
}

fn expected(clear: [f32; 4]) -> Vec<u8> {
    let px = |c: [f32; 4]| c.map(|x| (x * 255.0) as u8);
    (0..SIDE * SIDE)
        .flat_map(|p| {
            let (i, j) = (p % SIDE, p / SIDE);
            px(if i + j <= 15 { GREEN } else { clear })
        })
        .collect()
}

/// A render pass of one subpass with colour attachments and maybe a depth attachment, with
/// its framebuffer and pipeline; destroyed on drop (the test waits for the GPU first).
struct AppRenderPass {
    device: ash::Device,
    render_pass: vk::RenderPass,
    views: Vec<vk::ImageView>,
    framebuffer: vk::Framebuffer,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    /// Attachments, for their clear values.
    colors: usize,
    depth: bool,
}

/// One attachment: the image, its description, and its access in the subpass (whose layout
/// the subpass uses it in).
struct Attachment<'a> {
    image: &'a StImage,
    desc: vk::AttachmentDescription2<'static>,
    access: Access,
}

/// A colour attachment of the test's format: load op CLEAR, store op STORE.
fn color_attachment(image: &StImage, initial: L, last: L) -> Attachment<'_> {
    Attachment {
        image,
        desc: vk::AttachmentDescription2::default()
            .format(image.desc().format)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(initial)
            .final_layout(last),
        access: Access::COLOR_ATTACHMENT_WRITE,
    }
}

impl AppRenderPass {
    fn new(ctx: &Context, image: &StImage, initial: L, last: L) -> AppRenderPass {
        Self::with(ctx, &[color_attachment(image, initial, last)])
    }

    /// Colour attachments first, then at most one depth attachment (tested, not written).
    fn with(ctx: &Context, attachments: &[Attachment<'_>]) -> AppRenderPass {
        let device = ctx.device().clone();
        let aspect = |a: &Attachment<'_>| a.image.desc().aspect();
        let reference = |(i, a): (usize, &Attachment<'_>)| {
            vk::AttachmentReference2::default()
                .attachment(i as u32)
                .layout(a.access.layout)
                .aspect_mask(aspect(a))
        };
        let is_color = |a: &&Attachment<'_>| aspect(a) == vk::ImageAspectFlags::COLOR;
        let colors: Vec<_> = attachments
            .iter()
            .filter(is_color)
            .enumerate()
            .map(reference)
            .collect();
        let depth: Vec<_> = attachments
            .iter()
            .enumerate()
            .filter(|(_, a)| aspect(a) != vk::ImageAspectFlags::COLOR)
            .map(reference)
            .collect();
        let mut subpass = vk::SubpassDescription2::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&colors);
        if let Some(d) = depth.first() {
            subpass = subpass.depth_stencil_attachment(d);
        }
        // What chains the render pass's own transitions with the graph's barriers.
        let accesses: Vec<Access> = attachments.iter().map(|a| a.access).collect();
        let deps = vk_baton::render_pass::external_dependencies(&accesses);
        let descs: Vec<_> = attachments.iter().map(|a| a.desc).collect();
        let subpasses = [subpass];
        let info = vk::RenderPassCreateInfo2::default()
            .attachments(&descs)
            .subpasses(&subpasses)
            .dependencies(&deps);
        // SAFETY: a complete create info on a live device (render pass 2 is core in 1.2).
        let render_pass = unsafe { device.create_render_pass2(&info, None) }.unwrap();
        let views: Vec<vk::ImageView> = attachments
            .iter()
            .map(|a| {
                let info = vk::ImageViewCreateInfo::default()
                    .image(a.image.handle())
                    .view_type(vk::ImageViewType::TYPE_2D)
                    .format(a.image.desc().format)
                    .subresource_range(a.image.full_range());
                // SAFETY: the image is alive and has the attachment's usage.
                unsafe { device.create_image_view(&info, None) }.unwrap()
            })
            .collect();
        let fb_info = vk::FramebufferCreateInfo::default()
            .render_pass(render_pass)
            .attachments(&views)
            .width(SIDE)
            .height(SIDE)
            .layers(1);
        // SAFETY: the views match the render pass's attachments.
        let framebuffer = unsafe { device.create_framebuffer(&fb_info, None) }.unwrap();
        // SAFETY: an empty layout on a live device.
        let layout = unsafe {
            device.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default(), None)
        }
        .unwrap();
        let pipeline = pipeline(&device, render_pass, layout, !depth.is_empty());
        AppRenderPass {
            device,
            render_pass,
            views,
            framebuffer,
            layout,
            pipeline,
            colors: colors.len(),
            depth: !depth.is_empty(),
        }
    }

    /// Clears the colour attachments to `clear` and draws the `count` vertices of
    /// `vertices`.
    ///
    /// # Safety
    ///
    /// `cmd` is recording outside a render pass, on a graphics queue, and the graph has put
    /// the attachment in the render pass's initial layout and the vertices where a vertex
    /// input reads them.
    unsafe fn record(
        &self,
        cmd: vk::CommandBuffer,
        vertices: vk::Buffer,
        clear: [f32; 4],
        count: u32,
    ) {
        let d = &self.device;
        let area = vk::Rect2D::default().extent(vk::Extent2D {
            width: SIDE,
            height: SIDE,
        });
        let mut clears = vec![
            vk::ClearValue {
                color: vk::ClearColorValue { float32: clear },
            };
            self.colors
        ];
        if self.depth {
            clears.push(vk::ClearValue {
                depth_stencil: vk::ClearDepthStencilValue {
                    depth: 1.0,
                    stencil: 0,
                },
            });
        }
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(self.render_pass)
            .framebuffer(self.framebuffer)
            .render_area(area)
            .clear_values(&clears);
        let viewport = vk::Viewport {
            width: SIDE as f32,
            height: SIDE as f32,
            max_depth: 1.0,
            ..Default::default()
        };
        // SAFETY: as the caller vouches; the objects are alive.
        unsafe {
            d.cmd_begin_render_pass2(
                cmd,
                &begin,
                &vk::SubpassBeginInfo::default().contents(vk::SubpassContents::INLINE),
            );
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, self.pipeline);
            d.cmd_set_viewport(cmd, 0, &[viewport]);
            d.cmd_set_scissor(cmd, 0, &[area]);
            d.cmd_bind_vertex_buffers(cmd, 0, &[vertices], &[0]);
            d.cmd_draw(cmd, count, 1, 0, 0);
            d.cmd_end_render_pass2(cmd, &vk::SubpassEndInfo::default());
        }
    }
}

impl Drop for AppRenderPass {
    fn drop(&mut self) {
        // SAFETY: the test waited for every execution that used them.
        unsafe {
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device.destroy_framebuffer(self.framebuffer, None);
            for &v in &self.views {
                self.device.destroy_image_view(v, None);
            }
            self.device.destroy_render_pass(self.render_pass, None);
        }
    }
}

/// The barriers of `plan` that move `resource` out of one layout into another, as
/// "old -> new before `pass`".
fn transitions(plan: &vk_baton::plan::Plan) -> Vec<String> {
    use vk_baton::plan::Command;
    let mut out = vec![];
    for b in plan.queues.iter().flat_map(|q| &q.batches) {
        for (k, c) in b.commands.iter().enumerate() {
            let Command::Barrier(bar) = c else { continue };
            let next = b.commands[k + 1..].iter().find_map(|c| match c {
                Command::Pass(i) => Some(plan.input.passes[*i].name.as_str()),
                _ => None,
            });
            for i in bar.images.iter().filter(|i| i.old_layout != i.new_layout) {
                let name = &plan.input.resources[i.resource].name;
                out.push(format!(
                    "{name}: {:?} -> {:?} before `{}`",
                    i.old_layout,
                    i.new_layout,
                    next.unwrap_or("end")
                ));
            }
        }
    }
    out
}

/// Two render passes draw the target in turn, each followed by a copy out: the first takes
/// the image in GENERAL and leaves it in TRANSFER_SRC_OPTIMAL (so the copy after it needs no
/// transition), the second takes it in any layout (UNDEFINED) and leaves it in
/// SHADER_READ_ONLY_OPTIMAL (so the copy after it transitions from there). Twice, so the second
/// frame starts from the state the first left.
#[test]
fn an_apps_render_pass_with_its_own_initial_and_final_layouts() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    use vk::ImageUsageFlags as U;
    let target: Arc<StImage> = ctx
        .image(
            ImageDesc::new_2d(
                SIDE,
                SIDE,
                FORMAT,
                U::COLOR_ATTACHMENT | U::TRANSFER_SRC | U::SAMPLED,
            ),
            "target",
        )
        .unwrap();
    let bytes = triangle();
    let usage = vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
    let vertices: Arc<StBuffer> = ctx
        .buffer(BufferDesc::new(bytes.len() as u64, usage), "vertices")
        .unwrap();
    let mut upload =
        UploadBuffer::new(ctx.device(), ctx.allocator(), vertices.clone(), 0, &bytes).unwrap();
    let first = AppRenderPass::new(&ctx, &target, L::GENERAL, L::TRANSFER_SRC_OPTIMAL);
    let second = AppRenderPass::new(&ctx, &target, L::UNDEFINED, L::SHADER_READ_ONLY_OPTIMAL);
    let vb = vertices.handle();
    for frame in 0..2 {
        let down = |t: &Arc<StImage>| {
            DownloadImage::level(ctx.device(), ctx.allocator(), t.clone(), 0).unwrap()
        };
        let (mut down_a, mut down_b) = (down(&target), down(&target));
        let (a, b) = (down_a.handle(), down_b.handle());
        let mut builder = graph.record();
        if frame == 0 {
            builder = builder.insert_pass("upload", &mut upload, ctx.graphics());
        }
        let planned = builder
            .insert_fn(
                "render pass A",
                ctx.graphics(),
                |d| {
                    d.uses(&vertices, Access::VERTEX_BUFFER);
                    d.uses(&target, Access::COLOR_ATTACHMENT_WRITE)
                        .discard()
                        .initial_layout(L::GENERAL)
                        .final_layout(L::TRANSFER_SRC_OPTIMAL);
                },
                |r| {
                    // SAFETY: the graph put the target in GENERAL and the vertices in place.
                    unsafe { first.record(r.cmd(), vb, BLUE, 3) };
                    Ok(())
                },
            )
            .insert_pass("copy A", &mut down_a, ctx.graphics())
            .insert_fn(
                "render pass B",
                ctx.graphics(),
                |d| {
                    d.uses(&vertices, Access::VERTEX_BUFFER);
                    d.uses(&target, Access::COLOR_ATTACHMENT_WRITE)
                        .initial_layout(L::UNDEFINED)
                        .final_layout(L::SHADER_READ_ONLY_OPTIMAL);
                },
                |r| {
                    // SAFETY: the render pass takes the target in any layout.
                    unsafe { second.record(r.cmd(), vb, RED, 3) };
                    Ok(())
                },
            )
            .insert_pass("copy B", &mut down_b, ctx.graphics())
            .finish()
            .unwrap();
        assert_eq!(
            transitions(planned.plan()),
            [
                // Render pass A clears all of it (`discard`): from UNDEFINED, also in frame 1.
                "target: UNDEFINED -> GENERAL before `render pass A`".to_string(),
                // Not before `copy A`: render pass A left it in TRANSFER_SRC_OPTIMAL. Not
                // before `render pass B` either: it takes the target in any layout and moves it
                // itself (a barrier only orders it after `copy A`).
                "target: SHADER_READ_ONLY_OPTIMAL -> TRANSFER_SRC_OPTIMAL before `copy B`".into(),
            ],
            "{}",
            planned.plan()
        );
        planned.execute().unwrap().wait().unwrap();
        assert_eq!(
            a.read().unwrap(),
            expected(BLUE),
            "frame {frame}, render pass A"
        );
        assert_eq!(
            b.read().unwrap(),
            expected(RED),
            "frame {frame}, render pass B"
        );
        assert_eq!(target.state().layout(), Some(L::TRANSFER_SRC_OPTIMAL));
    }
    drop((first, second));
    drop(graph);
    assert_clean(&ctx);
}

/// A read-only depth attachment whose render pass leaves it in another layout than it takes
/// it in: the graph clears the depth to 0.5 (TRANSFER_DST_OPTIMAL), the render pass takes it in
/// DEPTH_STENCIL_READ_ONLY_OPTIMAL (load op LOAD, store op NONE: it only tests) and leaves it in
/// TRANSFER_SRC_OPTIMAL, and a copy reads it there with no transition of its own: the copy
/// must wait for the render pass's last transition though both only read. Of two triangles,
/// the one nearer than the cleared depth shows and the one behind it does not.
#[test]
fn a_read_only_depth_attachment_whose_render_pass_changes_its_layout() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    use vk::ImageUsageFlags as U;
    let color = ctx
        .image(
            ImageDesc::new_2d(SIDE, SIDE, FORMAT, U::COLOR_ATTACHMENT | U::TRANSFER_SRC),
            "color",
        )
        .unwrap();
    let depth_usage = U::DEPTH_STENCIL_ATTACHMENT | U::TRANSFER_DST | U::TRANSFER_SRC;
    let depth = ctx
        .image(
            ImageDesc::new_2d(SIDE, SIDE, vk::Format::D32_SFLOAT, depth_usage),
            "depth",
        )
        .unwrap();
    // The top-left triangle in front (z 0.25), and one over everything behind (z 0.75).
    let vertex = |x: f32, y: f32, z: f32, c: [f32; 4]| [x, y, z].into_iter().chain(c);
    let far = 1.0625f32;
    let bytes: Vec<u8> = [(-1.0, -1.0), (far, -1.0), (-1.0, far)]
        .into_iter()
        .flat_map(|(x, y)| vertex(x, y, 0.25, GREEN))
        .chain(
            [(-1.0, -1.0), (3.0, -1.0), (-1.0, 3.0)]
                .into_iter()
                .flat_map(|(x, y)| vertex(x, y, 0.75, RED)),
        )
        .flat_map(f32::to_le_bytes)
        .collect();
    let usage = vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
    let vertices = ctx
        .buffer(BufferDesc::new(bytes.len() as u64, usage), "vertices")
        .unwrap();
    let mut upload =
        UploadBuffer::new(ctx.device(), ctx.allocator(), vertices.clone(), 0, &bytes).unwrap();
    let tested = Attachment {
        image: &depth,
        desc: vk::AttachmentDescription2::default()
            .format(vk::Format::D32_SFLOAT)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::LOAD)
            .store_op(vk::AttachmentStoreOp::NONE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::NONE)
            .initial_layout(L::DEPTH_STENCIL_READ_ONLY_OPTIMAL)
            .final_layout(L::TRANSFER_SRC_OPTIMAL),
        access: Access::DEPTH_ATTACHMENT_READ,
    };
    let drawn = color_attachment(&color, L::UNDEFINED, L::TRANSFER_SRC_OPTIMAL);
    let rp = AppRenderPass::with(&ctx, &[drawn, tested]);
    let mut down_color =
        DownloadImage::level(ctx.device(), ctx.allocator(), color.clone(), 0).unwrap();
    let mut down_depth =
        DownloadImage::level(ctx.device(), ctx.allocator(), depth.clone(), 0).unwrap();
    let (got_color, got_depth) = (down_color.handle(), down_depth.handle());
    let (vb, depth_handle) = (vertices.handle(), depth.handle());
    let planned = graph
        .record()
        .insert_pass("upload", &mut upload, ctx.graphics())
        .insert_fn(
            "clear depth",
            ctx.graphics(),
            |d| {
                d.uses(&depth, Access::CLEAR_DEPTH_STENCIL_WRITE).discard();
            },
            |r| {
                let value = vk::ClearDepthStencilValue {
                    depth: 0.5,
                    stencil: 0,
                };
                let range = [depth.full_range()];
                // SAFETY: the depth image is in TRANSFER_DST_OPTIMAL, as declared.
                unsafe {
                    r.device().cmd_clear_depth_stencil_image(
                        r.cmd(),
                        depth_handle,
                        L::TRANSFER_DST_OPTIMAL,
                        &value,
                        &range,
                    )
                };
                Ok(())
            },
        )
        .insert_fn(
            "depth tested",
            ctx.graphics(),
            |d| {
                d.uses(&vertices, Access::VERTEX_BUFFER);
                d.uses(&color, Access::COLOR_ATTACHMENT_WRITE)
                    .initial_layout(L::UNDEFINED)
                    .final_layout(L::TRANSFER_SRC_OPTIMAL);
                d.uses(&depth, Access::DEPTH_ATTACHMENT_READ)
                    .initial_layout(L::DEPTH_STENCIL_READ_ONLY_OPTIMAL)
                    .final_layout(L::TRANSFER_SRC_OPTIMAL);
            },
            |r| {
                // SAFETY: the graph put both attachments where the render pass takes them.
                unsafe { rp.record(r.cmd(), vb, BLUE, 6) };
                Ok(())
            },
        )
        .insert_pass("copy color", &mut down_color, ctx.graphics())
        .insert_pass("copy depth", &mut down_depth, ctx.graphics())
        .finish()
        .unwrap();
    assert_eq!(
        transitions(planned.plan()),
        [
            "depth: UNDEFINED -> TRANSFER_DST_OPTIMAL before `clear depth`",
            // None of `color`: its render pass takes it from UNDEFINED and moves it itself.
            "depth: TRANSFER_DST_OPTIMAL -> DEPTH_STENCIL_READ_ONLY_OPTIMAL before `depth tested`",
        ],
        "{}",
        planned.plan()
    );
    planned.execute().unwrap().wait().unwrap();
    assert_eq!(got_color.read().unwrap(), expected(BLUE));
    let half: Vec<u8> = (0..SIDE * SIDE)
        .flat_map(|_| 0.5f32.to_le_bytes())
        .collect();
    assert_eq!(got_depth.read().unwrap(), half);
    assert_eq!(depth.state().layout(), Some(L::TRANSFER_SRC_OPTIMAL));
    drop(rp);
    drop(graph);
    assert_clean(&ctx);
}
