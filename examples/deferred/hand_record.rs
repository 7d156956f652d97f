//! What the hand-written frame (`hand.rs`) records: its barriers, written out image by image,
//! and each pass between them (the raster passes' renderings around the functions of
//! `draw.rs`, the compute passes through [`Dispatch::dispatch`]).

use super::dispatch::{Dispatch, WrittenSet};
use super::draw;
use super::frame::{size, Targets};
use super::pipelines::Pipelines;
use super::scene::Scene;
use std::sync::atomic::{AtomicU64, Ordering};
use vk_baton::ash::{self, vk};
use vk_baton::{StBuffer, StImage};

use vk::AccessFlags2 as A;
use vk::ImageLayout as L;
use vk::PipelineStageFlags2 as S;

/// Where the depth tests read and write an attachment (load op CLEAR is a write at the early
/// tests, the store at the late ones).
pub const TESTS: S =
    S::from_raw(S::EARLY_FRAGMENT_TESTS.as_raw() | S::LATE_FRAGMENT_TESTS.as_raw());
pub const CAO: S = S::COLOR_ATTACHMENT_OUTPUT;
pub const CS: S = S::COMPUTE_SHADER;
const DS_RW: A = A::from_raw(
    A::DEPTH_STENCIL_ATTACHMENT_READ.as_raw() | A::DEPTH_STENCIL_ATTACHMENT_WRITE.as_raw(),
);
const COLOR_RW: A =
    A::from_raw(A::COLOR_ATTACHMENT_READ.as_raw() | A::COLOR_ATTACHMENT_WRITE.as_raw());

/// A stage and what it accesses there: one side of a barrier.
pub type Scope = (S, A);

/// Nothing before (a first use whose old contents are not needed: the previous frame that used
/// this set of targets was waited for on the host), or a chain from a semaphore wait at `CS`
/// (the wait made the other queue's writes visible; the transition only has to come after it).
pub const NOTHING: Scope = (S::NONE, A::NONE);
pub const AFTER_WAIT: Scope = (CS, A::NONE);
pub const SAMPLED: Scope = (CS, A::SHADER_SAMPLED_READ);
pub const STORAGE_WRITE: Scope = (CS, A::SHADER_STORAGE_WRITE);
pub const COLOR_WRITE: Scope = (CAO, A::COLOR_ATTACHMENT_WRITE);
pub const DEPTH_WRITE: Scope = (TESTS, A::DEPTH_STENCIL_ATTACHMENT_WRITE);

/// One image's barrier on its own queue (no ownership transfer: the images the two queues
/// share are CONCURRENT where their families differ).
pub fn image(
    img: &StImage,
    old: L,
    new: L,
    src: Scope,
    dst: Scope,
) -> vk::ImageMemoryBarrier2<'static> {
    vk::ImageMemoryBarrier2::default()
        .src_stage_mask(src.0)
        .src_access_mask(src.1)
        .dst_stage_mask(dst.0)
        .dst_access_mask(dst.1)
        .old_layout(old)
        .new_layout(new)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(img.handle())
        .subresource_range(img.full_range())
}

/// A whole buffer's barrier on its own queue.
pub fn buffer(buf: &StBuffer, src: Scope, dst: Scope) -> vk::BufferMemoryBarrier2<'static> {
    vk::BufferMemoryBarrier2::default()
        .src_stage_mask(src.0)
        .src_access_mask(src.1)
        .dst_stage_mask(dst.0)
        .dst_access_mask(dst.1)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .buffer(buf.handle())
        .size(vk::WHOLE_SIZE)
}

/// `vkCmdPipelineBarrier2` calls recorded so far (the comparison prints them per frame).
pub static BARRIER_CALLS: AtomicU64 = AtomicU64::new(0);

/// One `vkCmdPipelineBarrier2` with every barrier of a pass boundary.
///
/// # Safety
///
/// `cmd` is recording outside a rendering; every resource named is alive.
pub unsafe fn barrier(
    dev: &ash::Device,
    cmd: vk::CommandBuffer,
    images: &[vk::ImageMemoryBarrier2<'_>],
    buffers: &[vk::BufferMemoryBarrier2<'_>],
) {
    let info = vk::DependencyInfo::default()
        .image_memory_barriers(images)
        .buffer_memory_barriers(buffers);
    // SAFETY: the caller's promise.
    unsafe { dev.cmd_pipeline_barrier2(cmd, &info) };
    BARRIER_CALLS.fetch_add(1, Ordering::Relaxed);
}

/// The first use of each image in a frame, from UNDEFINED (old contents never needed), in the
/// layout and at the stage of that use: `who` picks the images (their field names).
pub fn first_uses(
    t: &Targets,
    who: impl Fn(&str) -> bool,
) -> Vec<vk::ImageMemoryBarrier2<'static>> {
    let depth_attachment = (TESTS, DS_RW);
    let color_attachment = (CAO, A::COLOR_ATTACHMENT_WRITE);
    let mut list: Vec<(&str, &StImage, L, Scope)> = vec![
        (
            "msaa depth",
            &t.msaa_depth,
            L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
            depth_attachment,
        ),
        // Blended: the layer is read as well as written.
        (
            "msaa color",
            &t.msaa_color,
            L::COLOR_ATTACHMENT_OPTIMAL,
            (CAO, COLOR_RW),
        ),
        // The resolve writes it at COLOR_ATTACHMENT_OUTPUT.
        (
            "transparent",
            &t.transparent,
            L::COLOR_ATTACHMENT_OPTIMAL,
            color_attachment,
        ),
        (
            "albedo",
            &t.albedo,
            L::COLOR_ATTACHMENT_OPTIMAL,
            color_attachment,
        ),
        (
            "normal",
            &t.normal,
            L::COLOR_ATTACHMENT_OPTIMAL,
            color_attachment,
        ),
        (
            "depth",
            &t.depth,
            L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
            depth_attachment,
        ),
        (
            "shadow",
            &t.shadow,
            L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
            depth_attachment,
        ),
        ("ssao raw", &t.ssao_raw, L::GENERAL, STORAGE_WRITE),
        ("ssao", &t.ssao, L::GENERAL, STORAGE_WRITE),
        ("hdr", &t.hdr, L::GENERAL, STORAGE_WRITE),
        // Written whole by the tonemap (its old contents are last frame's).
        ("output", &t.output, L::GENERAL, STORAGE_WRITE),
    ];
    for img in t.down.iter().chain(&t.up) {
        list.push(("bloom", img, L::GENERAL, STORAGE_WRITE));
    }
    list.into_iter()
        .filter(|(name, ..)| who(name))
        .map(|(_, img, layout, dst)| image(img, L::UNDEFINED, layout, NOTHING, dst))
        .collect()
}

/// Where an attachment's views are, by target.
pub struct Views {
    pub shadow: vk::ImageView,
    pub depth: vk::ImageView,
    pub albedo: vk::ImageView,
    pub normal: vk::ImageView,
    pub msaa_depth: vk::ImageView,
    pub msaa_color: vk::ImageView,
    pub transparent: vk::ImageView,
    pub output: vk::ImageView,
}

impl Views {
    pub fn all(&self) -> [vk::ImageView; 8] {
        [
            self.shadow,
            self.depth,
            self.albedo,
            self.normal,
            self.msaa_depth,
            self.msaa_color,
            self.transparent,
            self.output,
        ]
    }
}

/// What the raster passes draw with.
pub struct Raster<'a> {
    pub dev: &'a ash::Device,
    pub pipelines: &'a Pipelines,
    pub scene: &'a Scene,
    pub multi_draw: bool,
    /// The raster passes (by name) that draw nothing (the sample's `--skip`).
    pub skip: &'a [String],
}

fn clear_color(view: vk::ImageView) -> vk::RenderingAttachmentInfo<'static> {
    vk::RenderingAttachmentInfo::default()
        .image_view(view)
        .image_layout(L::COLOR_ATTACHMENT_OPTIMAL)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .clear_value(vk::ClearValue {
            color: vk::ClearColorValue { float32: [0.0; 4] },
        })
}

fn clear_depth(view: vk::ImageView) -> vk::RenderingAttachmentInfo<'static> {
    vk::RenderingAttachmentInfo::default()
        .image_view(view)
        .image_layout(L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .clear_value(vk::ClearValue {
            depth_stencil: vk::ClearDepthStencilValue {
                depth: 1.0,
                stencil: 0,
            },
        })
}

impl Raster<'_> {
    fn on(&self, pass: &str) -> bool {
        !self.skip.iter().any(|s| s == pass)
    }

    /// Begins a rendering over all of `[w, h]`, sets the viewport and scissor to it (as the
    /// stock `Render` pass does), runs `draw` unless `pass` is skipped, and ends it.
    ///
    /// # Safety
    ///
    /// `cmd` is recording; the attachments are in the layouts they name, with the accesses
    /// made visible; what `draw` records is valid inside this rendering.
    unsafe fn render(
        &self,
        cmd: vk::CommandBuffer,
        pass: &str,
        [width, height]: [u32; 2],
        colors: &[vk::RenderingAttachmentInfo<'_>],
        depth: vk::RenderingAttachmentInfo<'_>,
        draw: impl FnOnce(),
    ) {
        let area = vk::Rect2D {
            offset: vk::Offset2D::default(),
            extent: vk::Extent2D { width, height },
        };
        let mut info = vk::RenderingInfo::default()
            .render_area(area)
            .layer_count(1)
            .color_attachments(colors);
        if depth.image_view != vk::ImageView::null() {
            info = info.depth_attachment(&depth);
        }
        let viewport = vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: width as f32,
            height: height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        // SAFETY: the caller's promise.
        unsafe {
            self.dev.cmd_begin_rendering(cmd, &info);
            self.dev.cmd_set_viewport(cmd, 0, &[viewport]);
            self.dev.cmd_set_scissor(cmd, 0, &[area]);
            if self.on(pass) {
                draw();
            }
            self.dev.cmd_end_rendering(cmd);
        }
    }

    /// The opaque scene's depth at 4 samples, from the culled draws in `t.draws`.
    ///
    /// # Safety
    ///
    /// `cmd` is recording on the graphics queue; `msaa_depth` is in
    /// `DEPTH_STENCIL_ATTACHMENT_OPTIMAL`, the culling's draws visible to `DRAW_INDIRECT`,
    /// the scene's buffers to the vertex stages.
    pub unsafe fn forward_depth(&self, cmd: vk::CommandBuffer, t: &Targets, v: &Views) {
        let (p, full) = (self.pipelines, size(&t.depth));
        let draws = t.draws.handle();
        // SAFETY: the caller's promise; the pipeline is made for a D32 4-sample target.
        unsafe {
            self.render(
                cmd,
                "forward depth",
                full,
                &[],
                clear_depth(v.msaa_depth),
                || {
                    draw::culled(
                        self.dev,
                        cmd,
                        p,
                        self.scene,
                        p.forward_depth,
                        draws,
                        full,
                        self.multi_draw,
                    )
                },
            )
        }
    }

    /// The glass, blended into the multisampled layer (cleared, not stored) over the read-only
    /// depth, and resolved into `t.transparent`.
    ///
    /// # Safety
    ///
    /// As [`Raster::forward_depth`]; `msaa_depth` in `DEPTH_STENCIL_READ_ONLY_OPTIMAL`,
    /// `msaa_color` and `transparent` in `COLOR_ATTACHMENT_OPTIMAL`.
    pub unsafe fn transparent(&self, cmd: vk::CommandBuffer, t: &Targets, v: &Views) {
        let full = size(&t.depth);
        let color = clear_color(v.msaa_color)
            .store_op(vk::AttachmentStoreOp::DONT_CARE)
            .resolve_mode(vk::ResolveModeFlags::AVERAGE)
            .resolve_image_view(v.transparent)
            .resolve_image_layout(L::COLOR_ATTACHMENT_OPTIMAL);
        // Tested only: loaded, never written, so not stored either (store op NONE).
        let depth = vk::RenderingAttachmentInfo::default()
            .image_view(v.msaa_depth)
            .image_layout(L::DEPTH_STENCIL_READ_ONLY_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::LOAD)
            .store_op(vk::AttachmentStoreOp::NONE);
        // SAFETY: the caller's promise.
        unsafe {
            self.render(cmd, "transparent", full, &[color], depth, || {
                draw::transparent(self.dev, cmd, self.pipelines, self.scene, full)
            })
        }
    }

    /// Albedo, normal and depth from the culled draws.
    ///
    /// # Safety
    ///
    /// As [`Raster::forward_depth`], with the G-buffer's targets in attachment layouts.
    pub unsafe fn gbuffer(&self, cmd: vk::CommandBuffer, t: &Targets, v: &Views) {
        let (p, full) = (self.pipelines, size(&t.depth));
        let draws = t.draws.handle();
        let colors = [clear_color(v.albedo), clear_color(v.normal)];
        // SAFETY: the caller's promise.
        unsafe {
            self.render(cmd, "gbuffer", full, &colors, clear_depth(v.depth), || {
                draw::culled(
                    self.dev,
                    cmd,
                    p,
                    self.scene,
                    p.gbuffer,
                    draws,
                    full,
                    self.multi_draw,
                )
            })
        }
    }

    /// The sun's shadow map.
    ///
    /// # Safety
    ///
    /// `cmd` is recording on the graphics queue; the shadow map is in
    /// `DEPTH_STENCIL_ATTACHMENT_OPTIMAL`; the scene's buffers are visible to the vertex stages.
    pub unsafe fn shadow(&self, cmd: vk::CommandBuffer, t: &Targets, v: &Views) {
        let s = size(&t.shadow);
        // SAFETY: the caller's promise.
        unsafe {
            self.render(cmd, "shadow map", s, &[], clear_depth(v.shadow), || {
                draw::shadow(self.dev, cmd, self.pipelines, self.scene, s)
            })
        }
    }

    /// The UI over the output (loaded, blended, stored).
    ///
    /// # Safety
    ///
    /// `cmd` is recording on the graphics queue; the output is in `COLOR_ATTACHMENT_OPTIMAL`
    /// with the tonemap's writes visible to the blending's reads.
    pub unsafe fn ui(&self, cmd: vk::CommandBuffer, t: &Targets, v: &Views) {
        let full = size(&t.output);
        let color = clear_color(v.output).load_op(vk::AttachmentLoadOp::LOAD);
        let none = vk::RenderingAttachmentInfo::default();
        // SAFETY: the caller's promise.
        unsafe {
            self.render(cmd, "ui", full, &[color], none, || {
                draw::ui(self.dev, cmd, self.pipelines, full)
            })
        }
    }
}

/// A compute pass of the frame: its dispatch with the descriptor set written once (the targets
/// of a set never change).
pub struct Compute {
    pub dispatch: Dispatch,
    pub set: WrittenSet,
}

impl Compute {
    /// Writes frame number `n` into the set's word, before the slot's frame records.
    pub fn set_frame(&mut self, n: u32) -> vk_baton::Result<()> {
        self.dispatch.frame = n;
        self.dispatch.write_frame(self.set)
    }

    /// # Safety
    ///
    /// As [`Dispatch::dispatch`].
    pub unsafe fn record(&self, dev: &ash::Device, cmd: vk::CommandBuffer) {
        // SAFETY: the caller's promise.
        unsafe { self.dispatch.dispatch(dev, cmd, self.set) };
    }
}
